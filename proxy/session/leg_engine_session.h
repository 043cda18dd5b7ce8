// LegEngine: the session's own legs (docs/architecture.md §5.1, §5.6). The session reads the
// servers of its client's transaction with an engine of its own, with no targets: a server it
// takes joins as a leg (adopt), a server it waits for waits on a leg (wait_for, a bare target: no
// prologue, the session brings it to the client's state itself), and a server it gives back
// leaves (detach); a run reads the session's legs in place (leg_engine_run.cc). Inline: wait_for
// and detach run for every transaction of every session. Included by leg_engine.h only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "session/leg_engine.h"

namespace sw::session {

// A leg in a run waits for the run, not for this engine.
inline void LegEngine::stop_waiting() {
  for (Leg* leg : legs_) {
    if (leg->waiting && in_view(*leg)) {
      leg->waiting = false;
      leg->wait.cancel();
    }
  }
}

// The session's legs are bare targets, one per shard it used: a server of that shard takes the
// shard's leg again when it is free (its target as it was); else any free leg is retargeted, else
// a new one is made. A failed wait leaves its leg free (a run's failed wait ends the run). A leg
// in a run is not free.
inline size_t LegEngine::free_leg(pool::Pool& pool, int shard) {
  size_t index = legs_.size();
  for (size_t i = 0; i < legs_.size(); ++i) {
    const Leg& leg = *legs_[i];
    if (leg.backend != nullptr || leg.waiting || leg.run != nullptr) continue;
    index = i;
    if (leg.target.index == shard) break;
  }
  if (index == legs_.size()) index = add_bare_leg();
  Leg& leg = *legs_[index];
  if (leg.target.pool != &pool) retarget(leg, pool);
  leg.target.index = shard;
  leg.cancelled = leg.held = leg.answered = leg.violated = false;
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

inline pool::Pool* LegEngine::waiting_pool() const {
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i]->waiting && in_view(*legs_[i])) return target(i).pool;
  }
  return nullptr;
}

inline size_t LegEngine::adopt_free(pool::Backend& backend, int shard) {
  const size_t index = free_leg(backend.pool(), shard);
  legs_[index]->backend = &backend;
  backend.attach(this, index);
  return index;
}

// Cold: the session uses a shard it has no leg for, or a leg's shard changes.
inline size_t LegEngine::add_bare_leg() {
  const size_t index = legs_.size();
  Target bare;
  bare.begin.clear();
  bare.bare = true;
  owned_.push_back(std::make_unique<Leg>(
      std::move(bare), [this, index](pool::Backend* server) { on_server(index, server); },
      [this, index](const Status& why) {
        Leg& leg = *legs_[index];
        leg.waiting = false;
        (leg.run != nullptr ? leg.run->runner_ : runner_).on_no_server(why);  // a run's wait: the run's
      }));
  owned_.back()->slot = index;
  legs_.push_back(owned_.back().get());
  return index;
}

inline void LegEngine::retarget(Leg& leg, pool::Pool& pool) {
  leg.target.pool = &pool;
  leg.target.shard = pool.target().shard;
}

}  // namespace sw::session
