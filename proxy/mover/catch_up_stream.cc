#include "mover/catch_up_stream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <utility>

#include "common/log.h"
#include "mover/change_applier.h"
#include "mover/replication.h"
#include "sqltext/apply_sql.h"
#include "wire/pgoutput.h"

namespace sw::mover {
namespace pgo = wire::pgoutput;

namespace {

using Clock = std::chrono::steady_clock;

// How long one wait for stream data lasts: bounds how late the thread notices stop(), a waiter
// that wants a keepalive, or a due status update.
constexpr std::chrono::milliseconds kTick{20};
constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
// Committed source transactions applied together once their statements reach this many.
constexpr size_t kBatchStatements = 200;
// ... or once the batch's first transaction waited this long (the source never goes quiet).
constexpr std::chrono::milliseconds kBatchAge{5};
// A waiter asks the server for a keepalive at most this often.
constexpr std::chrono::milliseconds kReplyRequestEvery{5};

int64_t unix_micros_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// One connection pair (source replication + target applier) of the stream, from connect until
// stop() or the first error. Lives on the stream's thread only.
class CatchUpStream::Session {
 public:
  explicit Session(CatchUpStream& owner) : owner_(owner), options_(owner.options_) {}

  // Ok when stopped; the error otherwise (the caller reconnects).
  Status run() {
    auto applier =
        ChangeApplier::open(options_.target_dsn, options_.migration_id, options_.tables, options_.buckets);
    if (!applier) return applier.status();
    applier_ = std::move(*applier);
    const Lsn resume = std::max({options_.start_lsn, applier_->applied_lsn(), owner_.processed_lsn()});
    owner_.advance_processed(resume);
    auto replication = ReplicationConnection::open(options_.source_dsn);
    if (!replication) return replication.status();
    replication_ = std::move(*replication);
    if (Status s = replication_->start(options_.slot, resume, options_.publication); !s) return s;
    LOG_INFO("mover: migration %lld catch-up streaming from slot %s at %s",
             static_cast<long long>(options_.migration_id), options_.slot.c_str(), lsn_text(resume).c_str());
    if (Status s = send_status(false); !s) return s;

    while (!owner_.stopping_.load()) {
      const auto now = Clock::now();
      bool request_reply = false;
      if (owner_.reply_wanted_.load() && now - last_reply_request_ >= kReplyRequestEvery) {
        owner_.reply_wanted_.store(false);
        request_reply = true;
        last_reply_request_ = now;
      }
      if (request_reply || now - last_status_ >= options_.status_interval) {
        if (Status s = send_status(request_reply); !s) return s;
      }
      // While committed transactions wait in the batch, only take what has arrived already.
      auto payload = replication_->next(batch_transactions_ > 0 ? std::chrono::milliseconds(0) : kTick);
      if (!payload) return payload.status();
      if (!payload->has_value()) {
        if (Status s = flush_batch(); !s) return s;
        continue;
      }
      if (Status s = handle(**payload); !s) return s;
    }
    (void)send_status(false);  // the final position, best effort
    return Status::ok();
  }

  // Whether this session applied a transaction (the caller then resets its backoff). A keepalive
  // that moves processed_lsn does not count: a change that keeps failing sits after the position
  // keepalives report, and counting them would retry it every 100 ms.
  bool applied() const { return applied_; }

 private:
  Status send_status(bool reply_requested) {
    const Lsn p = owner_.processed_lsn();
    last_status_ = Clock::now();
    return replication_->send_status(p, p, p, reply_requested);
  }

  void note_server_end(Lsn wal_end) {
    Lsn seen = owner_.server_wal_end_.load();
    while (wal_end > seen && !owner_.server_wal_end_.compare_exchange_weak(seen, wal_end)) {}
  }

  // Outside a transaction (and with the batch applied) every commit up to `lsn` has been received
  // and applied.
  void position_reached(Lsn lsn) {
    if (in_transaction_ || batch_transactions_ > 0 || lsn <= owner_.processed_lsn()) return;
    owner_.clear_failure(false, lsn);
    owner_.advance_processed(lsn);
  }

  Status handle(const std::string& payload) {
    auto envelope = pgo::decode_replication_message(payload);
    if (!envelope) return envelope.status();
    if (const auto* keepalive = std::get_if<pgo::PrimaryKeepalive>(&*envelope)) {
      note_server_end(keepalive->wal_end);
      position_reached(keepalive->wal_end);
      return keepalive->reply_requested ? send_status(false) : Status::ok();
    }
    const auto& xlog = std::get<pgo::XLogData>(*envelope);
    note_server_end(xlog.wal_end);
    auto message = decoder_.decode(xlog.data);
    if (!message) return message.status();
    if (Status s = handle_message(std::move(*message)); !s) return s;
    position_reached(xlog.wal_end);  // for a Commit: its end LSN
    return Status::ok();
  }

  bool configured(uint32_t oid) const {
    auto it = configured_.find(oid);
    return it != configured_.end() && it->second;
  }

  static Status unexpected(const char* what) {
    return Status::server("08P01", std::string("mover: unexpected ") + what + " in the replication stream");
  }

  Status handle_message(pgo::Message message) {
    if (const auto* begin = std::get_if<pgo::Begin>(&message)) {
      if (in_transaction_) return unexpected("Begin inside a transaction");
      in_transaction_ = true;
      changes_.clear();
      int64_t none = 0;  // the oldest unapplied transaction's time is kept across reconnects
      commit_unix_us_ = pgo::unix_micros_from_pg_timestamp(begin->commit_time);
      const int64_t caught_up = owner_.caught_up_at_us_.load();
      steady_ = caught_up != 0 && commit_unix_us_ >= caught_up;
      owner_.pending_commit_unix_us_.compare_exchange_strong(none, commit_unix_us_);
      return Status::ok();
    }
    if (const auto* commit = std::get_if<pgo::Commit>(&message)) {
      if (!in_transaction_) return unexpected("Commit outside a transaction");
      return apply(commit->end_lsn);
    }
    if (auto* relation = std::get_if<pgo::Relation>(&message)) {
      configured_[relation->oid] = sqltext::find_sharded_table(options_.tables, *relation) != nullptr;
      // Inside a transaction it describes the changes after it: the applier takes it in order.
      if (in_transaction_) {
        changes_.push_back(std::move(message));
      } else {
        relations_.put(std::move(*relation));
      }
      return Status::ok();
    }
    if (!sqltext::is_row_change(message)) {
      if (std::holds_alternative<pgo::StreamStart>(message) ||
          std::holds_alternative<pgo::StreamStop>(message) ||
          std::holds_alternative<pgo::StreamCommit>(message) ||
          std::holds_alternative<pgo::StreamAbort>(message))
        return unexpected("streamed-transaction message");
      return Status::ok();  // Type, Origin, DecodingMessage
    }
    if (!in_transaction_) return unexpected("change outside a transaction");
    // Only changes of configured tables are kept until the commit; the applier filters buckets.
    bool keep = false;
    if (const auto* truncate = std::get_if<pgo::Truncate>(&message)) {
      keep = std::any_of(truncate->relation_oids.begin(), truncate->relation_oids.end(),
                         [&](uint32_t oid) { return configured(oid); });
    } else {
      std::visit(
          [&](const auto& m) {
            if constexpr (requires { m.relation_oid; }) keep = configured(m.relation_oid);
          },
          message);
    }
    if (keep) changes_.push_back(std::move(message));
    return Status::ok();
  }

  // A commit: the transaction's changes for the moving buckets join the batch (the applier's
  // staged target transaction). Consecutive transactions are applied together, in order, as one
  // target transaction (its progress row holds the last one's end), whenever the stream has
  // nothing more at hand or the batch is full or old.
  Status apply(Lsn end_lsn) {
    in_transaction_ = false;
    std::vector<pgo::Message> changes;
    changes.swap(changes_);
    if (end_lsn <= applier_->applied_lsn()) {  // replayed after a restart: applied already
      keep_relations(changes);
      if (batch_transactions_ == 0) owner_.advance_processed(end_lsn);
      return Status::ok();
    }
    auto staged = applier_->stage_transaction(changes, relations_);
    if (!staged) return staged.status();
    if (*staged) owner_.record_changed_buckets(applier_->last_staged_buckets());
    keep_relations(changes);
    if (!*staged) {  // nothing for the moving buckets: no lag sample
      if (batch_transactions_ == 0) {
        owner_.pending_commit_unix_us_.store(0);
        owner_.advance_processed(end_lsn);
        return Status::ok();
      }
      batch_end_ = end_lsn;  // the batch's progress row covers it
    } else {
      if (batch_transactions_ == 0) batch_started_ = Clock::now();
      batch_end_ = end_lsn;
      batch_commits_.push_back({commit_unix_us_, unix_micros_now(), steady_});
      ++batch_transactions_;
    }
    bool due =
        applier_->staged_statements() >= kBatchStatements || Clock::now() - batch_started_ >= kBatchAge;
    return due ? flush_batch() : Status::ok();
  }

  // A transaction's Relation messages describe the changes of the transactions after it.
  void keep_relations(std::vector<pgo::Message>& changes) {
    for (auto& m : changes)
      if (auto* relation = std::get_if<pgo::Relation>(&m)) relations_.put(std::move(*relation));
  }

  Status flush_batch() {
    if (batch_transactions_ == 0) return Status::ok();
    const uint64_t before = applier_->applied_changes();
    if (Status s = applier_->commit_staged(batch_end_); !s) return s;
    batch_transactions_ = 0;
    record_lag();
    owner_.applied_changes_.fetch_add(applier_->applied_changes() - before);
    owner_.pending_commit_unix_us_.store(0);
    owner_.clear_failure(true, batch_end_);  // before a waiter can see the new position
    owner_.advance_processed(batch_end_);
    applied_ = true;
    return Status::ok();
  }

  void record_lag() {
    const int64_t now = unix_micros_now();
    auto micros = [](int64_t span) {
      return static_cast<uint32_t>(std::clamp<int64_t>(span, 0, UINT32_MAX));
    };
    {
      std::lock_guard<std::mutex> lock(owner_.mu_);
      for (const BatchedCommit& c : batch_commits_) {
        const uint32_t lag = micros(now - c.commit_us);
        owner_.lag_samples_us_.push_back(lag);
        if (!c.steady) continue;
        owner_.steady_lag_samples_us_.push_back(lag);
        owner_.receive_lag_samples_us_.push_back(micros(c.received_us - c.commit_us));
      }
    }
    batch_commits_.clear();
  }

  // A source transaction of the batch, for its lag samples (unix microseconds).
  struct BatchedCommit {
    int64_t commit_us = 0;    // its commit on the source
    int64_t received_us = 0;  // its Commit message arrived
    bool steady = false;      // it committed after mark_caught_up()
  };

  CatchUpStream& owner_;
  const CatchUpOptions& options_;
  std::unique_ptr<ChangeApplier> applier_;
  std::unique_ptr<ReplicationConnection> replication_;
  pgo::Decoder decoder_;
  pgo::RelationCache relations_;                   // as of the last commit received
  std::unordered_map<uint32_t, bool> configured_;  // relation oid -> a configured sharded table
  bool in_transaction_ = false;
  std::vector<pgo::Message> changes_;         // the open transaction's kept messages
  size_t batch_transactions_ = 0;             // transactions staged in the applier, not yet applied
  int64_t commit_unix_us_ = 0;                // of the open transaction (Begin's commit time)
  bool steady_ = false;                       // the open transaction committed after mark_caught_up()
  std::vector<BatchedCommit> batch_commits_;  // the batch's transactions (with rows of the buckets)
  Lsn batch_end_ = 0;                         // end LSN of the batch's last transaction
  Clock::time_point batch_started_{};
  Clock::time_point last_status_{};
  Clock::time_point last_reply_request_{};
  bool applied_ = false;
};

CatchUpStream::CatchUpStream(CatchUpOptions options) : options_(std::move(options)) {
  processed_.store(options_.start_lsn);
}

CatchUpStream::~CatchUpStream() { stop(); }

void CatchUpStream::start() {
  if (thread_.joinable()) return;
  stopping_.store(false);
  running_.store(true);
  thread_ = std::thread([this] { run(); });
}

void CatchUpStream::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_.store(false);
}

void CatchUpStream::run() {
  auto backoff = kFirstBackoff;
  while (!stopping_.load()) {
    Session session(*this);
    const Status status = session.run();
    if (stopping_.load()) break;
    if (session.applied()) backoff = kFirstBackoff;
    record_failure(status.is_ok() ? Status::server("08006", "catch-up session ended") : status);
    LOG_WARN("mover: migration %lld catch-up: %s; reconnecting in %lld ms",
             static_cast<long long>(options_.migration_id), status.message.c_str(),
             static_cast<long long>(backoff.count()));
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, backoff, [this] { return stopping_.load(); });
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.store(false);
  }
  cv_.notify_all();
}

void CatchUpStream::advance_processed(Lsn lsn) {
  Lsn current = processed_.load();
  bool moved = false;
  while (lsn > current && !(moved = processed_.compare_exchange_weak(current, lsn))) {}
  if (!moved) return;
  { std::lock_guard<std::mutex> lock(mu_); }  // a waiter between its check and its wait sees the notify
  cv_.notify_all();
}

void CatchUpStream::record_failure(const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = status;
    failed_at_ = processed_.load();
    has_error_.store(true);
    failures_.fetch_add(1);
  }
  cv_.notify_all();
}

void CatchUpStream::clear_failure(bool applied_transaction, Lsn reached) {
  if (!has_error_.load()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (applied_transaction || reached > failed_at_) {
    last_error_ = Status::ok();
    has_error_.store(false);
  }
}

bool CatchUpStream::wait_until_processed(Lsn target, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t failures_before = failures_.load();
  for (;;) {
    if (processed_.load() >= target) return true;
    if (!running_.load() || stopping_.load() || failures_.load() != failures_before) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    reply_wanted_.store(true);
    cv_.wait_until(lock, std::min(deadline, now + kReplyRequestEvery));
  }
}

void CatchUpStream::open_change_window() {
  std::lock_guard<std::mutex> lock(mu_);
  change_window_open_ = true;
  window_changed_buckets_.clear();
}

std::set<uint32_t> CatchUpStream::take_changed_buckets() {
  std::set<uint32_t> taken;
  std::lock_guard<std::mutex> lock(mu_);
  taken.swap(window_changed_buckets_);
  return taken;
}

void CatchUpStream::record_changed_buckets(const std::vector<uint32_t>& buckets) {
  std::lock_guard<std::mutex> lock(mu_);
  if (change_window_open_) window_changed_buckets_.insert(buckets.begin(), buckets.end());
}

bool CatchUpStream::mark_caught_up() {
  int64_t never = 0;
  return caught_up_at_us_.compare_exchange_strong(never, unix_micros_now());
}

uint64_t CatchUpStream::lag_bytes() const {
  const Lsn end = server_wal_end_.load(), processed = processed_.load();
  return end > processed ? end - processed : 0;
}

double CatchUpStream::lag_seconds() const {
  const int64_t pending = pending_commit_unix_us_.load();
  if (pending == 0) return 0.0;
  const int64_t lag = unix_micros_now() - pending;
  return lag > 0 ? static_cast<double>(lag) / 1e6 : 0.0;
}

namespace {

// Nearest-rank percentiles of microsecond samples, in milliseconds.
CatchUpStream::LagSummary summarize(std::vector<uint32_t> samples) {
  CatchUpStream::LagSummary out;
  out.transactions = samples.size();
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double p) {
    size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
    return static_cast<double>(samples[std::clamp<size_t>(rank, 1, samples.size()) - 1]) / 1000.0;
  };
  out.p50_ms = at(0.50);
  out.p99_ms = at(0.99);
  out.max_ms = static_cast<double>(samples.back()) / 1000.0;
  return out;
}

}  // namespace

CatchUpStream::LagSummary CatchUpStream::apply_lag(bool steady) const {
  std::vector<uint32_t> samples;
  {
    std::lock_guard<std::mutex> lock(mu_);
    samples = steady ? steady_lag_samples_us_ : lag_samples_us_;
  }
  return summarize(std::move(samples));
}

CatchUpStream::LagSummary CatchUpStream::receive_lag() const {
  std::vector<uint32_t> samples;
  {
    std::lock_guard<std::mutex> lock(mu_);
    samples = receive_lag_samples_us_;
  }
  return summarize(std::move(samples));
}

Status CatchUpStream::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace sw::mover
