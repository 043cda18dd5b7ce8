// TwoPhaseRecovery: every proxy with a catalog runs this background thread (never an event loop).
// Once a period it resolves the two-phase transactions shardwire left prepared on the shards
// (docs/architecture.md §7.8): only while it holds the session advisory lock kRecoveryLockKey on
// the catalog, so one instance of a deployment does it at a time. A round reads the decisions,
// then every configured shard's shardwire gids, and performs plan_recovery()'s plan. A catalog or
// shard that cannot be reached is logged once per outage and tried again next round.
//
// Thread contract: start()/stop() from one owner thread; update_config() and the readings from
// any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "catalog/pq_handle.h"
#include "common/status.h"
#include "config/config.h"
#include "twopc/two_phase_plan.h"

namespace sw::catalog {

// The session advisory lock that elects the resolving instance:
// pg_try_advisory_lock(0x7368617264327063), the key being "shard2pc" in ASCII.
inline constexpr int64_t kRecoveryLockKey = 0x7368617264327063;

struct RecoveryOptions {
  std::chrono::milliseconds period{1000};
  std::chrono::seconds grace = twopc::kPresumedAbortGrace;
  std::chrono::seconds abort_retention = twopc::kAbortRetention;
};

class TwoPhaseRecovery {
 public:
  explicit TwoPhaseRecovery(config::Config config, RecoveryOptions options = {});
  ~TwoPhaseRecovery();  // stop()
  TwoPhaseRecovery(const TwoPhaseRecovery&) = delete;
  TwoPhaseRecovery& operator=(const TwoPhaseRecovery&) = delete;

  void start();  // call once
  void stop();   // wakes, joins, closes the connections (releasing the lock); idempotent

  // A config reload: the next round reads the shards (and DSNs) of `config`; a shard whose DSN
  // changed is reconnected. The catalog DSN keeps the value it started with.
  void update_config(const config::Config& config);

  // Prepared transactions this instance finished, by decision (one per shard leg).
  uint64_t recovered(twopc::TwoPhaseDecision decision) const {
    return decision == twopc::TwoPhaseDecision::Commit ? recovered_commit_.load() : recovered_abort_.load();
  }
  // (gid, shard) pairs still prepared after this instance's last round; 0 while another instance
  // holds the lock (that one reports them).
  int64_t in_doubt() const { return in_doubt_.load(); }
  bool holds_lock() const { return holds_lock_.load(); }
  uint64_t rounds() const { return rounds_.load(); }

 private:
  struct ShardLink {
    std::string dsn;
    PgConnPtr conn;
  };

  void run();
  void round();
  bool ensure_catalog();
  PGconn* shard_connection(const config::Shard& shard);
  std::vector<twopc::ShardPrepared> read_shards(const std::vector<config::Shard>& shards);
  int resolve(const std::string& shard_name, const std::string& gid, twopc::TwoPhaseDecision decision,
              const std::vector<config::Shard>& shards);
  void drop_catalog(const Status& why);
  // Logs `error` for `target` unless it is the outage already logged; ok clears it.
  void note_failure(const std::string& target, const Status& error);
  void note_success(const std::string& target);

  std::string catalog_dsn_;
  RecoveryOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<config::Shard> shards_;  // under mu_
  bool stopping_ = false;              // under mu_
  std::thread thread_;

  std::atomic<uint64_t> recovered_commit_{0};
  std::atomic<uint64_t> recovered_abort_{0};
  std::atomic<int64_t> in_doubt_{0};
  std::atomic<bool> holds_lock_{false};
  std::atomic<uint64_t> rounds_{0};

  // Recovery thread only.
  PgConnPtr catalog_;
  std::map<std::string, ShardLink> links_;      // by shard name
  std::map<std::string, std::string> outages_;  // target -> the error logged for it
};

}  // namespace sw::catalog
