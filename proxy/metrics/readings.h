// What the app hands the metrics module on each scrape: plain values, copied out of the workers'
// snapshots and the app's own state. The metrics module only reads these; it keeps no counters of
// its own, so a scrape never touches the data path (docs/architecture.md §11).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stats/latency_histogram.h"
#include "stats/snapshot.h"

namespace sw::metrics {

// A bucket's state in the directory (mirrors router::BucketState; exported lower-cased).
enum class BucketState : uint8_t { Active, Migrating };
constexpr size_t kBucketStates = 2;
std::string_view bucket_state_name(BucketState state);  // "active" | "migrating"

// A migration's state (docs/architecture.md §8.2). Every state is exported, 0 when no migration is in it.
enum class MigrationState : uint8_t {
  Planned,
  Copying,
  CatchingUp,
  CuttingOver,
  RollbackWindow,
  Cleaning,
  Done,
  Failed,
  Cancelled,
  RolledBack,
};
constexpr size_t kMigrationStates = 10;
std::string_view migration_state_name(MigrationState state);  // "planned" ... "rolled_back"

// How many buckets one shard holds in one state.
struct BucketCount {
  std::string shard;
  BucketState state = BucketState::Active;
  uint64_t count = 0;
};

struct DirectoryReadings {
  uint64_t version = 0;
  double age_seconds = 0;            // since the directory was last confirmed from the catalog
  bool lease_valid = false;          // false: the proxy refuses to route (57P03)
  std::vector<BucketCount> buckets;  // (shard, state) pairs not listed are exported as 0
};

struct ParseCacheReadings {
  uint64_t hits = 0;
  uint64_t misses = 0;
};

struct ReloadReadings {
  uint64_t ok = 0;
  uint64_t failed = 0;
};

// The progress of the rebalance under way (catalog_rows/migration_progress.h), from the catalog: every
// process's migrations. All zero when none is under way.
struct RebalanceReadings {
  uint64_t migrations = 0;
  uint64_t copied_rows = 0, rows = 0, copied_bytes = 0, bytes = 0;
  double rows_per_second = 0, bytes_per_second = 0;
  double eta_seconds = 0;  // NaN while a rebalance is under way and its rate is not known yet
};

// The bucket mover's figures; all zero without a catalog (no mover runs). Counters are over every
// migration this process has run; lag is the largest among its running streams (0 if none);
// `migrations` and the rollback window come from the catalog, so they cover every process's
// migrations; queued_writes counts this process's writes held behind a cutover.
struct MoverReadings {
  uint64_t copied_rows = 0;
  uint64_t copied_bytes = 0;
  uint64_t applied_changes = 0;
  uint64_t lag_bytes = 0;
  double lag_seconds = 0;
  uint64_t verify_mismatches = 0;
  stats::LatencyHistogram cutover_pause;  // one observation per cutover: writes paused
  uint64_t queued_writes = 0;             // writes queued right now behind a cutover
  uint64_t drain_aborts = 0;              // cutovers aborted because the drain timed out
  uint64_t stream_errors = 0;
  uint64_t drain_terminations = 0;  // backends ended by cutover.drain_action = terminate // catch-up/reverse
                                    // stream failures (retried)
  std::array<uint64_t, kMigrationStates> migrations{};  // by MigrationState
  double rollback_window_remaining_seconds = 0;         // 0 when no window is open
  RebalanceReadings rebalance;
};

// Two-phase recovery (docs/architecture.md §7.8); all zero without a catalog.
struct TwoPhaseReadings {
  uint64_t recovered_commit = 0;
  uint64_t recovered_abort = 0;
  int64_t in_doubt = 0;  // after the last round this instance ran
};

struct Readings {
  // Merged over workers; clients/servers lists are not needed (leave them empty). Pools are
  // summed per shard over users. traffic.client_bytes_* must already include open connections'
  // bytes if the app wants them counted; they are exported as given.
  stats::Snapshot snapshot;
  // Every configured shard, in config order: per-shard series exist for each even with no traffic.
  // Shards seen only in pools or buckets (e.g. just removed by a reload) are exported too.
  std::vector<std::string> shards;
  DirectoryReadings directory;
  ParseCacheReadings parse_cache;
  ReloadReadings reloads;
  MoverReadings mover;
  TwoPhaseReadings two_phase;
};

}  // namespace sw::metrics
