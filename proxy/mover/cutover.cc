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

using catalog_rows::MigrationState;
using catalog_rows::MigrationStep;
using Clock = std::chrono::steady_clock;

namespace {
constexpr auto kFinalCatchUp = std::chrono::milliseconds(10000);
// After cutover.drain_action = terminate signalled the blocking backends: how long they get to end.
constexpr auto kTerminatedDrain = std::chrono::milliseconds(2000);
// How long the source's transactions that began before every router held the moving buckets get
// to end before the fence (a transaction of a few statements; longer ones are drained after it).
constexpr auto kSettleMax = std::chrono::milliseconds(50);

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

// "12.3": a duration in ms, for the cutover's log line.
std::string format_ms(Clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", std::chrono::duration<double, std::milli>(d).count());
  return text;
}
}  // namespace

// From `from` to `to` (swapped for a rollback), timed from the cutover's start.
struct MigrationRunner::CutoverLegs {
  const std::string& from_name;
  const std::string& to_name;
  PGconn* from;
  PGconn* to;
  PGconn* to_scan;  // the receiving shard again: the verification scans it while `to` takes the steps
  const BucketSet& buckets;
  bool reverse;
  Clock::time_point started;
  Clock::time_point pause_started;      // writes to the buckets are held or refused from here
  Clock::time_point reads_fenced_at{};  // the flip waits for it: no router reads the source after
  std::string steps;                    // " <step> +<ms>" for each step, for the flip's log line
};

Result<MigrationRunner::Cutover> MigrationRunner::cut_over(catalog_rows::Migration& m, bool reverse) {
  const std::string& from_name = reverse ? m.target : m.source;
  const std::string& to_name = reverse ? m.source : m.target;
  auto from = connect_shard(from_name);
  if (!from) return from.status();
  auto to = connect_shard(to_name);
  if (!to) return to.status();
  auto to_scan = connect_shard(to_name);
  if (!to_scan) return to_scan.status();
  const BucketSet buckets = bucket_set(m);
  const auto started = Clock::now();
  auto abort = [&](const std::string& why) -> Result<Cutover> {
    LOG_WARN("mover: migration %lld cutover aborted: %s", (long long)id_, why.c_str());
    if (Status s = undo_cutover(m, reverse); !s) return s;
    if (Status s = catalog::abort_cutover(catalog_.get(), id_, reverse, why); !s) return s;
    return Cutover::Aborted;
  };

  auto begun = catalog::begin_cutover(catalog_.get(), id_, reverse);
  if (!begun) return begun.status();
  if (!*begun) {
    LOG_INFO("mover: migration %lld: the rollback was withdrawn (EXPIRE ROLLBACK)", (long long)id_);
    return Cutover::Aborted;
  }
  crash_point(MigrationStep::PublishMigrating);
  CutoverLegs legs{from_name, to_name, from->get(), to->get(),   to_scan->get(),
                   buckets,   reverse, started,     Clock::now()};
  Result<AbortReason> ended = stop_writes(legs);
  if (ended && !*ended) ended = final_catch_up(legs);
  if (ended && !*ended) ended = verify_and_prepare_target(m, legs);
  if (ended && !*ended) ended = hand_over(legs);
  if (!ended) return ended.status();
  if (*ended) return abort(**ended);
  crash_point(MigrationStep::Flipped);
  if (Status s = finish_flip(m, reverse); !s) return s;
  if (!reverse) forward_slot_dropped_ = true;
  return Cutover::Flipped;
}

Status MigrationRunner::record_cutover_step(MigrationStep step, CutoverLegs& legs) {
  const double at_ms = std::chrono::duration<double, std::milli>(Clock::now() - legs.started).count();
  char step_at[64];
  std::snprintf(step_at, sizeof step_at, " %s +%.1f", catalog_rows::migration_step_name(step), at_ms);
  legs.steps += step_at;
  LOG_DEBUG("mover: migration %lld cutover step %s at +%.1f ms", (long long)id_,
            catalog_rows::migration_step_name(step), at_ms);
  Status s = catalog::record_step(catalog_.get(), id_, step);
  crash_point(step);
  return s;
}

// MIGRATING published and acknowledged, the source fenced, its older transactions drained.
Result<MigrationRunner::AbortReason> MigrationRunner::stop_writes(CutoverLegs& legs) {
  PGconn* cat = catalog_.get();
  auto version = publish_migrating(cat, legs.buckets, legs.from_name);
  if (!version) return AbortReason(version.status().message);
  const auto published = Clock::now();
  legs.steps += " published +" + format_ms(published - legs.started);
  LOG_DEBUG("mover: migration %lld: directory version %llu (MIGRATING) published at +%.1f ms", (long long)id_,
            (unsigned long long)*version,
            std::chrono::duration<double, std::milli>(Clock::now() - legs.started).count());
  // Routers that acknowledge MIGRATING hold new writes instead of sending them to the source. One
  // that does not answer in time (cut off from the catalog) may still route on its old directory:
  // the source's fence refuses those writes (SW001), so the cutover goes on without it.
  auto acknowledged =
      wait_for_routers(cat, *version, ack_freshness(*config_), config_->cutover.queue_timeout / 2);
  if (!acknowledged) return AbortReason(acknowledged.status().message);
  legs.steps += " acknowledged +" + format_ms(Clock::now() - legs.started);
  if (!*acknowledged)
    LOG_WARN(
        "mover: migration %lld: not every router loaded directory version %llu in time; the fence on %s "
        "guards the buckets",
        (long long)id_, (unsigned long long)*version, legs.from_name.c_str());
  // Reads meet no fence: a router that has not loaded MIGRATING and heartbeated within its read
  // lease may read the source until that lease (confirmed before MIGRATING was published) runs
  // out, so the flip waits for it.
  auto behind = routers_behind(cat, *version, catalog::read_lease_for(config_->sharding.directory_lease));
  if (!behind) return AbortReason(behind.status().message);
  legs.reads_fenced_at = published + (*behind > 0 ? stale_read_wait(*config_) : Clock::duration(0));
  if (*behind > 0)
    LOG_WARN(
        "mover: migration %lld: %d router(s) did not load directory version %llu; the flip waits until "
        "their read lease has run out",
        (long long)id_, *behind, (unsigned long long)*version);

  // Transactions that began on the source before the routers held the buckets finish before the
  // fence instead of meeting it: a later statement of theirs refused with SW001 would fail the
  // transaction (40001). The drain after the fence would wait for them all the same, so this adds
  // little to the pause; a longer one meets the fence and the drain as before. Both share one
  // cutover.drain_timeout.
  const auto drain_deadline = Clock::now() + config_->cutover.drain_timeout;
  auto held_at = shard_clock(legs.from);
  if (!held_at) return AbortReason(held_at.status().message);
  auto settled = wait_for_drain(legs.from, *held_at, std::min(kSettleMax, config_->cutover.drain_timeout));
  if (!settled) return AbortReason(settled.status().message);
  legs.steps += " settled +" + format_ms(Clock::now() - legs.started);

  if (Status s = record_cutover_step(MigrationStep::FenceSource, legs); !s) return s;
  auto fenced_at = fence(legs.from, legs.buckets, *version);
  if (!fenced_at) return AbortReason(fenced_at.status().message);
  if (Status s = record_cutover_step(MigrationStep::Drain, legs); !s) return s;
  const auto left =
      std::max(std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline - Clock::now()),
               std::chrono::milliseconds(0));
  auto drained = drain(legs.from, *fenced_at, legs.from_name, left);
  if (!drained) return AbortReason(drained.status().message);
  if (!*drained) {
    ++counters_.drain_aborts;
    return AbortReason("transactions on " + legs.from_name + " outlived cutover.drain_timeout");
  }
  return AbortReason();
}

// The stream applied everything up to the fence.
Result<MigrationRunner::AbortReason> MigrationRunner::final_catch_up(CutoverLegs& legs) {
  if (Status s = record_cutover_step(MigrationStep::CatchUp, legs); !s) return s;
  auto fence_lsn = current_wal_lsn(legs.from);
  if (!fence_lsn) return AbortReason(fence_lsn.status().message);
  if (!stream_ || !stream_->wait_until_processed(*fence_lsn, kFinalCatchUp))
    return AbortReason("the stream did not reach " + lsn_text(*fence_lsn) + " in time");
  return AbortReason();
}

// The buckets not known equal (verified_buckets.h: those the stream changed after live
// verification's last round, or every bucket when there was none) compared on both shards, while
// the receiving shard's own steps (the reverse stream's start, sequences) run beside the scans:
// none of them changes a moved row, and all of them only need the stream caught up. The stream
// has applied everything up to the fence, so the source's buckets change no more. Any failure
// aborts the cutover, as it would in sequence.
Result<MigrationRunner::AbortReason> MigrationRunner::verify_and_prepare_target(catalog_rows::Migration& m,
                                                                                CutoverLegs& legs) {
  if (Status s = record_cutover_step(MigrationStep::Verify, legs); !s) return s;
  verified_.changed(stream_->take_changed_buckets());
  const BucketSet scan = verified_.unverified();
  auto compared = std::async(std::launch::async, [&] {
    return compare_shards(legs.from, legs.to_scan, config_->sharding.tables, scan);
  });
  Result<AbortReason> prepared = prepare_target(m, legs, scan);
  auto mismatched = compared.get();
  legs.steps += " verified " + std::to_string(scan.list().size()) + "/" +
                std::to_string(legs.buckets.list().size()) + " +" + format_ms(Clock::now() - legs.started);
  if (!mismatched) return AbortReason(mismatched.status().message);
  if (!mismatched->empty()) {
    counters_.verify_mismatches += mismatched->size();
    return AbortReason("verification: bucket " + std::to_string(mismatched->front()) + " differs between " +
                       legs.from_name + " and " + legs.to_name);
  }
  return prepared;
}

// Forward only: the rollback window's stream starts at the receiving shard's WAL position now;
// then every serial/identity sequence moves past the moved rows of `changed`, the buckets not
// known equal: live verification moved them past the others' after its last round, and the stream
// changed none of those since.
Result<MigrationRunner::AbortReason> MigrationRunner::prepare_target(catalog_rows::Migration& m,
                                                                     CutoverLegs& legs,
                                                                     const BucketSet& changed) {
  if (!legs.reverse) {
    // Every write the target takes comes after this position, and nothing the applier wrote (it
    // has caught up) does.
    if (Status s = record_cutover_step(MigrationStep::ReversePosition, legs); !s) return s;
    auto position = current_wal_lsn(legs.to);
    if (!position) return AbortReason(position.status().message);
    if (Status s = catalog::record_reverse_position(catalog_.get(), id_, lsn_text(*position)); !s) return s;
    m.reverse_lsn = lsn_text(*position);
  }
  if (Status s = advance_sequences(legs.to, config_->sharding.tables, changed); !s)
    return AbortReason(s.message);
  return AbortReason();
}

// The target unfenced, then the flip that ends the write pause.
Result<MigrationRunner::AbortReason> MigrationRunner::hand_over(CutoverLegs& legs) {
  if (Status s = record_cutover_step(MigrationStep::UnfenceTarget, legs); !s) return s;
  if (Status s = unfence(legs.to, legs.buckets); !s) return AbortReason(s.message);

  std::this_thread::sleep_until(legs.reads_fenced_at);
  const double pause_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - legs.pause_started).count();
  auto flipped = flip(legs.buckets, legs.to_name, legs.reverse, pause_ms);
  if (!flipped) return flipped.status();  // outcome unknown: the next pass reads it from the catalog
  if (!*flipped) return AbortReason("the catalog refused the flip");
  auto pause_us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - legs.pause_started).count();
  counters_.observe_pause_us(static_cast<uint64_t>(pause_us));
  LOG_INFO(
      "mover: migration %lld: %zu bucket(s) now on %s; writes paused %.1f ms (steps, ms after the cutover "
      "began:%s; flip +%.1f)",
      (long long)id_, legs.buckets.list().size(), legs.to_name.c_str(), pause_ms, legs.steps.c_str(),
      std::chrono::duration<double, std::milli>(Clock::now() - legs.started).count());
  return AbortReason();
}

// Waits out the source's transactions that began before the fence; after `timeout` (what is left of
// cutover.drain_timeout), with drain_action = terminate, ends the ones still open and waits for them to go.
// False when some are still open (drain_action = abort: the cutover is undone).
Result<bool> MigrationRunner::drain(PGconn* from, const std::string& fenced_at, const std::string& from_name,
                                    std::chrono::milliseconds timeout) {
  auto drained = wait_for_drain(from, fenced_at, timeout);
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
Status MigrationRunner::finish_flip(const catalog_rows::Migration& m, bool reverse) {
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
Status MigrationRunner::undo_cutover(const catalog_rows::Migration& m, bool reverse) {
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
