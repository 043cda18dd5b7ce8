// Console: the mover's commands. Each checks that a catalog exists, hands the work to the host
// (catalog I/O happens off the event loop) and renders the answer.
#include "admin/console.h"
#include "admin/tables.h"

namespace sw::admin {
namespace {

using Reply = std::function<void(std::string)>;

std::string failure(const Status& status) { return error(status.sqlstate, status.message); }

catalog_rows::MigrationRequest request_of(Verb verb) {
  switch (verb) {
    case Verb::PauseMigration: return catalog_rows::MigrationRequest::Pause;
    case Verb::ResumeMigration: return catalog_rows::MigrationRequest::Resume;
    case Verb::CancelMigration: return catalog_rows::MigrationRequest::Cancel;
    case Verb::RollbackMigration: return catalog_rows::MigrationRequest::Rollback;
    default: return catalog_rows::MigrationRequest::ExpireRollback;
  }
}

const char* tag_of(Verb verb) {
  switch (verb) {
    case Verb::PauseMigration: return "PAUSE MIGRATION";
    case Verb::ResumeMigration: return "RESUME MIGRATION";
    case Verb::CancelMigration: return "CANCEL MIGRATION";
    case Verb::RollbackMigration: return "ROLLBACK MIGRATION";
    default: return "EXPIRE ROLLBACK";
  }
}

}  // namespace

void Console::mover(const Command& command, const Reply& reply) {
  if (host_.config()->catalog.dsn.empty()) {
    reply(error("55000", "the mover needs a catalog (catalog.dsn): without one the directory is static"));
    return;
  }
  switch (command.verb) {
    case Verb::ShowMigrations:
      host_.list_migrations([reply, slots = host_.config()->mover.max_concurrent](
                                Result<std::vector<catalog_rows::Migration>> migrations) {
        reply(migrations ? migrations_table(*migrations, slots).encode() : failure(migrations.status()));
      });
      return;
    case Verb::ShowRebalance:
      host_.list_migrations([reply](Result<std::vector<catalog_rows::Migration>> migrations) {
        reply(migrations ? rebalance_progress_table(*migrations).encode() : failure(migrations.status()));
      });
      return;
    case Verb::MoveBuckets:
      host_.move_buckets(command.argument, command.shard,
                         [reply](Result<std::vector<PlannedMigration>> started) {
                           reply(started ? rebalance_table(*started).encode() : failure(started.status()));
                         });
      return;
    case Verb::Rebalance:
      host_.rebalance(command.shards, command.by_buckets, command.dry_run,
                      [reply](Result<std::vector<PlannedMigration>> plan) {
                        reply(plan ? rebalance_table(*plan).encode() : failure(plan.status()));
                      });
      return;
    case Verb::VerifyBucket:
      host_.verify_bucket(
          static_cast<uint32_t>(command.number),
          [reply, bucket = static_cast<uint32_t>(command.number)](Result<std::vector<BucketCheck>> checks) {
            reply(checks ? verify_table(bucket, *checks).encode() : failure(checks.status()));
          });
      return;
    case Verb::VerifyReference:
      host_.verify_reference(command.argument, [reply](Result<std::vector<ReferenceCheck>> checks) {
        reply(checks ? verify_reference_table(*checks).encode() : failure(checks.status()));
      });
      return;
    default:
      host_.request_migration(command.number, request_of(command.verb),
                              [reply, verb = command.verb](const Status& status) {
                                reply(status ? command_complete(tag_of(verb)) : failure(status));
                              });
      return;
  }
}

}  // namespace sw::admin
