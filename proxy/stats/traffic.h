// Counters the data path updates on its worker's thread. Plain integers: a worker never shares
// them; snapshots copy them on that thread (see snapshot.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "stats/latency_histogram.h"

namespace sw::stats {

// How a request was routed (a bounded label set; the router's kinds that reach a server).
enum class RouteLabel : uint8_t { Shard, Default, Scatter, AllShards };
constexpr size_t kRouteLabels = 4;
std::string_view route_label_name(RouteLabel label);

// The merge step of a read that spans shards (merge::MergeKind, in its order).
constexpr size_t kMergeKinds = 3;
constexpr std::string_view kMergeKindNames[kMergeKinds] = {"concat", "merge_sort", "aggregate"};

// Outcome of a client login.
enum class LoginResult : uint8_t { Ok, BadCredentials, NotAllowed, Error };
constexpr size_t kLoginResults = 4;
std::string_view login_result_name(LoginResult result);

// How a transaction that held legs on several shards ended (twopc/two_phase_commit.h).
enum class CrossShardOutcome : uint8_t {
  OnePhase,           // committed with plain COMMITs: at most one shard written
  TwoPhaseCommitted,  // committed by two-phase commit
  RolledBack,         // a two-phase commit rolled back (a leg failed, or recovery decided abort)
  Unknown,            // a two-phase commit whose decision could not be recorded (client got 08007)
};
constexpr size_t kCrossShardOutcomes = 4;
std::string_view cross_shard_outcome_name(CrossShardOutcome outcome);

// Work done by one pool (one shard, one login), in pgbouncer's SHOW STATS terms.
struct PoolTraffic {
  std::array<uint64_t, kRouteLabels> queries{};
  std::array<uint64_t, kRouteLabels> transactions{};
  uint64_t query_time_us = 0;
  uint64_t xact_time_us = 0;
  uint64_t wait_time_us = 0;    // clients waiting for a server of this pool
  uint64_t bytes_received = 0;  // client bytes forwarded to this pool's servers
  uint64_t bytes_sent = 0;      // server bytes relayed back

  uint64_t query_count() const;
  uint64_t xact_count() const;
  void merge(const PoolTraffic& other);
};

// Counters of one worker that belong to no single pool.
struct WorkerTraffic {
  std::array<uint64_t, kLoginResults> logins{};
  std::array<LatencyHistogram, kRouteLabels> latency;  // per request, by route
  std::map<std::string, uint64_t> backend_errors;      // by SQLSTATE class (two characters)
  uint64_t client_bytes_received = 0;                  // of closed client connections
  uint64_t client_bytes_sent = 0;
  uint64_t parse_cache_hits = 0;  // the worker thread's statement caches
  uint64_t parse_cache_misses = 0;
  std::array<uint64_t, kMergeKinds> merged_reads{};  // reads that span shards, by merge step
  uint64_t merged_rows_in = 0;                       // rows the shards sent to merges
  uint64_t merged_rows_out = 0;                      // rows merges sent to clients
  // COMMITs of transactions on several shards, by outcome (CrossShardOutcome).
  std::array<uint64_t, kCrossShardOutcomes> cross_shard_commits{};
  // Two-phase commits that committed: from the client's COMMIT to its CommandComplete.
  LatencyHistogram two_phase_commit_latency;

  void count_login(LoginResult result) { ++logins[static_cast<size_t>(result)]; }
  void count_backend_error(std::string_view sqlstate);
  void count_cross_shard_commit(CrossShardOutcome outcome) {
    ++cross_shard_commits[static_cast<size_t>(outcome)];
  }
  void merge(const WorkerTraffic& other);
};

}  // namespace sw::stats
