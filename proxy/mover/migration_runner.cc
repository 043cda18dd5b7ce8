#include "mover/migration_runner.h"

#include <algorithm>
#include <set>

#include "common/failpoint.h"
#include "common/log.h"
#include "mover/catch_up_stream.h"
#include "mover/console_ops.h"
#include "mover/copier.h"
#include "mover/replication.h"
#include "mover/schema_check.h"
#include "mover/shard_ops.h"
#include "mover/verifier.h"

namespace sw::mover {

using catalog_rows::MigrationState;
using catalog_rows::MigrationStep;

namespace {
constexpr auto kMaxBackoff = std::chrono::milliseconds(10000);
constexpr auto kCatchUpWait = std::chrono::milliseconds(2000);
// The stream counts as close behind when it reaches the source's current position this fast:
// what it still has to apply after the fence is then about this much writing.
constexpr auto kCloseBehind = std::chrono::milliseconds(50);
// How often a migration whose cutover was undone looks whether its retry is due.
constexpr auto kRetryPoll = std::chrono::milliseconds(200);
// Advisory lock class for "this process runs migration <id>" (two-key form).
constexpr int kLockClass = 0x5357;
}  // namespace

void crash_point(catalog_rows::MigrationStep step) {
  failpoint::hit(std::string("mover.") + catalog_rows::migration_step_name(step));
}
void crash_point(catalog_rows::MigrationState state) {
  failpoint::hit(std::string("mover.") + catalog_rows::migration_state_name(state));
}

MigrationRunner::MigrationRunner(int64_t id, std::shared_ptr<const config::Config> config,
                                 MoverCounters& counters)
    : id_(id), config_(std::move(config)), counters_(counters) {}

MigrationRunner::~MigrationRunner() { stop(); }

void MigrationRunner::start() {
  thread_ = std::thread([this] { run(); });
}

void MigrationRunner::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

bool MigrationRunner::sleep_for(std::chrono::milliseconds duration) {
  auto until = std::chrono::steady_clock::now() + duration;
  while (!stopping_ && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !stopping_;
}

Result<std::string> MigrationRunner::shard_dsn(const std::string& name) const {
  const config::Shard* shard = config_->find_shard(name);
  if (shard == nullptr)
    return Status::config("shard " + name + " of migration " + std::to_string(id_) +
                          " is not in the configuration");
  return mover_dsn(*config_, *shard);
}

Result<catalog::PgConnPtr> MigrationRunner::connect_shard(const std::string& name) const {
  auto dsn = shard_dsn(name);
  if (!dsn) return dsn.status();
  return catalog::connect(*dsn, "shard " + name);
}

Result<std::unique_ptr<ReplicationConnection>> MigrationRunner::open_replication(
    const std::string& name) const {
  auto dsn = shard_dsn(name);
  if (!dsn) return dsn.status();
  return ReplicationConnection::open(*dsn);
}

// The catch-up rounds' connections, kept across rounds (a round runs every few milliseconds to
// seconds) and opened again once lost.
Result<PGconn*> MigrationRunner::round_connection(const std::string& name) {
  catalog::PgConnPtr& conn = round_connections_[name];
  if (!conn || catalog::connection_lost(conn.get())) {
    auto fresh = connect_shard(name);
    if (!fresh) return fresh.status();
    conn = std::move(*fresh);
  }
  return conn.get();
}

BucketSet MigrationRunner::bucket_set(const catalog_rows::Migration& m) const {
  return BucketSet(static_cast<uint32_t>(config_->sharding.buckets), m.buckets);
}

std::string MigrationRunner::slot_name(bool reverse) const {
  return (reverse ? "sw_rev_" : "sw_mig_") + std::to_string(id_);
}

uint64_t MigrationRunner::lag_bytes() const {
  std::lock_guard<std::mutex> lock(stream_mutex_);
  return stream_ ? stream_->lag_bytes() : 0;
}

double MigrationRunner::lag_seconds() const {
  std::lock_guard<std::mutex> lock(stream_mutex_);
  return stream_ ? stream_->lag_seconds() : 0;
}

// A catalog connection holding this migration's advisory lock: while it lives, no other
// shardwire process runs the migration; if it dies, the lock goes with it.
Status MigrationRunner::connect() {
  auto conn = catalog::connect(config_->catalog.dsn, "catalog");
  if (!conn) return conn.status();
  auto locked = catalog::query(conn->get(), "SELECT pg_try_advisory_lock($1, $2)",
                               {std::to_string(kLockClass), std::to_string(id_)});
  if (!locked) return locked.status();
  if (catalog::text_value(locked->get(), 0, 0) != "t")
    return Status::proxy("55006",
                         "migration " + std::to_string(id_) + " is run by another shardwire process");
  // A cutover is woken by each router's acknowledgement instead of polling for it.
  if (Status s = listen_for_acknowledgements(conn->get()); !s) return s;
  catalog_ = std::move(*conn);
  return Status::ok();
}

void MigrationRunner::run() {
  while (!stopping_) {
    if (!catalog_) {
      Status connected = connect();
      if (!connected) {
        if (connected.sqlstate == "55006") break;  // another process has it
        LOG_WARN("mover: migration %lld: %s", (long long)id_, connected.message.c_str());
        sleep_for(backoff_);
        backoff_ = std::min(backoff_ * 2, kMaxBackoff);
        continue;
      }
    }
    auto m = catalog::get_migration(catalog_.get(), id_);
    if (!m) {
      LOG_WARN("mover: migration %lld: %s", (long long)id_, m.status().message.c_str());
      if (catalog::connection_lost(catalog_.get())) {
        stop_stream();  // the lock went with the connection: another process may take over
        catalog_.reset();
      }
      sleep_for(backoff_);
      continue;
    }
    if (catalog_rows::is_final(m->state)) break;
    Outcome outcome = step(*m);
    if (outcome == Outcome::Stop) break;
    if (outcome == Outcome::Wait) sleep_for(backoff_);
  }
  stop_stream();
  finished_ = true;
}

MigrationRunner::Outcome MigrationRunner::step(catalog_rows::Migration& m) {
  auto failed = [&](const Status& why) {
    LOG_WARN("mover: migration %lld (%s): %s", (long long)id_, catalog_rows::migration_state_name(m.state),
             why.message.c_str());
    bookkeep(catalog::record_error(catalog_.get(), id_, why.message));
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    return Outcome::Wait;
  };
  // A reverse cutover (ROLLBACK MIGRATION) is past the forward flip: cancel no longer applies.
  bool before_flip = m.state <= MigrationState::CuttingOver && !m.rolling_back;
  if (m.cancel_requested && before_flip) {
    Status cancelled = cancel(m);
    return cancelled ? Outcome::Continue : failed(cancelled);
  }
  // A paused rollback window still closes on time or on its WAL budget (the reverse slot would
  // hold WAL without bound otherwise).
  if (m.paused && m.state != MigrationState::RollbackWindow) {
    // Held: no copy, no stream (the slot keeps the WAL), no cutover until RESUME MIGRATION.
    stop_stream();
    if (m.step != MigrationStep::Paused)
      bookkeep(catalog::record_step(catalog_.get(), id_, MigrationStep::Paused));
    return Outcome::Wait;
  }
  Status status = Status::ok();
  switch (m.state) {
    case MigrationState::Planned:
      // Drift found now is an error to fix while nothing has started (it stays planned and is
      // checked again after the backoff); found mid-stream it would wedge the move.
      status = check_schema(m);
      if (!status) break;
      LOG_INFO("mover: migration %lld: %zu bucket(s) from %s to %s", (long long)id_, m.buckets.size(),
               m.source.c_str(), m.target.c_str());
      status = catalog::mark_state(catalog_.get(), id_, MigrationState::Copying, MigrationStep::Copy);
      break;
    case MigrationState::Copying: status = copy(m); break;
    case MigrationState::CatchingUp: status = catch_up(m); break;
    case MigrationState::CuttingOver:
      // Only a crashed or disconnected runner leaves a migration here: the cutover did not flip
      // (the flip moves the state on in the same catalog transaction), so undo it.
      status = undo_cutover(m, m.rolling_back);
      if (status) status = catalog::undo_interrupted_cutover(catalog_.get(), id_, m.rolling_back);
      break;
    case MigrationState::RollbackWindow: status = keep_rollback_window(m); break;
    case MigrationState::Cleaning: status = m.rolling_back ? finish_rollback(m) : clean(m); break;
    default: return Outcome::Stop;
  }
  if (!status) return failed(status);
  backoff_ = std::chrono::milliseconds(200);
  return Outcome::Continue;
}

Status MigrationRunner::check_schema(const catalog_rows::Migration& m) {
  auto source = connect_shard(m.source);
  if (!source) return source.status();
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  if (Status s = check_schemas(source->get(), m.source, target->get(), m.target, config_->sharding.tables);
      !s)
    return s;
  return check_reference_copies_on(*config_, m.target);  // reads on the target join its copies
}

Status MigrationRunner::copy(catalog_rows::Migration& m) {
  auto source_dsn = shard_dsn(m.source);
  auto target_dsn = shard_dsn(m.target);
  if (!source_dsn) return source_dsn.status();
  if (!target_dsn) return target_dsn.status();
  auto source_conn = connect_shard(m.source);
  if (!source_conn) return source_conn.status();
  BucketSet buckets = bucket_set(m);
  const auto& tables = config_->sharding.tables;
  if (Status s = check_tables(source_conn->get(), m.source, tables); !s) return s;
  {
    auto target_conn = connect_shard(m.target);
    if (!target_conn) return target_conn.status();
    if (Status s = check_tables(target_conn->get(), m.target, tables); !s) return s;
    // The target fences the buckets until the cutover: its fences say they hold rows before the
    // copy (or a copy started over) writes the first one.
    if (Status s = mark_holding_rows(target_conn->get(), buckets); !s) return s;
  }
  std::string publication = slot_name(false);
  if (Status s = ensure_publication(source_conn->get(), publication, tables); !s) return s;
  // A copy that died took its exported snapshot with it: start over with a fresh slot.
  if (Status s = drop_slot(source_conn->get(), slot_name(false)); !s) return s;
  auto replication = open_replication(m.source);
  if (!replication) return replication.status();
  auto slot = (*replication)->create_slot(slot_name(false), /*export_snapshot=*/true);
  if (!slot) return slot.status();
  // The rollback window's slot on the target, made now: creating a slot waits for the writing
  // transactions of its server, which must not happen inside a cutover.
  if (Status s = create_reverse_slot(m); !s) return s;
  auto total = count_rows(source_conn->get(), tables, buckets);
  catalog::CopyStart start{slot->name, publication, lsn_text(slot->consistent_point),
                           static_cast<int64_t>(total ? *total : 0)};
  if (Status s = catalog::record_copy_start(catalog_.get(), id_, start); !s) return s;
  CopyOptions options;
  options.source_dsn = *source_dsn;
  options.target_dsn = *target_dsn;
  options.source_name = m.source;
  options.target_name = m.target;
  options.snapshot_name = slot->snapshot_name;
  options.tables = tables;
  options.buckets = buckets;
  options.rows_per_sec = config_->mover.copy_rows_per_sec;
  options.streams = config_->mover.copy_streams;
  // PAUSE and CANCEL MIGRATION stop a running copy (it starts over when resumed).
  std::atomic<bool> interrupt{false};
  options.cancel = &interrupt;
  CopyProgress last;
  options.on_progress = [&](const CopyProgress& progress) {
    counters_.copied_rows += progress.rows - last.rows;
    counters_.copied_bytes += progress.bytes - last.bytes;
    last = progress;
    auto requested = catalog::record_copy_progress(catalog_.get(), id_, static_cast<int64_t>(progress.rows),
                                                   static_cast<int64_t>(progress.bytes));
    if (stopping_ || (requested && *requested)) interrupt = true;
    if (progress.rows > 0) crash_point(MigrationStep::Copy);
  };
  auto copied = copy_buckets(options);
  if (!copied && interrupt) {
    LOG_INFO("mover: migration %lld: copy interrupted (pause, cancel or stop)", (long long)id_);
    return Status::ok();  // the next step sees the request; a resumed copy starts over
  }
  if (!copied) return copied.status();
  // The snapshot's exact row count (the estimate above was taken outside it).
  bookkeep(catalog::record_rows_total(catalog_.get(), id_, static_cast<int64_t>(copied->rows)));
  LOG_INFO("mover: migration %lld copied %llu rows (%llu bytes); catching up from %s", (long long)id_,
           (unsigned long long)copied->rows, (unsigned long long)copied->bytes,
           lsn_text(slot->consistent_point).c_str());
  return catalog::mark_state(catalog_.get(), id_, MigrationState::CatchingUp, MigrationStep::CatchUp);
}

// The rollback window's slot on the target (the cutover records where its stream starts).
Status MigrationRunner::create_reverse_slot(catalog_rows::Migration& m) {
  auto target = connect_shard(m.target);
  if (!target) return target.status();
  std::string name = slot_name(true);
  if (Status s = ensure_publication(target->get(), name, config_->sharding.tables); !s) return s;
  if (Status s = drop_slot(target->get(), name); !s) return s;
  auto replication = open_replication(m.target);
  if (!replication) return replication.status();
  auto slot = (*replication)->create_slot(name, /*export_snapshot=*/false);
  if (!slot) return slot.status();
  m.reverse_slot = name;
  m.reverse_publication = name;
  return catalog::record_reverse_slot(catalog_.get(), id_, name);
}

Status MigrationRunner::start_stream(const catalog_rows::Migration& m, bool reverse) {
  std::lock_guard<std::mutex> lock(stream_mutex_);
  if (stream_ && stream_reverse_ == reverse) return Status::ok();
  const std::optional<std::string>& from = reverse ? m.reverse_lsn : m.consistent_lsn;
  if (!from)
    return Status::proxy("XX000", "migration " + std::to_string(id_) + " has no slot position recorded");
  auto lsn = parse_lsn(*from);
  if (!lsn) return lsn.status();
  auto sender = shard_dsn(reverse ? m.target : m.source);
  auto receiver = shard_dsn(reverse ? m.source : m.target);
  if (!sender) return sender.status();
  if (!receiver) return receiver.status();
  CatchUpOptions options;
  options.source_dsn = *sender;
  options.target_dsn = *receiver;
  options.slot = reverse ? m.reverse_slot : m.slot;
  options.publication = reverse ? m.reverse_publication : m.publication;
  options.migration_id = reverse ? -id_ : id_;  // the reverse stream keeps its own progress row
  options.tables = config_->sharding.tables;
  options.buckets = bucket_set(m);
  options.start_lsn = *lsn;
  if (stream_) stream_->stop();
  stream_ = std::make_unique<CatchUpStream>(std::move(options));
  // What is known equal holds only while one stream records every change (verified_buckets.h).
  verified_ = VerifiedBuckets(bucket_set(m));
  stream_->open_change_window();
  stream_reverse_ = reverse;
  stream_changes_seen_ = 0;
  stream_failures_seen_ = 0;
  // The reverse stream starts at the flip's position: it has no copy backlog to drain.
  if (reverse) stream_->mark_caught_up();
  stream_->start();
  return Status::ok();
}

void MigrationRunner::stop_stream() {
  std::unique_ptr<CatchUpStream> stream;
  {
    std::lock_guard<std::mutex> lock(stream_mutex_);
    stream.swap(stream_);
  }
  if (!stream) return;
  stream->stop();
  const CatchUpStream::LagSummary all = stream->apply_lag(false), steady = stream->apply_lag(true),
                                  received = stream->receive_lag();
  if (all.transactions > 0)
    LOG_INFO(
        "mover: migration %lld%s apply lag (source commit to target commit) in steady catch-up over %zu "
        "transaction(s): p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
        "with the copy's backlog over %zu: p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
        "steady, source commit to the stream receiving it: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
        (long long)id_, stream_reverse_ ? " reverse stream" : "", steady.transactions, steady.p50_ms,
        steady.p99_ms, steady.max_ms, all.transactions, all.p50_ms, all.p99_ms, all.max_ms, received.p50_ms,
        received.p99_ms, received.max_ms);
}

void MigrationRunner::bookkeep(const Status& written) const {
  if (!written)
    LOG_DEBUG("mover: migration %lld: catalog bookkeeping not written: %s", (long long)id_,
              written.message.c_str());
}

Status MigrationRunner::record_lag() {
  std::lock_guard<std::mutex> lock(stream_mutex_);
  if (!stream_) return Status::ok();
  uint64_t changes = stream_->applied_changes();
  counters_.applied_changes += changes - stream_changes_seen_;
  stream_changes_seen_ = changes;
  uint64_t failures = stream_->failures();
  counters_.stream_errors += failures - stream_failures_seen_;
  stream_failures_seen_ = failures;
  return catalog::record_lag(catalog_.get(), id_, stream_->lag_bytes(), stream_->lag_seconds());
}

Status MigrationRunner::note_stream_error(const catalog_rows::Migration& m) {
  Status error = Status::ok();
  {
    std::lock_guard<std::mutex> lock(stream_mutex_);
    if (stream_) error = stream_->last_error();
  }
  if (!error) {
    error.message = std::string(stream_reverse_ ? "reverse stream: " : "catch-up stream: ") + error.message;
    if (m.error != error.message) bookkeep(catalog::record_error(catalog_.get(), id_, error.message));
    stream_error_shown_ = true;
  } else if (stream_error_shown_) {
    bookkeep(catalog::clear_error(catalog_.get(), id_));
    stream_error_shown_ = false;
  }
  return error;
}

// Streams until the target is close behind the source, then cuts over (when a retry is due).
Status MigrationRunner::catch_up(catalog_rows::Migration& m) {
  if (m.step != MigrationStep::CatchUp)
    bookkeep(catalog::record_step(catalog_.get(), id_, MigrationStep::CatchUp));
  if (Status s = start_stream(m, false); !s) return s;
  if (!m.retry_due) {  // a cutover was undone lately: keep streaming, try again when due
    bookkeep(record_lag());
    sleep_for(kRetryPoll);
    return Status::ok();
  }
  auto source = round_connection(m.source);
  if (!source) return source.status();
  auto lsn = current_wal_lsn(*source);
  if (!lsn) return lsn.status();
  auto asked = std::chrono::steady_clock::now();
  bool reached = stream_->wait_until_processed(*lsn, kCatchUpWait);
  crash_point(MigrationState::CatchingUp);
  bool close_behind = reached && std::chrono::steady_clock::now() - asked <= kCloseBehind;
  if (close_behind && stream_->mark_caught_up())  // steady catch-up from here on (§8.4)
    LOG_INFO("mover: migration %lld: the stream is close behind the source; steady catch-up from here",
             (long long)id_);
  bookkeep(record_lag());
  Status stream_error = note_stream_error(m);
  // A stream that cannot apply a change retries with its own backoff; the runner backs off too
  // (failed() in step()) and still sees CANCEL and PAUSE between its rounds.
  if (!reached) return stream_error;
  if (!close_behind || !live_verified(m)) return Status::ok();
  auto result = cut_over(m, /*reverse=*/false);
  if (!result) return result.status();
  return Status::ok();
}

}  // namespace sw::mover
