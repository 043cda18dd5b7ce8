// LegEngine: a run on an owner engine's legs, what the owner forwards to it, and the end of every
// run (docs/architecture.md §5.6). The run's legs are the owner's Leg objects: its servers never
// move from one engine to another; only the reading of a leg does, for the length of the run.
#include <utility>

#include "session/leg_engine.h"

namespace sw::session {

// A target whose shard has a server of the owner's is that leg, borrowed; any other takes a free
// leg of the owner (a bare target, its state reset), which waits for its server on the owner's
// ServerWait when the run starts. The owner's hold of a borrowed leg (its client's backpressure)
// ends: the run reads it.
void LegEngine::join_legs(std::vector<Target> targets) {
  for (size_t i = 0; i < targets.size(); ++i) {
    size_t slot = owner_->leg_on_shard(targets[i].index);
    const bool borrowed = slot < owner_->legs_.size();
    if (!borrowed) slot = owner_->free_leg(*targets[i].pool, targets[i].index);
    Leg& leg = *owner_->legs_[slot];
    if (borrowed && std::exchange(leg.held, false)) leg.backend->connection().resume_reading();
    leg.run = this;
    leg.run_index = i;
    leg.borrowed = borrowed;
    legs_.push_back(&leg);
  }
  run_targets_ = std::move(targets);
}

size_t LegEngine::leg_on_shard(int shard) const {
  for (size_t i = 0; i < legs_.size(); ++i) {
    const Leg& leg = *legs_[i];
    if (leg.backend != nullptr && leg.run == nullptr && !leg.violated && leg.target.index == shard) return i;
  }
  return legs_.size();
}

// The leg is the owner's again as the owner left it: read by the owner (a held one resumed), no
// count of the run's left on it. Its message check stays: one per server stream.
void LegEngine::end_run(Leg& leg) {
  leg.wait.cancel();
  leg.waiting = false;
  if (std::exchange(leg.held, false) && leg.backend != nullptr) leg.backend->connection().resume_reading();
  leg.run = nullptr;
  leg.borrowed = false;
  leg.answered = false;
  leg.ready_owed = leg.injected = 0;
  leg.refusal = Status::ok();
}

void LegEngine::close_violating(Leg& leg) {
  pool::Backend* backend = std::exchange(leg.backend, nullptr);
  if (backend == nullptr) return;
  backend->detach();
  backend->pool().release(backend, false);  // its unread bytes are nobody's to read
}

// A leg in a run: the run's runner only (the owner finds the leg without a server at the run's
// end).
void LegEngine::on_backend_lost(pool::Backend& backend, const Status& why) {
  const size_t index = leg_of(backend);
  if (index == legs_.size()) return;
  Leg& leg = *legs_[index];
  leg.backend = nullptr;  // the pool deletes it
  if (leg.run == nullptr) {
    runner_.on_leg_lost(index, why);
    return;
  }
  leg.run->runner_.on_leg_lost(leg.run_index, why);
}

void LegEngine::on_backend_drained(pool::Backend& backend) {
  const size_t index = leg_of(backend);
  if (index == legs_.size()) return;
  const Leg& leg = *legs_[index];
  if (leg.run != nullptr) {
    leg.run->runner_.on_leg_drained(leg.run_index);
  } else {
    runner_.on_leg_drained(index);
  }
}

std::vector<LegEngine::Handed> LegEngine::hand_over() {
  stopped_ = true;
  std::vector<Handed> out(legs_.size());
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = *legs_[i];
    if (!in_view(leg)) continue;  // handed over already
    leg.wait.cancel();
    leg.waiting = false;
    out[i].shard = target(i).index;
    out[i].leg = leg.slot;
    out[i].borrowed = leg.borrowed;
    out[i].ready_owed = leg.ready_owed;
    if (leg.violated) close_violating(leg);
    if (view_ != nullptr) {
      out[i].backend = leg.backend;
      end_run(leg);
      continue;
    }
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      if (leg.held) backend->connection().resume_reading();
      out[i].backend = backend;
    }
    leg.held = false;
  }
  start_watch_.end();
  return out;
}

}  // namespace sw::session
