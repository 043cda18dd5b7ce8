#include "metrics/metric_list.h"

#ifndef SHARDWIRE_VERSION
#define SHARDWIRE_VERSION "unknown"
#endif

namespace sw::metrics {
namespace {

using prometheus::MetricType;
constexpr MetricType kCounter = MetricType::Counter;
constexpr MetricType kGauge = MetricType::Gauge;
constexpr MetricType kHistogram = MetricType::Histogram;

// Label values are bounded by construction: states, route kinds, login results and SQLSTATE
// classes are fixed sets; shards are the configured ones. Never SQL, addresses or user names.
constexpr MetricDef kMetrics[] = {
    {Id::ClientConnections,
     "shardwire_client_connections",
     kGauge,
     "Client connections by state (login, idle, active, waiting).",
     {"state"}},
    {Id::ClientLogins,
     "shardwire_client_logins_total",
     kCounter,
     "Client login attempts by result.",
     {"result"}},
    {Id::ServerConnections,
     "shardwire_server_connections",
     kGauge,
     "Server connections by shard and state (login, idle, active).",
     {"shard", "state"}},
    {Id::PoolWaitingClients,
     "shardwire_pool_waiting_clients",
     kGauge,
     "Clients waiting for a server connection of this shard.",
     {"shard"}},
    {Id::PoolPinnedClients,
     "shardwire_pool_pinned_clients",
     kGauge,
     "Clients kept on their server of this shard until they disconnect (transaction pooling: a temporary "
     "table, LISTEN, ...).",
     {"shard"}},
    {Id::PoolMaxWaitSeconds,
     "shardwire_pool_max_wait_seconds",
     kGauge,
     "Longest current wait of a client for a server connection of this shard.",
     {"shard"}},
    {Id::Queries,
     "shardwire_queries_total",
     kCounter,
     "Queries sent to servers, by shard and route kind.",
     {"shard", "route"}},
    {Id::Transactions,
     "shardwire_transactions_total",
     kCounter,
     "Transactions run on servers, by shard and route kind.",
     {"shard", "route"}},
    {Id::QueryDuration,
     "shardwire_query_duration_seconds",
     kHistogram,
     "Time from a client request to its last response, by route kind.",
     {"route"}},
    {Id::BackendErrors,
     "shardwire_backend_errors_total",
     kCounter,
     "Errors returned by servers, by SQLSTATE class.",
     {"class"}},
    {Id::ClientReceivedBytes, "shardwire_client_received_bytes_total", kCounter,
     "Bytes received from clients."},
    {Id::ClientSentBytes, "shardwire_client_sent_bytes_total", kCounter, "Bytes sent to clients."},
    {Id::ServerReceivedBytes,
     "shardwire_server_received_bytes_total",
     kCounter,
     "Bytes received from servers of this shard.",
     {"shard"}},
    {Id::ServerSentBytes,
     "shardwire_server_sent_bytes_total",
     kCounter,
     "Bytes sent to servers of this shard.",
     {"shard"}},
    {Id::ParseCacheHits, "shardwire_parse_cache_hits_total", kCounter,
     "Statements whose analysis came from the parse cache."},
    {Id::ParseCacheMisses, "shardwire_parse_cache_misses_total", kCounter,
     "Statements parsed because the parse cache did not have them."},
    {Id::MergedReads,
     "shardwire_merged_reads_total",
     kCounter,
     "Reads that span shards merged by the proxy, by merge step (concat, merge_sort, aggregate).",
     {"plan"}},
    {Id::MergedRows,
     "shardwire_merged_rows_total",
     kCounter,
     "Rows through merges: from the shards (in) and to the clients (out).",
     {"direction"}},
    {Id::DirectoryVersion, "shardwire_directory_version", kGauge,
     "Version of the bucket directory this proxy routes with."},
    {Id::DirectoryAge, "shardwire_directory_age_seconds", kGauge,
     "Seconds since the bucket directory was last confirmed from the catalog."},
    {Id::DirectoryLeaseValid, "shardwire_directory_lease_valid", kGauge,
     "1 if the directory lease is valid (the proxy routes), 0 if not."},
    {Id::Buckets,
     "shardwire_buckets",
     kGauge,
     "Buckets by owning shard and state (active, migrating).",
     {"shard", "state"}},
    {Id::ConfigReloads,
     "shardwire_config_reloads_total",
     kCounter,
     "Configuration reloads by result (ok, failed).",
     {"result"}},
    {Id::BuildInfo,
     "shardwire_build_info",
     kGauge,
     "Always 1; the version label says which shardwire is running.",
     {"version"}},
    {Id::MoverCopiedRows, "shardwire_mover_copied_rows_total", kCounter, "Rows copied by bucket migrations."},
    {Id::MoverCopiedBytes, "shardwire_mover_copied_bytes_total", kCounter,
     "Bytes copied by bucket migrations."},
    {Id::MoverAppliedChanges, "shardwire_mover_applied_changes_total", kCounter,
     "Logical replication changes applied by bucket migrations."},
    {Id::MoverLagBytes, "shardwire_mover_lag_bytes", kGauge,
     "Replication lag of the migration catching up, in WAL bytes."},
    {Id::MoverLagSeconds, "shardwire_mover_lag_seconds", kGauge,
     "Replication lag of the migration catching up, in seconds."},
    {Id::MoverVerifyMismatches, "shardwire_mover_verify_mismatches_total", kCounter,
     "Rows that differed between source and target when verifying a migration."},
    {Id::CutoverPause, "shardwire_cutover_pause_seconds", kHistogram,
     "How long writes to migrating buckets were paused at cutover."},
    {Id::CutoverQueuedWrites, "shardwire_cutover_queued_writes", kGauge,
     "Writes queued behind a cutover right now."},
    {Id::CutoverDrainAborts, "shardwire_cutover_drain_aborts_total", kCounter,
     "Cutovers aborted because in-flight writes did not drain in time."},
    {Id::CutoverDrainTerminations, "shardwire_cutover_drain_terminations_total", kCounter,
     "Source backends ended by cutover.drain_action = terminate because their transactions outlived "
     "cutover.drain_timeout."},
    {Id::MoverStreamErrors, "shardwire_mover_stream_errors_total", kCounter,
     "Catch-up and reverse streams that failed to apply a change or lost a connection (each retried with "
     "backoff)."},
    {Id::Migrations, "shardwire_migrations", kGauge, "Bucket migrations by state.", {"state"}},
    {Id::RollbackWindowRemaining, "shardwire_rollback_window_remaining_seconds", kGauge,
     "Seconds left in the open rollback window, 0 when none is open."},
    {Id::RebalanceMigrations, "shardwire_rebalance_migrations", kGauge,
     "Migrations of the rebalance under way (from the oldest unfinished one on, abandoned ones left out); 0 "
     "when none is."},
    {Id::RebalanceCopiedRows, "shardwire_rebalance_copied_rows", kGauge,
     "Rows the rebalance under way has copied so far."},
    {Id::RebalanceRows, "shardwire_rebalance_rows", kGauge,
     "Rows the rebalance under way copies in all (planned migrations estimated from the rows per bucket of "
     "the started ones)."},
    {Id::RebalanceCopiedBytes, "shardwire_rebalance_copied_bytes", kGauge,
     "Bytes the rebalance under way has copied so far."},
    {Id::RebalanceBytes, "shardwire_rebalance_bytes", kGauge,
     "Bytes the rebalance under way copies in all (estimated from the copied rows' mean size)."},
    {Id::RebalanceRowsPerSecond, "shardwire_rebalance_rows_per_second", kGauge,
     "Copy rate of the rebalance under way: the copying migrations' rates summed (each its mean since it "
     "started)."},
    {Id::RebalanceBytesPerSecond, "shardwire_rebalance_bytes_per_second", kGauge,
     "Copy rate of the rebalance under way in bytes per second."},
    {Id::RebalanceEta, "shardwire_rebalance_eta_seconds", kGauge,
     "Estimated seconds until the rebalance under way has copied everything (its remaining rows at its "
     "rate); NaN while the rate is not known yet, 0 when no rebalance is under way."},
    {Id::CrossShardTransactions,
     "shardwire_cross_shard_transactions_total",
     kCounter,
     "COMMITs of transactions that held legs on several shards, by outcome (one_phase: at most one shard "
     "written; two_phase_committed: committed by two-phase commit; rolled_back; unknown: the decision could "
     "not be "
     "recorded, the client got 08007).",
     {"outcome"}},
    {Id::TwoPhaseCommitDuration, "shardwire_two_phase_commit_seconds", kHistogram,
     "Two-phase commits that committed: from the client's COMMIT to its answer."},
    {Id::TwoPhaseRecovered,
     "shardwire_two_phase_recovered_total",
     kCounter,
     "Prepared transactions (one per shard) this instance's two-phase recovery committed or rolled back, by "
     "decision (commit, abort).",
     {"decision"}},
    {Id::TwoPhaseInDoubt, "shardwire_two_phase_in_doubt", kGauge,
     "Two-phase transactions (one per shard) still prepared after the last recovery round; 0 on instances "
     "that do not hold the recovery lock."},
    // Process metrics as the Prometheus client libraries define them (read from /proc/self).
    {Id::ProcessCpuSeconds, "process_cpu_seconds_total", kCounter,
     "Total user and system CPU time spent in seconds."},
    {Id::ProcessResidentMemory, "process_resident_memory_bytes", kGauge, "Resident memory size in bytes."},
    {Id::ProcessVirtualMemory, "process_virtual_memory_bytes", kGauge, "Virtual memory size in bytes."},
    {Id::ProcessOpenFds, "process_open_fds", kGauge, "Number of open file descriptors."},
    {Id::ProcessMaxFds, "process_max_fds", kGauge, "Maximum number of open file descriptors."},
    {Id::ProcessStartTime, "process_start_time_seconds", kGauge,
     "Start time of the process since unix epoch in seconds."},
};

constexpr bool ids_in_order() {
  for (size_t i = 0; i < std::size(kMetrics); ++i) {
    if (static_cast<size_t>(kMetrics[i].id) != i) return false;
  }
  return std::size(kMetrics) == kMetricCount;
}
static_assert(ids_in_order(), "kMetrics must list every Id once, in enum order");

}  // namespace

std::span<const MetricDef> all_metrics() { return kMetrics; }

const MetricDef& metric_def(Id id) { return kMetrics[static_cast<size_t>(id)]; }

std::string_view build_version() { return SHARDWIRE_VERSION; }

}  // namespace sw::metrics
