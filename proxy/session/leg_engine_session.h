// LegEngine: the session's own engine, once per transaction (docs/architecture.md §5.1, §5.6):
// a leg waits for the server a request needs (wait_for) and lets go of it when the session gives
// it back (detach). Inline: they run for every transaction of every session. Included by
// leg_engine.h only; the rest of the session's engine is leg_engine_session.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "session/leg_engine.h"

namespace sw::session {

// The session's engine, once per transaction (wait_for, then detach): inline.
inline void LegEngine::stop_waiting() {
  for (const auto& slot : legs_) {
    if (std::exchange(slot->waiting, false)) slot->wait.cancel();
  }
}

// The session's legs are bare targets, one per shard it used: a server of that shard takes the
// shard's leg again when it is free (its target as it was); else any free leg is retargeted, else
// a new one is made. A failed wait leaves its leg free (a run's failed wait ends the run).
inline size_t LegEngine::free_leg(pool::Pool& pool, int shard) {
  size_t index = legs_.size();
  for (size_t i = 0; i < legs_.size(); ++i) {
    const Leg& leg = *legs_[i];
    if (leg.backend != nullptr || leg.waiting) continue;
    index = i;
    if (leg.target.index == shard) break;
  }
  if (index == legs_.size()) index = add_bare_leg();
  Leg& leg = *legs_[index];
  if (leg.target.pool != &pool) retarget(leg, pool);
  leg.target.index = shard;
  leg.cancelled = leg.held = leg.answered = false;
  leg.ready_owed = leg.injected = 0;
  leg.status = 'I';
  leg.check.reset();
  return index;
}

// A server the pool had idle goes to the leg at once, as one that comes later does (arrived).
inline pool::Backend* LegEngine::wait_for(pool::Pool& pool, int shard, uint64_t client) {
  stop_waiting();
  const size_t index = free_leg(pool, shard);
  Leg& leg = *legs_[index];
  leg.waiting = true;
  pool::Backend* backend = leg.wait.acquire(pool, client);
  if (backend != nullptr) {
    leg.waiting = false;
    leg.backend = backend;
    backend->attach(this, index);
  }
  return backend;
}

inline void LegEngine::detach(const pool::Backend& backend) {
  const size_t index = leg_of(backend);
  if (index == legs_.size()) return;
  Leg& leg = *legs_[index];
  leg.backend->detach();
  if (std::exchange(leg.held, false)) leg.backend->connection().resume_reading();
  leg.backend = nullptr;
}

}  // namespace sw::session
