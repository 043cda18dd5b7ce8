// Every metric shardwire exports, declared once: name, type, help and label names. The
// conversion code (families.cc) addresses metrics by Id and takes everything else from here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <prometheus/metric_type.h>

namespace sw::metrics {

enum class Id : uint8_t {
  ClientConnections,
  ClientLogins,
  ServerConnections,
  PoolWaitingClients,
  PoolPinnedClients,
  PoolMaxWaitSeconds,
  Queries,
  Transactions,
  QueryDuration,
  BackendErrors,
  ClientReceivedBytes,
  ClientSentBytes,
  ServerReceivedBytes,
  ServerSentBytes,
  ParseCacheHits,
  ParseCacheMisses,
  MergedReads,
  MergedRows,
  DirectoryVersion,
  DirectoryAge,
  DirectoryLeaseValid,
  Buckets,
  ConfigReloads,
  BuildInfo,
  MoverCopiedRows,
  MoverCopiedBytes,
  MoverAppliedChanges,
  MoverLagBytes,
  MoverLagSeconds,
  MoverVerifyMismatches,
  CutoverPause,
  CutoverQueuedWrites,
  CutoverDrainAborts,
  CutoverDrainTerminations,
  MoverStreamErrors,
  Migrations,
  RollbackWindowRemaining,
  RebalanceMigrations,
  RebalanceCopiedRows,
  RebalanceRows,
  RebalanceCopiedBytes,
  RebalanceBytes,
  RebalanceRowsPerSecond,
  RebalanceBytesPerSecond,
  RebalanceEta,
  CrossShardTransactions,
  TwoPhaseCommitDuration,
  TwoPhaseRecovered,
  TwoPhaseInDoubt,
  ProcessCpuSeconds,
  ProcessResidentMemory,
  ProcessVirtualMemory,
  ProcessOpenFds,
  ProcessMaxFds,
  ProcessStartTime,
};
constexpr size_t kMetricCount = static_cast<size_t>(Id::ProcessStartTime) + 1;

constexpr size_t kMaxLabels = 2;

struct MetricDef {
  Id id;
  std::string_view name;
  prometheus::MetricType type;  // Counter, Gauge or Histogram
  std::string_view help;
  std::array<std::string_view, kMaxLabels> labels{};  // unused slots are empty

  size_t label_count() const {
    size_t n = 0;
    while (n < kMaxLabels && !labels[n].empty()) ++n;
    return n;
  }
};

// The whole table, in exposition order; all_metrics()[i].id == Id(i).
std::span<const MetricDef> all_metrics();
const MetricDef& metric_def(Id id);

// The CMake project version, exported as shardwire_build_info{version}.
std::string_view build_version();

}  // namespace sw::metrics
