// The catch-up stream of a migration (docs/architecture.md §8.4): one thread that streams pgoutput from the
// migration's slot on the source shard, keeps the changes of the moving buckets and applies them
// to the target shard in source commit order (ChangeApplier), recording progress on the target.
// After an error it reconnects both sides with backoff (100 ms doubling to 5 s) and resumes from
// max(start_lsn, the target's applied_lsn, processed_lsn()); the server itself never resends what
// was reported flushed.
//
// Thread safety: start()/stop() from the owner; every other method from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "mover/mover_types.h"

namespace sw::mover {

struct CatchUpOptions {
  std::string source_dsn, target_dsn, slot, publication;
  int64_t migration_id = 0;
  std::vector<config::ShardedTable> tables;
  BucketSet buckets;
  // The slot's consistent point (the snapshot the copy read): everything before it is on the
  // target already. The stream resumes from max(this, the target's applied_lsn).
  Lsn start_lsn = 0;
  // Standby status updates (written = flushed = applied = processed_lsn()) at least this often.
  std::chrono::milliseconds status_interval{1000};
};

class CatchUpStream {
 public:
  explicit CatchUpStream(CatchUpOptions options);
  ~CatchUpStream();  // stop()
  CatchUpStream(const CatchUpStream&) = delete;
  CatchUpStream& operator=(const CatchUpStream&) = delete;

  void start();  // starts the thread (once; later calls while running do nothing)
  void stop();   // ends the thread within ~0.1 s plus any target statement in flight; joins

  // Every source change with commit end LSN <= processed_lsn() is applied on the target (or was
  // not for a moving bucket). Starts at start_lsn; advances on applied (or skipped) commits and,
  // when no transaction is open, on the wal_end of keepalives and XLogData. Never goes back.
  Lsn processed_lsn() const { return processed_.load(); }

  // Blocks until processed_lsn() >= target (meanwhile asking the server, via reply_requested, for
  // a keepalive every ~100 ms so an idle stream reports its position promptly). False when
  // `timeout` passed first, when the stream is not running, or when it failed during the wait
  // (a cutover then aborts rather than wait out a reconnect).
  // `target` should be pg_current_wal_insert_lsn() of the source read after the writes of
  // interest committed: with synchronous_commit = off, pg_current_wal_lsn() (the WAL write
  // position) can be before a committed transaction's commit record.
  bool wait_until_processed(Lsn target, std::chrono::milliseconds timeout);

  // The owner found the stream close behind the source (it reached the source's current WAL
  // position promptly after being asked, docs/architecture.md §8.4): the backlog of the copy is
  // drained, and transactions that commit on the source from now on are in steady catch-up. Only
  // the first call counts; it returns true.
  bool mark_caught_up();

  uint64_t applied_changes() const { return applied_changes_.load(); }
  // The server's last reported wal_end minus processed_lsn() (0 before the first report).
  uint64_t lag_bytes() const;
  // Now minus the commit time of the oldest transaction received but not yet applied; 0 when
  // there is none.
  double lag_seconds() const;
  // Replication lag as applied: for each source transaction that had changes for the moving
  // buckets, the time from its commit on the source (pgoutput's commit time) to the commit of the
  // target transaction that applied it. Percentiles in milliseconds (0 when there is no sample).
  // `steady`: only the transactions committed on the source after mark_caught_up(), i.e. without
  // the backlog written during the copy and drained after it.
  struct LagSummary {
    size_t transactions = 0;
    double p50_ms = 0, p99_ms = 0, max_ms = 0;
  };
  LagSummary apply_lag(bool steady) const;
  // The part of the steady apply lag spent before the stream had the transaction: from its commit
  // on the source to the arrival of its Commit message (the source's WAL flush, its walsender's
  // decoding and the network), over the same transactions as apply_lag(true).
  LagSummary receive_lag() const;
  // Verification's record (docs/architecture.md §8.5): from open_change_window() on, the stream
  // records the moving buckets that each source transaction it stages for the target may change,
  // before the target commit (a commit that failed, or whose outcome was lost with the
  // connection, is recorded all the same: the record may say more, never less).
  // take_changed_buckets() returns those recorded since the window opened or since the previous
  // take, and starts afresh; a transaction seen by a waiter of wait_until_processed() is in it.
  void open_change_window();
  std::set<uint32_t> take_changed_buckets();
  // The last failure (the thread keeps retrying); ok while healthy: cleared once the stream
  // applies a transaction or moves processed_lsn() past where it failed.
  Status last_error() const;
  // Sessions that ended in an error so far (each one retried after a backoff).
  uint64_t failures() const { return failures_.load(); }

 private:
  class Session;

  void run();
  void advance_processed(Lsn lsn);  // monotonic; wakes waiters
  void record_changed_buckets(const std::vector<uint32_t>& buckets);
  void record_failure(const Status& status);
  // After progress: clears last_error_ when a transaction was applied or processed_ moved past
  // where the failure happened.
  void clear_failure(bool applied_transaction, Lsn reached);

  const CatchUpOptions options_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> running_{false};
  std::atomic<bool> reply_wanted_{false};  // a waiter asks the thread to request a keepalive

  std::atomic<Lsn> processed_{0};
  std::atomic<Lsn> server_wal_end_{0};
  std::atomic<uint64_t> applied_changes_{0};
  std::atomic<int64_t> pending_commit_unix_us_{0};  // 0: no transaction waiting
  std::atomic<uint64_t> failures_{0};               // failures so far (waiters compare)
  std::atomic<bool> has_error_{false};              // last_error_ is set (cheap check on the hot path)

  mutable std::mutex mu_;       // guards last_error_, failed_at_; pairs with cv_
  std::condition_variable cv_;  // processed advanced, a failure, or stop
  Status last_error_;
  Lsn failed_at_ = 0;
  std::vector<uint32_t> lag_samples_us_;          // guarded by mu_; one per applied source transaction
  std::vector<uint32_t> steady_lag_samples_us_;   // guarded by mu_; those after mark_caught_up()
  std::vector<uint32_t> receive_lag_samples_us_;  // guarded by mu_; the steady ones' receive lag
  std::atomic<int64_t> caught_up_at_us_{0};       // the first mark_caught_up() (unix us)
  bool change_window_open_ = false;               // guarded by mu_
  std::set<uint32_t> window_changed_buckets_;     // guarded by mu_
};

}  // namespace sw::mover
