// EveryShardTransaction: one server per target shard, each in a transaction (docs/architecture.md
// §5.10).
#include "session/every_shard_transaction.h"

#include <utility>

#include "common/log.h"
#include "session/session_state.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::session {

EveryShardTransaction::EveryShardTransaction(std::vector<Target> targets, std::string session_state,
                                             std::string what, Runner& runner)
    : session_state_(std::move(session_state)), what_(std::move(what)), runner_(runner) {
  for (auto& target : targets) legs_.push_back(Leg{std::move(target)});
}

// Destroyed while holding lent servers (the session closes mid-run): they are closed too, as
// their transactions are in an unknown state.
EveryShardTransaction::~EveryShardTransaction() {
  release_all(false);
  for (Leg& leg : legs_) {
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      backend->pool().release(backend, false);
    }
  }
}

std::vector<std::string> EveryShardTransaction::shard_names() const {
  std::vector<std::string> names;
  names.reserve(legs_.size());
  for (const Leg& leg : legs_) names.push_back(leg.target.shard);
  return names;
}

void EveryShardTransaction::watch_start(StartingReads& reads, uint64_t version) {
  start_watch_.begin(reads, version, legs_, [this](const Status& why) { runner_.on_no_server(why); });
}

// A leg counts as started once its statement was sent (an INSERT ... SELECT answers only at its end).
void EveryShardTransaction::end_watch_once_started() {
  if (!any_leg_waiting(legs_)) start_watch_.end();
}

void EveryShardTransaction::start() {
  for (Leg& leg : legs_) {
    leg.waiting = leg.target.lent == nullptr;
    if (leg.target.lent != nullptr) {
      leg.backend = leg.target.lent;
      leg.backend->attach(this);
    }
  }
  for (size_t i = 0; i < legs_.size() && !stopped_; ++i) {
    if (legs_[i].target.lent != nullptr && legs_[i].backend != nullptr) arrived(i, legs_[i].backend);
  }
  for (Leg& leg : legs_) {
    if (stopped_) return;
    if (!leg.waiting) continue;
    if (pool::Backend* backend = leg.target.pool->acquire(this)) on_backend_ready(backend);
  }
  end_watch_once_started();
}

void EveryShardTransaction::on_backend_ready(pool::Backend* backend) {
  for (size_t i = 0; i < legs_.size() && !stopped_; ++i) {
    Leg& leg = legs_[i];
    if (!leg.waiting || leg.backend != nullptr || leg.target.pool != &backend->pool()) continue;
    leg.waiting = false;
    arrived(i, backend);
    end_watch_once_started();
    return;
  }
  backend->pool().release(backend, true);  // nobody waits for it any more
}

void EveryShardTransaction::arrived(size_t index, pool::Backend* backend) {
  Leg& leg = legs_[index];
  leg.backend = backend;
  backend->attach(this);
  std::string prologue;
  int owed = 0;
  if (backend->applied_state != session_state_) {
    wire::encode_query(prologue, std::string(SessionState::kResetSql) + session_state_);
    backend->applied_state = session_state_;
    ++owed;
  }
  if (!leg.target.begin.empty()) {
    wire::encode_query(prologue, leg.target.begin);
    ++owed;
  }
  runner_.on_leg_server(index, std::move(prologue), owed);
}

void EveryShardTransaction::on_backend_failed(const Status& why) { runner_.on_no_server(why); }

void EveryShardTransaction::on_backend_readable(pool::Backend& backend) {
  if (size_t leg = leg_of(backend); leg < legs_.size()) read(leg);
}

// A message is consumed only after the runner saw it (its views point into the input), and only
// while the leg still holds the server: a runner that released or handed it over ended the leg.
void EveryShardTransaction::read(size_t index) {
  Leg& leg = legs_[index];
  wire::Limits limits;
  while (pool::Backend* backend = leg.backend) {
    net::Connection& connection = backend->connection();
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    const wire::Frame& frame = result.frame;
    Status handled = result.status == wire::FrameStatus::Error ? Status::server("08P01", result.error)
                                                               : leg.check.on_message(frame.type, frame.body);
    if (!handled) {
      violation(index, *backend, handled);
      return;
    }
    if (!kept_from_runner(*backend, frame.type, frame.body)) {
      const std::string_view whole(frame.body.data() + frame.body.size() - frame.size, frame.size);
      handled = runner_.on_leg_message(index, Message{frame.type, whole, frame.body});
      if (leg.backend != backend) return;
    }
    connection.consume(frame.size);
    if (!handled) {
      violation(index, *backend, handled);
      return;
    }
    if (frame.type == 'Z') runner_.on_leg_ready(index);
  }
}

// ParameterStatus is the server's own (the pool keeps it for the session settings); a
// notification belongs to no client of this run.
bool EveryShardTransaction::kept_from_runner(pool::Backend& backend, char type, std::string_view body) {
  if (type == 'S') {
    if (auto p = wire::decode_parameter_status(body)) backend.set_parameter(p->name, p->value);
    return true;
  }
  return type == 'A';
}

void EveryShardTransaction::violation(size_t leg, const pool::Backend& backend, const Status& why) {
  LOG_WARN("server=s%llu shard=%s protocol violation by server during %s, dropping it: %s",
           (unsigned long long)backend.id(), shard(leg).c_str(), what_.c_str(), why.message.c_str());
  runner_.on_leg_violation(
      leg, Status::server("08P01", "shard " + shard(leg) + " sent an invalid message: " + why.message));
}

Status EveryShardTransaction::end(bool in_transaction, bool clean, const Status& error,
                                  const HandBack& hand_back) {
  if (!in_transaction) release_all(clean);
  std::vector<Handed> handed = hand_over();
  for (size_t i = 0; i < handed.size(); ++i) runner_.on_leg_handed(i, handed[i]);
  return hand_back ? hand_back(std::move(handed), error) : Status::ok();
}

void EveryShardTransaction::end_settled(bool in_transaction, bool clean, const Status& error,
                                        const HandBack& hand_back) {
  const Status verdict = end(in_transaction, clean, error, hand_back);
  if (!verdict.is_ok())
    LOG_WARN("unexpected refusal of a finished %s: %s", what_.c_str(), verdict.message.c_str());
}

Status EveryShardTransaction::error_of(std::string_view body) {
  auto fields = wire::decode_error_fields(body);
  return fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                : Status::server("08P01", "a malformed ErrorResponse");
}

void EveryShardTransaction::on_backend_lost(pool::Backend& backend, const Status& why) {
  const size_t leg = leg_of(backend);
  if (leg == legs_.size()) return;
  legs_[leg].backend = nullptr;  // the pool deletes it
  runner_.on_leg_lost(leg, why);
}

void EveryShardTransaction::on_backend_drained(pool::Backend& backend) {
  if (size_t leg = leg_of(backend); leg < legs_.size()) runner_.on_leg_drained(leg);
}

size_t EveryShardTransaction::leg_of(const pool::Backend& backend) const {
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i].backend == &backend) return i;
  }
  return legs_.size();
}

void EveryShardTransaction::write(size_t leg, std::string_view bytes) {
  if (legs_[leg].backend != nullptr) legs_[leg].backend->connection().write(bytes);
}

void EveryShardTransaction::send_query(size_t leg, const std::string& sql) {
  std::string out;
  wire::encode_query(out, sql);
  write(leg, out);
}

void EveryShardTransaction::cancel(size_t leg) {
  Leg& each = legs_[leg];
  if (each.backend == nullptr) return;
  each.target.pool->send_cancel(*each.backend);
  each.cancelled = true;
}

void EveryShardTransaction::release(size_t leg, bool clean) {
  Leg& each = legs_[leg];
  if (each.waiting) each.target.pool->cancel_wait(this);
  each.waiting = false;
  end_watch_once_started();
  if (each.target.lent != nullptr) return;  // the session's: hand_over gives it back
  if (pool::Backend* backend = std::exchange(each.backend, nullptr)) {
    backend->detach();
    each.target.pool->release(backend, clean && !each.cancelled);
  }
}

void EveryShardTransaction::release_all(bool clean) {
  stopped_ = true;
  for (size_t i = 0; i < legs_.size(); ++i) release(i, clean);
}

std::vector<EveryShardTransaction::Handed> EveryShardTransaction::hand_over() {
  stopped_ = true;
  std::vector<Handed> out(legs_.size());
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = legs_[i];
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    leg.waiting = false;
    out[i].shard = leg.target.index;
    out[i].lent = leg.target.lent != nullptr;
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      out[i].backend = backend;
    }
  }
  start_watch_.end();
  return out;
}

}  // namespace sw::session
