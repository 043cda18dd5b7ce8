// One migration's state machine (docs/architecture.md §8), on its own thread: copy, catch up, cut over, keep
// the rollback window, clean up. Every step is recorded in the catalog before it is taken and is
// idempotent, so a runner started on a half-done migration (after a crash) resumes it. The
// catalog row's requests (pause, cancel, rollback, expire) are polled between steps.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "catalog/migrations.h"
#include "catalog/pq.h"
#include "config/config.h"
#include "mover/mover_counters.h"
#include "mover/mover_types.h"
#include "mover/verified_buckets.h"

namespace sw::mover {

// Fault injection for the crash tests: the failpoint `mover.<step>` (or `mover.<state>`,
// common/failpoint.h) right after the step was recorded. Unarmed in production.
void crash_point(catalog_rows::MigrationStep step);
void crash_point(catalog_rows::MigrationState state);

class CatchUpStream;
class ReplicationConnection;

class MigrationRunner {
 public:
  MigrationRunner(int64_t id, std::shared_ptr<const config::Config> config, MoverCounters& counters);
  ~MigrationRunner();  // stop()
  MigrationRunner(const MigrationRunner&) = delete;
  MigrationRunner& operator=(const MigrationRunner&) = delete;

  void start();
  void stop();  // asks the thread to end between steps and joins it
  bool finished() const { return finished_.load(); }
  int64_t id() const { return id_; }
  // Current lag of the stream this runner feeds (forward, or reverse in the rollback window).
  uint64_t lag_bytes() const;
  double lag_seconds() const;

 private:
  enum class Outcome { Continue, Wait, Stop };
  void run();
  Status connect();
  Outcome step(catalog_rows::Migration& m);
  // migration_runner.cc
  Status check_schema(const catalog_rows::Migration& m);  // before the copy: no drift between the shards
  Status copy(catalog_rows::Migration& m);
  Status catch_up(catalog_rows::Migration& m);
  Status create_reverse_slot(catalog_rows::Migration& m);
  // live_verify.cc
  bool live_verified(const catalog_rows::Migration& m);
  Result<bool> live_round(PGconn* source, PGconn* target, const catalog_rows::Migration& m);
  Status start_stream(const catalog_rows::Migration& m, bool reverse);
  void stop_stream();
  // cutover.cc
  enum class Cutover { Flipped, Aborted };
  struct CutoverLegs;  // one cutover's two shards and the moved buckets
  // How a phase of the cutover ended: nullopt to go on, else why the cutover is aborted (undone);
  // an error Status stops the cutover as it is (the next pass resumes from the catalog).
  using AbortReason = std::optional<std::string>;
  Result<Cutover> cut_over(catalog_rows::Migration& m, bool reverse);
  Result<AbortReason> stop_writes(CutoverLegs& legs);
  Result<AbortReason> final_catch_up(CutoverLegs& legs);
  Result<AbortReason> verify_and_prepare_target(catalog_rows::Migration& m, CutoverLegs& legs);
  Result<AbortReason> prepare_target(catalog_rows::Migration& m, CutoverLegs& legs, const BucketSet& changed);
  Result<AbortReason> hand_over(CutoverLegs& legs);
  Status record_cutover_step(catalog_rows::MigrationStep step, CutoverLegs& legs);
  Result<bool> drain(PGconn* from, const std::string& fenced_at, const std::string& from_name,
                     std::chrono::milliseconds timeout);
  Status undo_cutover(const catalog_rows::Migration& m, bool reverse);
  Result<bool> flip(const BucketSet& buckets, const std::string& to_name, bool reverse, double pause_ms);
  Status finish_flip(const catalog_rows::Migration& m, bool reverse);
  // migration_end.cc
  Status keep_rollback_window(catalog_rows::Migration& m);
  Status clean(catalog_rows::Migration& m);
  Status finish_rollback(catalog_rows::Migration& m);
  Status cancel(catalog_rows::Migration& m);
  Status record_lag();
  // The running stream's failure (ok when healthy or none runs), shown in the migration's error
  // column while it lasts and cleared once the stream recovers.
  Status note_stream_error(const catalog_rows::Migration& m);
  // Progress bookkeeping in the catalog (step, error text, lag, row totals) is advisory: a failed
  // write is made again by a later pass, and a catalog that stays unreachable fails the pass's
  // next read. Logged at debug level only.
  void bookkeep(const Status& written) const;

  // How the runner reaches a shard; a Config error when the configuration no longer has it.
  Result<std::string> shard_dsn(const std::string& name) const;
  Result<catalog::PgConnPtr> connect_shard(const std::string& name) const;
  Result<std::unique_ptr<ReplicationConnection>> open_replication(const std::string& name) const;
  Result<PGconn*> round_connection(const std::string& name);
  BucketSet bucket_set(const catalog_rows::Migration& m) const;
  std::string slot_name(bool reverse) const;
  bool sleep_for(std::chrono::milliseconds duration);  // false when stopping

  int64_t id_;
  std::shared_ptr<const config::Config> config_;
  MoverCounters& counters_;
  catalog::PgConnPtr catalog_;  // holds the migration's advisory lock while the runner lives
  std::unique_ptr<CatchUpStream> stream_;
  bool stream_reverse_ = false;
  bool forward_slot_dropped_ = false;  // the forward slot is gone (checked once per runner)
  int live_mismatch_rounds_ = 0;
  VerifiedBuckets verified_;  // the moving buckets known equal on both shards, for the running stream
  std::map<std::string, catalog::PgConnPtr> round_connections_;  // by shard name
  uint64_t stream_changes_seen_ = 0;
  uint64_t stream_failures_seen_ = 0;
  bool stream_error_shown_ = false;
  mutable std::mutex stream_mutex_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::chrono::milliseconds backoff_{200};
  std::thread thread_;
};

}  // namespace sw::mover
