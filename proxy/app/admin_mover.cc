// AdminHost: the mover's console commands. Their catalog and shard I/O (mover/console_ops.h) is
// blocking, so it runs on libuv's thread pool; the answer comes back on the admin client's worker
// thread.
#include <map>
#include <memory>

#include "app/admin_host.h"
#include "app/proxy.h"
#include "app/worker.h"
#include "mover/console_ops.h"
#include "mover/planner.h"

namespace sw::app {
namespace {

// Creates one migration per move; the ids go into the plan.
Result<std::vector<admin::PlannedMigration>> start(const config::Config& config,
                                                   std::vector<admin::PlannedMigration> plan) {
  std::vector<mover::PlannedMove> moves;
  moves.reserve(plan.size());
  for (const auto& move : plan) moves.push_back({move.source, move.target, move.buckets});
  auto ids = mover::create_migrations(config, moves);
  if (!ids) return ids.status();
  for (size_t i = 0; i < plan.size(); ++i) plan[i].id = (*ids)[i];
  return plan;
}

// REBALANCE's plan with what each move carries and the spread it should leave.
std::vector<admin::PlannedMigration> rebalance_plan(const router::Directory& directory,
                                                    const std::vector<std::string>& targets, bool by_buckets,
                                                    const mover::BucketSizes& sizes) {
  std::vector<mover::PlannedMove> moves;
  if (by_buckets) {
    std::map<uint32_t, uint64_t> rows;
    for (const auto& [b, size] : sizes) rows[b] = size.rows;
    moves = mover::plan_rebalance(directory, targets, rows);
  } else {
    moves = mover::plan_rebalance_by_data(directory, targets, sizes);
  }
  const std::string spread = mover::describe_spread(mover::loads_after(directory, moves, sizes));
  std::vector<admin::PlannedMigration> plan;
  uint64_t plan_rows = 0, plan_bytes = 0;
  for (auto& move : moves) {
    admin::PlannedMigration migration{move.source, move.target, std::move(move.buckets), 0};
    for (uint32_t b : migration.buckets) {
      if (auto it = sizes.find(b); it != sizes.end()) {
        migration.rows += it->second.rows;
        migration.bytes += it->second.bytes;
      }
    }
    plan_rows += migration.rows;
    plan_bytes += migration.bytes;
    migration.expected_spread = spread;
    plan.push_back(std::move(migration));
  }
  const mover::BucketSize minimum = mover::minimum_to_move(directory, targets, sizes);
  for (auto& migration : plan) {
    migration.plan_rows = plan_rows;
    migration.plan_bytes = plan_bytes;
    if (!by_buckets) {
      migration.minimum_rows = minimum.rows;
      migration.minimum_bytes = minimum.bytes;
    }
  }
  return plan;
}

// The mover reads and writes every shard a plan touches: each must be in this config.
Status all_shards_configured(const router::Directory& directory, const config::Config& config) {
  if (directory.all_configured()) return Status::ok();
  const std::string& name = directory.shard_name(directory.configured_count());
  return Status::config("the catalog directory puts buckets on shard " + name +
                        ", which is not in this instance's configuration: add shard " + name +
                        " to shards in " + config.file + " and RELOAD");
}

}  // namespace

void AdminHost::move_buckets(const std::string& list, const std::string& target,
                             std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Plan = Result<std::vector<admin::PlannedMigration>>;
  off_loop<Plan>(
      [config, directory, list, target]() -> Plan {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (Status known = all_shards_configured(*directory, *config); !known) return known;
        if (config->find_shard(target) == nullptr)
          return Status::client("42704",
                                "shard \"" + target + "\" is not in the configuration; see SHOW SHARDS");
        auto buckets = mover::parse_bucket_list(list, directory->bucket_count());
        if (!buckets) return buckets.status();
        std::map<std::string, admin::PlannedMigration> by_source;
        for (uint32_t b : *buckets) {
          const std::string& owner = directory->shard_name(directory->bucket(b).shard);
          if (owner == target) continue;
          auto& move = by_source[owner];
          move.source = owner;
          move.target = target;
          move.buckets.push_back(b);
        }
        if (by_source.empty())
          return Status::client("22023", "every listed bucket is on " + target + " already");
        std::vector<admin::PlannedMigration> plan;
        plan.reserve(by_source.size());
        for (auto& [source, move] : by_source) plan.push_back(std::move(move));
        return start(*config, std::move(plan));
      },
      [this, done = std::move(done)](Plan plan) {
        if (plan) proxy_.wake_mover();
        done(std::move(plan));
      });
}

void AdminHost::rebalance(const std::vector<std::string>& targets, bool by_buckets, bool dry_run,
                          std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Plan = Result<std::vector<admin::PlannedMigration>>;
  off_loop<Plan>(
      [config, directory, targets, by_buckets, dry_run]() -> Plan {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (Status known = all_shards_configured(*directory, *config); !known) return known;
        for (const auto& name : targets) {
          if (config->find_shard(name) == nullptr)
            return Status::client("42704",
                                  "shard \"" + name + "\" is not in the configuration; see SHOW SHARDS");
        }
        auto sizes = mover::measure_bucket_sizes(*config, *directory);
        if (!sizes) return sizes.status();
        std::vector<admin::PlannedMigration> plan = rebalance_plan(*directory, targets, by_buckets, *sizes);
        if (dry_run) return plan;
        return start(*config, std::move(plan));
      },
      [this, dry_run, done = std::move(done)](Plan plan) {
        if (plan && !dry_run) proxy_.wake_mover();
        done(std::move(plan));
      });
}

void AdminHost::list_migrations(std::function<void(Result<std::vector<catalog_rows::Migration>>)> done) {
  auto config = proxy_.config();
  using List = Result<std::vector<catalog_rows::Migration>>;
  off_loop<List>([config]() -> List { return mover::list_migrations(*config, /*active_only=*/false); },
                 std::move(done));
}

void AdminHost::request_migration(int64_t id, catalog_rows::MigrationRequest request,
                                  std::function<void(Status)> done) {
  auto config = proxy_.config();
  off_loop<Status>(
      [config, id, request]() -> Status { return mover::request_migration(*config, id, request); },
      [this, done = std::move(done)](const Status& status) {
        if (status) proxy_.wake_mover();
        done(status);
      });
}

void AdminHost::verify_bucket(uint32_t bucket,
                              std::function<void(Result<std::vector<admin::BucketCheck>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Checks = Result<std::vector<admin::BucketCheck>>;
  off_loop<Checks>(
      [config, directory, bucket]() -> Checks {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (bucket >= directory->bucket_count())
          return Status::client("22023", "bucket " + std::to_string(bucket) + " does not exist (buckets 0-" +
                                             std::to_string(directory->bucket_count() - 1) + ")");
        auto copies = mover::digest_bucket(*config, *directory, bucket);
        if (!copies) return copies.status();
        std::vector<admin::BucketCheck> checks;
        for (auto& copy : *copies)
          checks.push_back(
              {std::move(copy.shard), std::move(copy.role), copy.rows, std::move(copy.checksum)});
        return checks;
      },
      std::move(done));
}

void AdminHost::verify_reference(const std::string& table,
                                 std::function<void(Result<std::vector<admin::ReferenceCheck>>)> done) {
  auto config = proxy_.config();
  using Checks = Result<std::vector<admin::ReferenceCheck>>;
  off_loop<Checks>(
      [config, table]() -> Checks {
        auto copies = mover::digest_reference(*config, table);
        if (!copies) return copies.status();
        std::vector<admin::ReferenceCheck> checks;
        for (auto& copy : *copies)
          checks.push_back(
              {std::move(copy.shard), copy.exists, copy.rows, std::move(copy.checksum), copy.matches});
        return checks;
      },
      std::move(done));
}

}  // namespace sw::app
