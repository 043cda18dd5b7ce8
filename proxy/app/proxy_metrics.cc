// Proxy: the readings behind /metrics, taken on the exposer's HTTP thread at each scrape.
#include <chrono>
#include <future>
#include <limits>

#include "app/proxy.h"
#include "catalog/two_phase_recovery.h"
#include "common/log.h"
#include "metrics/readings.h"
#include "mover/mover_service.h"

namespace sw::app {
namespace {
constexpr auto kGatherTimeout = std::chrono::seconds(2);

metrics::RebalanceReadings rebalance_readings(const catalog::RebalanceProgress& progress) {
  metrics::RebalanceReadings r;
  const catalog::Progress& t = progress.total;
  r.migrations = static_cast<uint64_t>(progress.migrations);
  r.copied_rows = static_cast<uint64_t>(std::max<int64_t>(t.rows_done, 0));
  r.rows = static_cast<uint64_t>(std::max<int64_t>(t.rows_total, 0));
  r.copied_bytes = static_cast<uint64_t>(std::max<int64_t>(t.bytes_done, 0));
  r.bytes = static_cast<uint64_t>(std::max<int64_t>(t.bytes_total, 0));
  r.rows_per_second = t.rows_per_sec.value_or(0);
  r.bytes_per_second = t.bytes_per_sec.value_or(0);
  if (progress.migrations > 0)
    r.eta_seconds = t.eta_seconds.value_or(std::numeric_limits<double>::quiet_NaN());
  return r;
}

}  // namespace

metrics::Readings Proxy::read_metrics() {
  metrics::Readings readings;
  auto promise = std::make_shared<std::promise<stats::Snapshot>>();
  std::future<stats::Snapshot> future = promise->get_future();
  gather(false, [promise](stats::Snapshot snapshot) { promise->set_value(std::move(snapshot)); });
  if (future.wait_for(kGatherTimeout) == std::future_status::ready) {
    try {
      readings.snapshot = future.get();
    } catch (const std::future_error&) {
      // A worker stopped before answering (shutdown): report what the others cannot complete.
    }
  } else {
    LOG_WARN("metrics: workers did not report within %lld s; scrape without traffic figures",
             static_cast<long long>(kGatherTimeout.count()));
  }
  readings.parse_cache.hits = readings.snapshot.traffic.parse_cache_hits;
  readings.parse_cache.misses = readings.snapshot.traffic.parse_cache_misses;
  std::shared_ptr<const config::Config> running = config();
  for (const auto& shard : running->shards) readings.shards.push_back(shard.name);

  admin::DirectoryStatus status = directory_status();
  readings.directory.lease_valid = status.lease_valid && status.directory != nullptr;
  if (status.directory) {
    const router::Directory& d = *status.directory;
    readings.directory.version = d.version();
    readings.directory.age_seconds = static_cast<double>(stats::wall_clock_us() - status.loaded_at_us) / 1e6;
    std::vector<std::array<uint64_t, metrics::kBucketStates>> counts(d.shards().size());
    for (uint32_t b = 0; b < d.bucket_count(); ++b) {
      const auto& entry = d.bucket(b);
      bool migrating = entry.state == router::BucketState::Migrating;
      ++counts[entry.shard][static_cast<size_t>(migrating ? metrics::BucketState::Migrating
                                                          : metrics::BucketState::Active)];
    }
    for (size_t shard = 0; shard < counts.size(); ++shard) {
      for (size_t state = 0; state < metrics::kBucketStates; ++state) {
        readings.directory.buckets.push_back(
            {d.shards()[shard], static_cast<metrics::BucketState>(state), counts[shard][state]});
      }
    }
  }
  if (mover_) {
    mover::MoverSnapshot m = mover_->snapshot();
    readings.mover.copied_rows = m.copied_rows;
    readings.mover.copied_bytes = m.copied_bytes;
    readings.mover.applied_changes = m.applied_changes;
    readings.mover.lag_bytes = m.lag_bytes;
    readings.mover.lag_seconds = m.lag_seconds;
    readings.mover.verify_mismatches = m.verify_mismatches;
    readings.mover.cutover_pause = m.cutover_pause;
    readings.mover.drain_aborts = m.drain_aborts;
    readings.mover.stream_errors = m.stream_errors;
    readings.mover.drain_terminations = m.drain_terminations;
    for (size_t i = 0; i < catalog::kMigrationStates && i < metrics::kMigrationStates; ++i)
      readings.mover.migrations[i] = m.migrations[i];
    readings.mover.rollback_window_remaining_seconds = m.rollback_window_remaining_seconds;
    readings.mover.rebalance = rebalance_readings(m.rebalance);
  }
  readings.mover.queued_writes = static_cast<uint64_t>(std::max(0, cutover_queued_.load()));
  if (recovery_) {
    readings.two_phase.recovered_commit = recovery_->recovered(twopc::TwoPhaseDecision::Commit);
    readings.two_phase.recovered_abort = recovery_->recovered(twopc::TwoPhaseDecision::Abort);
    readings.two_phase.in_doubt = recovery_->in_doubt();
  }
  readings.reloads.ok = reloads_ok_.load();
  readings.reloads.failed = reloads_failed_.load();
  return readings;
}

}  // namespace sw::app
