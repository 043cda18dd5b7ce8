// MigrationRunner: the cutover (docs/architecture.md §8.6), forward (source -> target) or reverse
// (ROLLBACK MIGRATION: target -> source). Sub-steps are recorded before they are taken; a cutover
// that stops before its flip is undone (here on abort, or by the next runner after a crash).
#include <algorithm>
#include <cstdio>
#include <future>
#include <thread>

#include "catalog/directory_watcher.h"
#include "common/log.h"
#include "mover/catch_up_stream.h"
#include "mover/copier.h"
#include "mover/migration_runner.h"
#include "mover/replication.h"
#include "mover/shard_ops.h"
#include "mover/verifier.h"

namespace sw::mover {

using catalog::MigrationState;
using catalog::MigrationStep;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kFinalCatchUp = std::chrono::milliseconds(10000);
// After cutover.drain_action = terminate signalled the blocking backends: how long they get to end.
constexpr auto kTerminatedDrain = std::chrono::milliseconds(2000);

// The MIGRATING acknowledgements that matter: a live router heartbeats every heartbeat interval
// and reloads on the directory's NOTIFY within milliseconds. One silent for two intervals, and at
// least kSilentFloor, is stopped or cut off from the catalog; waiting for it only stretches the
// write pause: the source's fence refuses its writes (SW001) and its directory lease ends its
// routing. The floor keeps a live router whose watcher thread is starved on a loaded machine
// (heartbeats seconds late, seen under two parallel reshard runs) among those waited for: not
// waiting for it turns its writes into 40001s.
constexpr auto kSilentFloor = std::chrono::milliseconds(4000);
std::chrono::milliseconds ack_freshness(const config::Config& config) {
  return std::max<std::chrono::milliseconds>(
      kSilentFloor,
      2 * catalog::heartbeat_interval_for(std::chrono::milliseconds(0), config.sharding.directory_lease));
}
// A router that has not loaded MIGRATING confirmed its directory before it was published, so it
// stops reading the source within its read lease of that. The margin covers a read routed just
// before the lease ran out and still on its way to the source.
constexpr auto kStaleReadMargin = std::chrono::milliseconds(100);
Clock::duration stale_read_wait(const config::Config& config) {
  return catalog::read_lease_for(config.sharding.directory_lease) + kStaleReadMargin;
}
}  // namespace

Result<MigrationRunner::Cutover> MigrationRunner::cut_over(catalog::Migration& m, bool reverse) {
  const std::string& from_name = reverse ? m.target : m.source;
  const std::string& to_name = reverse ? m.source : m.target;
  auto from = connect_shard(from_name);
  if (!from) return from.status();
  auto to = connect_shard(to_name);
  if (!to) return to.status();
  BucketSet buckets = bucket_set(m);
  PGconn* cat = catalog_.get();
  auto cutover_started = Clock::now();
  std::string breakdown;  // "<step> +<ms>" for each step, for the flip's log line
  auto record = [&](MigrationStep step) {
    char at[64];
    std::snprintf(at, sizeof at, " %s +%.1f", catalog::migration_step_name(step),
                  std::chrono::duration<double, std::milli>(Clock::now() - cutover_started).count());
    breakdown += at;
    LOG_DEBUG("mover: migration %lld cutover step %s at +%.1f ms", (long long)id_,
              catalog::migration_step_name(step),
              std::chrono::duration<double, std::milli>(Clock::now() - cutover_started).count());
    Status s = catalog::record_step(cat, id_, step);
    crash_point(step);
    return s;
  };
  auto abort = [&](const std::string& why, bool drain) -> Result<Cutover> {
    if (drain) ++counters_.drain_aborts;
    LOG_WARN("mover: migration %lld cutover aborted: %s", (long long)id_, why.c_str());
    if (Status s = undo_cutover(m, reverse); !s) return s;
    if (Status s = catalog::abort_cutover(cat, id_, reverse, why); !s) return s;
    return Cutover::Aborted;
  };

  auto begun = catalog::begin_cutover(cat, id_, reverse);
  if (!begun) return begun.status();
  if (!*begun) {
    LOG_INFO("mover: migration %lld: the rollback was withdrawn (EXPIRE ROLLBACK)", (long long)id_);
    return Cutover::Aborted;
  }
  crash_point(MigrationStep::PublishMigrating);
  auto pause_started = Clock::now();
  auto version = publish_migrating(cat, buckets, from_name);
  if (!version) return abort(version.status().message, false);
  LOG_DEBUG("mover: migration %lld: directory version %llu (MIGRATING) published at +%.1f ms", (long long)id_,
            (unsigned long long)*version,
            std::chrono::duration<double, std::milli>(Clock::now() - cutover_started).count());
  // Routers that acknowledge MIGRATING hold new writes instead of sending them to the source. One
  // that does not answer in time (cut off from the catalog) may still route on its old directory:
  // the source's fence refuses those writes (SW001), so the cutover goes on without it.
  const auto published = Clock::now();
  auto acknowledged =
      wait_for_routers(cat, *version, ack_freshness(*config_), config_->cutover.queue_timeout / 2);
  if (!acknowledged) return abort(acknowledged.status().message, false);
  if (!*acknowledged)
    LOG_WARN(
        "mover: migration %lld: not every router loaded directory version %llu in time; the fence on %s "
        "guards "
        "the buckets",
        (long long)id_, (unsigned long long)*version, from_name.c_str());
  // Reads meet no fence: a router that has not loaded MIGRATING and heartbeated within its read
  // lease may read the source until that lease (confirmed before MIGRATING was published) runs
  // out, so the flip waits for it.
  auto behind = routers_behind(cat, *version, catalog::read_lease_for(config_->sharding.directory_lease));
  if (!behind) return abort(behind.status().message, false);
  const auto reads_fenced_at = published + (*behind > 0 ? stale_read_wait(*config_) : Clock::duration(0));
  if (*behind > 0)
    LOG_WARN(
        "mover: migration %lld: %d router(s) did not load directory version %llu; the flip waits until "
        "their read lease has run out",
        (long long)id_, *behind, (unsigned long long)*version);

  if (Status s = record(MigrationStep::FenceSource); !s) return s;
  auto fenced_at = fence(from->get(), buckets, *version);
  if (!fenced_at) return abort(fenced_at.status().message, false);
  if (Status s = record(MigrationStep::Drain); !s) return s;
  auto drained = drain(from->get(), *fenced_at, from_name);
  if (!drained) return abort(drained.status().message, false);
  if (!*drained) return abort("transactions on " + from_name + " outlived cutover.drain_timeout", true);

  if (Status s = record(MigrationStep::CatchUp); !s) return s;
  auto fence_lsn = current_wal_lsn(from->get());
  if (!fence_lsn) return abort(fence_lsn.status().message, false);
  if (!stream_ || !stream_->wait_until_processed(*fence_lsn, kFinalCatchUp))
    return abort("the stream did not reach " + lsn_text(*fence_lsn) + " in time", false);

  if (Status s = record(MigrationStep::Verify); !s) return s;
  auto difference = compare_buckets(from->get(), to->get(), buckets);
  if (!difference) return abort(difference.status().message, false);
  if (!difference->empty()) return abort(*difference + " between " + from_name + " and " + to_name, false);

  if (!reverse) {
    // The rollback window's stream starts here: every write the target takes comes after this
    // position, and nothing the applier wrote (it has caught up) does.
    if (Status s = record(MigrationStep::ReversePosition); !s) return s;
    auto position = current_wal_lsn(to->get());
    if (!position) return abort(position.status().message, false);
    if (Status s = catalog::record_reverse_position(cat, id_, lsn_text(*position)); !s) return s;
    m.reverse_lsn = lsn_text(*position);
  }
  if (Status s = advance_sequences(to->get(), config_->sharding.tables, buckets); !s)
    return abort(s.message, false);
  if (Status s = record(MigrationStep::UnfenceTarget); !s) return s;
  if (Status s = unfence(to->get(), buckets); !s) return abort(s.message, false);

  std::this_thread::sleep_until(reads_fenced_at);
  double pause_ms = std::chrono::duration<double, std::milli>(Clock::now() - pause_started).count();
  auto flipped = flip(buckets, to_name, reverse, pause_ms);
  if (!flipped) return flipped.status();  // outcome unknown: the next pass reads it from the catalog
  if (!*flipped) return abort("the catalog refused the flip", false);
  auto pause_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - pause_started).count();
  counters_.observe_pause_us(static_cast<uint64_t>(pause_us));
  LOG_INFO(
      "mover: migration %lld: %zu bucket(s) now on %s; writes paused %.1f ms (steps, ms after the cutover "
      "began:%s; flip +%.1f)",
      (long long)id_, buckets.list().size(), to_name.c_str(), pause_ms, breakdown.c_str(),
      std::chrono::duration<double, std::milli>(Clock::now() - cutover_started).count());
  crash_point(MigrationStep::Flipped);
  if (Status s = finish_flip(m, reverse); !s) return s;
  if (!reverse) forward_slot_dropped_ = true;
  return Cutover::Flipped;
}

// Waits out the source's transactions that began before the fence; after cutover.drain_timeout,
// with drain_action = terminate, ends the ones still open and waits for them to go. False when
// some are still open (drain_action = abort: the cutover is undone).
Result<bool> MigrationRunner::drain(PGconn* from, const std::string& fenced_at,
                                    const std::string& from_name) {
  auto drained = wait_for_drain(from, fenced_at, config_->cutover.drain_timeout);
  if (!drained || *drained || config_->cutover.drain_action != config::DrainAction::Terminate) return drained;
  auto ended = terminate_drain_blockers(from, fenced_at);
  if (!ended) return ended.status();
  LOG_WARN(
      "mover: migration %lld: cutover.drain_action = terminate: ended %d backend(s) on %s whose "
      "transactions outlived cutover.drain_timeout",
      (long long)id_, *ended, from_name.c_str());
  counters_.drain_terminations += static_cast<uint64_t>(*ended);
  return wait_for_drain(from, fenced_at, kTerminatedDrain);
}

// The final verification: "" when every bucket has the same rows on both shards, else which
// bucket differs. Both shards scan at once: it is most of the write pause for a large table.
Result<std::string> MigrationRunner::compare_buckets(PGconn* from, PGconn* to, const BucketSet& buckets) {
  auto from_scan =
      std::async(std::launch::async, [&] { return bucket_digests(from, config_->sharding.tables, buckets); });
  auto to_digests = bucket_digests(to, config_->sharding.tables, buckets);
  auto from_digests = from_scan.get();
  if (!from_digests) return from_digests.status();
  if (!to_digests) return to_digests.status();
  auto mismatched = mismatched_buckets(*from_digests, *to_digests);
  if (mismatched.empty()) return std::string();
  counters_.verify_mismatches += mismatched.size();
  return "verification: bucket " + std::to_string(mismatched.front()) + " differs";
}

// The flip: owner and state change together with the migration's own state, in one catalog
// transaction (so "not flipped" is exact for a runner that resumes after a crash). False when it
// was refused before COMMIT; an error when COMMIT's outcome is unknown.
Result<bool> MigrationRunner::flip(const BucketSet& buckets, const std::string& to_name, bool reverse,
                                   double pause_ms) {
  PGconn* cat = catalog_.get();
  if (Status s = catalog::exec(cat, "BEGIN"); !s) return false;
  Status flipped = publish_active_on(cat, buckets, to_name);
  if (flipped) {
    flipped = catalog::record_flip(cat, id_, reverse, pause_ms,
                                   static_cast<int64_t>(config_->mover.rollback_window.count()));
  }
  if (!flipped) {
    LOG_WARN("mover: migration %lld: flip refused: %s", (long long)id_, flipped.message.c_str());
    static_cast<void>(catalog::exec(cat, "ROLLBACK"));  // the connection is dropped if this fails too
    return false;
  }
  if (Status s = catalog::exec(cat, "COMMIT"); !s) return s;
  return true;
}

// After a flip: the stream that fed `to` is no longer needed; its slot and publication go.
// Idempotent: a runner resuming after a crash right after the flip runs it again.
Status MigrationRunner::finish_flip(const catalog::Migration& m, bool reverse) {
  bool feeding = false;
  {
    std::lock_guard<std::mutex> lock(stream_mutex_);
    feeding = stream_ && stream_reverse_ == reverse;
  }
  if (feeding) stop_stream();
  const std::string& from_name = reverse ? m.target : m.source;
  auto from = connect_shard(from_name);
  if (!from) return from.status();
  std::string slot = reverse ? m.reverse_slot : m.slot;
  std::string publication = reverse ? m.reverse_publication : m.publication;
  if (Status s = drop_slot(from->get(), slot); !s) return s;
  return drop_publication(from->get(), publication);
}

// A cutover that did not flip (the flip changes owner and migration state in one catalog
// transaction, so "not flipped" is exact): `to` fences the buckets again, `from` takes writes
// again, and the directory says ACTIVE on `from`.
Status MigrationRunner::undo_cutover(const catalog::Migration& m, bool reverse) {
  const std::string& from_name = reverse ? m.target : m.source;
  const std::string& to_name = reverse ? m.source : m.target;
  BucketSet buckets = bucket_set(m);
  auto to = connect_shard(to_name);
  if (!to) return to.status();
  if (auto refenced = fence(to->get(), buckets, 0); !refenced) return refenced.status();
  auto from = connect_shard(from_name);
  if (!from) return from.status();
  if (Status s = unfence(from->get(), buckets); !s) return s;
  LOG_INFO("mover: migration %lld: cutover undone; buckets stay ACTIVE on %s", (long long)id_,
           from_name.c_str());
  return publish_active_on(catalog_.get(), buckets, from_name);
}

}  // namespace sw::mover
