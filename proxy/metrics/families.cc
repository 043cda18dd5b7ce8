#include "metrics/families.h"

#include <algorithm>
#include <cassert>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>

#include "metrics/metric_list.h"

namespace sw::metrics {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::initializer_list<std::string_view>;

// One family per metric_list entry; series are added by Id with label values in the order the
// list declares the label names, and the value goes where the declared type says.
class FamilySet {
 public:
  FamilySet() {
    for (const MetricDef& def : all_metrics()) {
      MetricFamily family;
      family.name = std::string(def.name);
      family.help = std::string(def.help);
      family.type = def.type;
      families_.push_back(std::move(family));
    }
  }

  void add(Id id, double value, Labels values = {}) {
    ClientMetric* metric = series(id, values);
    if (metric == nullptr) return;
    switch (metric_def(id).type) {
      case MetricType::Counter: metric->counter.value = value; break;
      case MetricType::Gauge: metric->gauge.value = value; break;
      default: assert(!"add() on a histogram metric"); break;
    }
  }

  // Prometheus buckets are cumulative; the last one is +Inf and equals the count.
  void add_histogram(Id id, const stats::LatencyHistogram& histogram, Labels values = {}) {
    assert(metric_def(id).type == MetricType::Histogram);
    ClientMetric* metric = series(id, values);
    if (metric == nullptr) return;
    uint64_t cumulative = 0;
    const auto& counts = histogram.counts();
    for (size_t i = 0; i < stats::LatencyHistogram::kBounds.size(); ++i) {
      cumulative += counts[i];
      metric->histogram.bucket.push_back({cumulative, stats::LatencyHistogram::kBounds[i]});
    }
    cumulative += counts.back();
    metric->histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    metric->histogram.sample_count = cumulative;
    metric->histogram.sample_sum = histogram.sum_seconds();
  }

  std::vector<MetricFamily> take() { return std::move(families_); }

 private:
  ClientMetric* series(Id id, Labels values) {
    const MetricDef& def = metric_def(id);
    if (values.size() != def.label_count()) {
      assert(!"label values do not match metric_list");
      return nullptr;
    }
    ClientMetric metric;
    size_t i = 0;
    for (std::string_view value : values) {
      metric.label.push_back({std::string(def.labels[i++]), std::string(value)});
    }
    auto& family = families_[static_cast<size_t>(id)];
    family.metric.push_back(std::move(metric));
    return &family.metric.back();
  }

  std::vector<MetricFamily> families_;
};

// Pools summed over users, per shard.
struct ShardTotals {
  uint64_t sv_login = 0, sv_idle = 0, sv_active = 0;
  uint64_t waiting = 0;
  uint64_t pinned = 0;
  uint64_t maxwait_us = 0;
  stats::PoolTraffic traffic;
  std::array<uint64_t, kBucketStates> buckets{};
};

// Configured shards first, in config order, then any other shard the readings mention.
std::vector<std::string> shard_order(const Readings& readings) {
  std::vector<std::string> order;
  auto note = [&](const std::string& shard) {
    for (const auto& known : order) {
      if (known == shard) return;
    }
    order.push_back(shard);
  };
  for (const auto& shard : readings.shards) note(shard);
  for (const auto& pool : readings.snapshot.pools) note(pool.shard);
  for (const auto& count : readings.directory.buckets) note(count.shard);
  return order;
}

std::map<std::string, ShardTotals> shard_totals(const Readings& readings) {
  std::map<std::string, ShardTotals> totals;
  for (const auto& pool : readings.snapshot.pools) {
    ShardTotals& t = totals[pool.shard];
    t.sv_login += static_cast<uint64_t>(std::max(pool.sv_login, 0));
    t.sv_idle += static_cast<uint64_t>(std::max(pool.sv_idle, 0));
    t.sv_active += static_cast<uint64_t>(std::max(pool.sv_active, 0));
    t.waiting += static_cast<uint64_t>(std::max(pool.cl_waiting, 0));
    t.pinned += static_cast<uint64_t>(std::max(pool.cl_pinned, 0));
    t.maxwait_us = std::max(t.maxwait_us, pool.maxwait_us);
    t.traffic.merge(pool.traffic);
  }
  for (const auto& count : readings.directory.buckets) {
    totals[count.shard].buckets[static_cast<size_t>(count.state)] += count.count;
  }
  return totals;
}

double num(uint64_t value) { return static_cast<double>(value); }

void add_clients(FamilySet& set, const Readings& readings) {
  const auto& snapshot = readings.snapshot;
  for (size_t i = 0; i < stats::kClientStates; ++i) {
    set.add(Id::ClientConnections, snapshot.client_states[i],
            {stats::client_state_name(static_cast<stats::ClientState>(i))});
  }
  for (size_t i = 0; i < stats::kLoginResults; ++i) {
    set.add(Id::ClientLogins, num(snapshot.traffic.logins[i]),
            {stats::login_result_name(static_cast<stats::LoginResult>(i))});
  }
  for (size_t i = 0; i < stats::kRouteLabels; ++i) {
    set.add_histogram(Id::QueryDuration, snapshot.traffic.latency[i],
                      {stats::route_label_name(static_cast<stats::RouteLabel>(i))});
  }
  for (const auto& [cls, count] : snapshot.traffic.backend_errors) {
    set.add(Id::BackendErrors, num(count), {cls});
  }
  set.add(Id::ClientReceivedBytes, num(snapshot.traffic.client_bytes_received));
  set.add(Id::ClientSentBytes, num(snapshot.traffic.client_bytes_sent));
}

void add_shards(FamilySet& set, const Readings& readings) {
  std::map<std::string, ShardTotals> totals = shard_totals(readings);
  for (const std::string& shard : shard_order(readings)) {
    const ShardTotals& t = totals[shard];
    set.add(Id::ServerConnections, num(t.sv_login), {shard, "login"});
    set.add(Id::ServerConnections, num(t.sv_idle), {shard, "idle"});
    set.add(Id::ServerConnections, num(t.sv_active), {shard, "active"});
    set.add(Id::PoolWaitingClients, num(t.waiting), {shard});
    set.add(Id::PoolPinnedClients, num(t.pinned), {shard});
    set.add(Id::PoolMaxWaitSeconds, num(t.maxwait_us) / 1e6, {shard});
    for (size_t r = 0; r < stats::kRouteLabels; ++r) {
      std::string_view route = stats::route_label_name(static_cast<stats::RouteLabel>(r));
      set.add(Id::Queries, num(t.traffic.queries[r]), {shard, route});
      set.add(Id::Transactions, num(t.traffic.transactions[r]), {shard, route});
    }
    // PoolTraffic counts from the client's side: bytes_sent are server bytes relayed back
    // (received from the server), bytes_received are client bytes forwarded (sent to it).
    set.add(Id::ServerReceivedBytes, num(t.traffic.bytes_sent), {shard});
    set.add(Id::ServerSentBytes, num(t.traffic.bytes_received), {shard});
    for (size_t s = 0; s < kBucketStates; ++s) {
      std::string_view state = bucket_state_name(static_cast<BucketState>(s));
      set.add(Id::Buckets, num(t.buckets[s]), {shard, state});
    }
  }
}

void add_proxy_state(FamilySet& set, const Readings& readings) {
  set.add(Id::ParseCacheHits, num(readings.parse_cache.hits));
  set.add(Id::ParseCacheMisses, num(readings.parse_cache.misses));
  const auto& traffic = readings.snapshot.traffic;
  for (size_t i = 0; i < stats::kMergeKinds; ++i)
    set.add(Id::MergedReads, num(traffic.merged_reads[i]), {stats::kMergeKindNames[i]});
  set.add(Id::MergedRows, num(traffic.merged_rows_in), {"in"});
  set.add(Id::MergedRows, num(traffic.merged_rows_out), {"out"});
  set.add(Id::DirectoryVersion, num(readings.directory.version));
  set.add(Id::DirectoryAge, readings.directory.age_seconds);
  set.add(Id::DirectoryLeaseValid, readings.directory.lease_valid ? 1 : 0);
  set.add(Id::ConfigReloads, num(readings.reloads.ok), {"ok"});
  set.add(Id::ConfigReloads, num(readings.reloads.failed), {"failed"});
  set.add(Id::BuildInfo, 1, {build_version()});
}

void add_mover(FamilySet& set, const MoverReadings& mover) {
  set.add(Id::MoverCopiedRows, num(mover.copied_rows));
  set.add(Id::MoverCopiedBytes, num(mover.copied_bytes));
  set.add(Id::MoverAppliedChanges, num(mover.applied_changes));
  set.add(Id::MoverLagBytes, num(mover.lag_bytes));
  set.add(Id::MoverLagSeconds, mover.lag_seconds);
  set.add(Id::MoverVerifyMismatches, num(mover.verify_mismatches));
  set.add_histogram(Id::CutoverPause, mover.cutover_pause);
  set.add(Id::CutoverQueuedWrites, num(mover.queued_writes));
  set.add(Id::CutoverDrainAborts, num(mover.drain_aborts));
  set.add(Id::CutoverDrainTerminations, num(mover.drain_terminations));
  set.add(Id::MoverStreamErrors, num(mover.stream_errors));
  for (size_t s = 0; s < kMigrationStates; ++s) {
    set.add(Id::Migrations, num(mover.migrations[s]), {migration_state_name(static_cast<MigrationState>(s))});
  }
  set.add(Id::RollbackWindowRemaining, mover.rollback_window_remaining_seconds);
  const RebalanceReadings& r = mover.rebalance;
  set.add(Id::RebalanceMigrations, num(r.migrations));
  set.add(Id::RebalanceCopiedRows, num(r.copied_rows));
  set.add(Id::RebalanceRows, num(r.rows));
  set.add(Id::RebalanceCopiedBytes, num(r.copied_bytes));
  set.add(Id::RebalanceBytes, num(r.bytes));
  set.add(Id::RebalanceRowsPerSecond, r.rows_per_second);
  set.add(Id::RebalanceBytesPerSecond, r.bytes_per_second);
  set.add(Id::RebalanceEta, r.eta_seconds);
}

void add_two_phase(FamilySet& set, const stats::WorkerTraffic& traffic, const TwoPhaseReadings& two_phase) {
  for (size_t i = 0; i < stats::kCrossShardOutcomes; ++i) {
    set.add(Id::CrossShardTransactions, num(traffic.cross_shard_commits[i]),
            {stats::cross_shard_outcome_name(static_cast<stats::CrossShardOutcome>(i))});
  }
  set.add_histogram(Id::TwoPhaseCommitDuration, traffic.two_phase_commit_latency);
  set.add(Id::TwoPhaseRecovered, num(two_phase.recovered_commit), {"commit"});
  set.add(Id::TwoPhaseRecovered, num(two_phase.recovered_abort), {"abort"});
  set.add(Id::TwoPhaseInDoubt, static_cast<double>(two_phase.in_doubt));
}

void add_process(FamilySet& set, const ProcessReadings& process) {
  auto maybe = [&](Id id, const std::optional<double>& value) {
    if (value) set.add(id, *value);
  };
  maybe(Id::ProcessCpuSeconds, process.cpu_seconds);
  maybe(Id::ProcessResidentMemory, process.resident_bytes);
  maybe(Id::ProcessVirtualMemory, process.virtual_bytes);
  maybe(Id::ProcessOpenFds, process.open_fds);
  maybe(Id::ProcessMaxFds, process.max_fds);
  maybe(Id::ProcessStartTime, process.start_time_seconds);
}

}  // namespace

std::vector<MetricFamily> to_families(const Readings& readings, const ProcessReadings& process) {
  FamilySet set;
  add_clients(set, readings);
  add_shards(set, readings);
  add_proxy_state(set, readings);
  add_mover(set, readings.mover);
  add_two_phase(set, readings.snapshot.traffic, readings.two_phase);
  add_process(set, process);
  return set.take();
}

}  // namespace sw::metrics
