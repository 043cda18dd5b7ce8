// The mover of one shardwire process: a thread that watches the catalog for unfinished
// migrations and runs them, each on a MigrationRunner thread: up to mover.max_concurrent that
// copy, stream or cut over (catalog_rows::holds_mover_slot), and every one in its rollback window or
// cleanup (each holds a reverse stream: one walsender on its target). mover.max_concurrent = 0:
// none (the instance routes only).
// It polls over one catalog session kept open across polls (opened again only after it failed,
// closed by stop()), application_name "shardwire mover".
// Several processes may share a catalog; a per-migration advisory lock makes each migration run
// in exactly one of them, and a process that dies releases its migrations to the others (or to
// itself after a restart).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/pq_handle.h"
#include "catalog_rows/migration.h"
#include "catalog_rows/migration_progress.h"
#include "config/config.h"
#include "mover/mover_counters.h"

namespace sw::mover {

class MigrationRunner;

struct MoverSnapshot {
  uint64_t copied_rows = 0, copied_bytes = 0, applied_changes = 0, verify_mismatches = 0, drain_aborts = 0;
  uint64_t stream_errors = 0, drain_terminations = 0;
  uint64_t lag_bytes = 0;  // the largest of the running migrations
  double lag_seconds = 0;
  stats::LatencyHistogram cutover_pause;
  std::array<uint64_t, catalog_rows::kMigrationStates> migrations{};  // by state, from the last catalog poll
  double rollback_window_remaining_seconds = 0;  // the soonest window to close; 0 when none is open
  catalog_rows::RebalanceProgress rebalance;     // from the last catalog poll
};

class MoverService {
 public:
  explicit MoverService(std::shared_ptr<const config::Config> config);
  ~MoverService();  // stop()
  void start();
  void stop();
  void update_config(std::shared_ptr<const config::Config> config);
  // A console command changed the migrations: look now instead of at the next poll.
  void wake();
  MoverSnapshot snapshot() const;

 private:
  void run();
  void poll();
  // The poll thread's catalog session: the open one, or a new one; null (logged) when the
  // catalog cannot be reached.
  PGconn* catalog_session(const std::string& dsn);

  mutable std::mutex mutex_;
  std::condition_variable wakeup_;
  bool woken_ = false;
  std::shared_ptr<const config::Config> config_;
  MoverCounters counters_;
  std::map<int64_t, std::unique_ptr<MigrationRunner>> runners_;
  std::array<uint64_t, catalog_rows::kMigrationStates> states_{};
  double window_remaining_ = 0;
  catalog_rows::RebalanceProgress rebalance_;
  std::atomic<bool> stopping_{false};
  catalog::PgConnPtr catalog_;  // used by the poll thread only
  std::string catalog_dsn_;     // the DSN catalog_ was opened with
  std::thread thread_;
};

}  // namespace sw::mover
