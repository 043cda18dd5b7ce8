// The target side of the catch-up stream (docs/architecture.md §8.4): applies whole source transactions
// to the target shard, one or several consecutive ones together with their progress in one target
// transaction, so a restarted applier neither loses nor double-applies a change. The statements
// run as prepared statements of the connection (parsed and planned once per text). Blocking libpq;
// owned by one thread.
//
// Progress lives on the target in
//   shardwire.mover_progress(migration_id bigint PRIMARY KEY, applied_lsn pg_lsn NOT NULL,
//                            updated_at timestamptz)
// where applied_lsn is the end LSN of the last source commit whose changes were applied.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "catalog/pq.h"
#include "common/status.h"
#include "config/config.h"
#include "mover/mover_types.h"
#include "sqltext/apply_sql.h"
#include "wire/pgoutput.h"

namespace sw::mover {

// The DDL of the progress table (idempotent).
inline constexpr const char* kMoverProgressSql =
    "CREATE SCHEMA IF NOT EXISTS shardwire; "
    "CREATE TABLE IF NOT EXISTS shardwire.mover_progress ("
    "migration_id bigint PRIMARY KEY, applied_lsn pg_lsn NOT NULL, updated_at timestamptz NOT NULL DEFAULT "
    "now())";

// The migration's applied_lsn on `target`: 0 when it has no row (or the table does not exist
// yet). A query error is returned as such, never as 0 (0 would replay applied changes).
Result<Lsn> read_applied_lsn(PGconn* target, int64_t migration_id);

class ChangeApplier {
 public:
  // Connects to the target (application_name shardwire-mover), sets session_replication_role =
  // replica (the fence trigger refuses writes to the moving buckets otherwise) and
  // synchronous_commit = on (the source slot forgets what the target acknowledged), creates
  // shardwire.mover_progress if missing and reads applied_lsn. A key type that bucket_of does not
  // support is a Config error.
  static Result<std::unique_ptr<ChangeApplier>> open(const std::string& target_dsn, int64_t migration_id,
                                                     std::vector<config::ShardedTable> tables,
                                                     BucketSet buckets);

  // End LSN of the last source transaction applied (read at open, then advanced by
  // commit_staged). Transactions without changes for the moving buckets do not advance it.
  Lsn applied_lsn() const { return applied_lsn_; }

  // Applies one source transaction: stage_transaction() then commit_staged(end_lsn).
  Status apply_transaction(const std::vector<wire::pgoutput::Message>& changes,
                           const wire::pgoutput::RelationCache& relations, Lsn end_lsn);

  // Translates one source transaction and adds its statements to the staged target transaction:
  // `changes` are its messages between Begin and Commit, in order; Relation messages among them
  // describe the changes after them, `relations` the ones before the first. Rows outside the
  // buckets and tables not configured are skipped. True when it had rows of the moving buckets
  // (statements were staged). Nothing is sent to the target. On error nothing is staged.
  Result<bool> stage_transaction(const std::vector<wire::pgoutput::Message>& changes,
                                 const wire::pgoutput::RelationCache& relations);

  // Runs the staged statements and the progress row (applied_lsn = end_lsn) in ONE target
  // transaction, in one round trip; consecutive source transactions staged together commit as
  // one. When nothing is staged, nothing is written. end_lsn <= applied_lsn() (a replay after a
  // restart) drops what was staged. On error the target transaction is rolled back, the staged
  // statements are dropped and nothing advances; the caller reconnects (the connection may be
  // unusable). Errors never contain parameter values (data-exception messages, which may quote a
  // value, are reduced to their SQLSTATE).
  Status commit_staged(Lsn end_lsn);
  size_t staged_statements() const { return staged_.size(); }
  // The moving buckets the statements of the last stage_transaction() may change (with repeats).
  const std::vector<uint32_t>& last_staged_buckets() const { return last_staged_buckets_; }

  // Row changes applied so far by this applier (each Insert/Update/Delete/Truncate message that
  // produced statements counts once).
  uint64_t applied_changes() const { return applied_changes_; }

  PGconn* connection() const { return conn_.get(); }

 private:
  ChangeApplier(catalog::PgConnPtr conn, int64_t migration_id, std::vector<config::ShardedTable> tables,
                BucketSet buckets)
      : conn_(std::move(conn)),
        migration_id_(migration_id),
        tables_(std::move(tables)),
        buckets_(std::move(buckets)) {}

  // Larger transactions are sent statement by statement (a long pipeline could fill both socket
  // buffers while neither side reads).
  static constexpr size_t kPipelineLimit = 1000;
  // Distinct statement texts kept prepared on the connection (a text per table, change kind and
  // column set); later ones run unprepared.
  static constexpr size_t kPreparedLimit = 256;
  Status run_in_transaction(const std::vector<sqltext::ApplyStatement>& statements, Lsn end_lsn);
  Status run_pipelined(const std::vector<sqltext::ApplyStatement>& statements, Lsn end_lsn);
  // Prepares the texts of `statements` not prepared yet (one round trip each, outside any
  // transaction; named statements outlive transactions).
  Status prepare_new(const std::vector<sqltext::ApplyStatement>& statements);

  catalog::PgConnPtr conn_;
  int64_t migration_id_ = 0;
  std::vector<config::ShardedTable> tables_;
  BucketSet buckets_;
  Lsn applied_lsn_ = 0;
  uint64_t applied_changes_ = 0;
  std::vector<sqltext::ApplyStatement> staged_;
  uint64_t staged_changes_ = 0;
  std::vector<uint32_t> last_staged_buckets_;
  std::unordered_map<std::string, std::string> prepared_;  // statement text -> its prepared name
};

}  // namespace sw::mover
