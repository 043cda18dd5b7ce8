// EveryShardTransaction: one server per target shard, each in a transaction (docs/architecture.md
// §5.10).
#include "session/every_shard_transaction.h"

#include <utility>

#include "wire/messages.h"

namespace sw::session {

EveryShardTransaction::EveryShardTransaction(std::vector<Target> targets, std::string session_state,
                                             Runner& runner)
    : session_state_(std::move(session_state)), runner_(runner) {
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
}

void EveryShardTransaction::on_backend_ready(pool::Backend* backend) {
  for (size_t i = 0; i < legs_.size() && !stopped_; ++i) {
    Leg& leg = legs_[i];
    if (!leg.waiting || leg.backend != nullptr || leg.target.pool != &backend->pool()) continue;
    leg.waiting = false;
    arrived(i, backend);
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
    wire::encode_query(prologue, "RESET ALL;" + session_state_);
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
  if (size_t leg = leg_of(backend); leg < legs_.size()) runner_.on_leg_readable(leg);
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

void EveryShardTransaction::release(size_t leg, bool clean) {
  Leg& each = legs_[leg];
  if (each.waiting) each.target.pool->cancel_wait(this);
  each.waiting = false;
  if (each.target.lent != nullptr) return;  // the session's: hand_over gives it back
  if (pool::Backend* backend = std::exchange(each.backend, nullptr)) {
    backend->detach();
    each.target.pool->release(backend, clean);
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
  return out;
}

}  // namespace sw::session
