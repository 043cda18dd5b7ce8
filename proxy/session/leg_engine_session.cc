// LegEngine: the session's own legs (docs/architecture.md §5.1, §5.6). The session reads the
// servers of its client's transaction with an engine of its own, with no targets: a server it
// takes joins as a leg (adopt), a server it waits for waits on a leg (wait_for, a bare target: no
// prologue, the session brings it to the client's state itself), and a server it gives back or
// lends to a run leaves (detach).
#include <utility>

#include "session/leg_engine.h"

namespace sw::session {

// A session's wait that failed is over: the leg is free again (a run's failed wait ends the run).
size_t LegEngine::free_leg(Target target) {
  size_t index = 0;
  while (index < legs_.size() && (legs_[index].backend != nullptr || legs_[index].waiting)) ++index;
  if (index == legs_.size()) {
    legs_.emplace_back(
        std::move(target), [this, index](pool::Backend* server) { on_server(index, server); },
        [this, index](const Status& why) {
          legs_[index].waiting = false;
          runner_.on_no_server(why);
        });
  } else {
    legs_[index].target = std::move(target);
  }
  Leg& leg = legs_[index];
  leg.cancelled = leg.held = leg.answered = false;
  leg.ready_owed = leg.injected = 0;
  leg.status = 'I';
  leg.check.reset();
  return index;
}

// A server that arrived for a leg's wait is that leg's already.
size_t LegEngine::adopt(pool::Backend& backend, int shard) {
  if (const size_t held = leg_of(backend); held < legs_.size()) return held;
  const size_t index =
      free_leg(Target{&backend.pool(), backend.target().shard, shard, std::string(), nullptr});
  legs_[index].backend = &backend;
  backend.attach(this);
  return index;
}

pool::Backend* LegEngine::wait_for(pool::Pool& pool, int shard, uint64_t client) {
  stop_waiting();
  Target target{&pool, pool.target().shard, shard, std::string(), nullptr};
  target.bare = true;
  const size_t index = free_leg(std::move(target));
  Leg& leg = legs_[index];
  leg.waiting = true;
  pool::Backend* backend = leg.wait.acquire(pool, client);
  if (backend != nullptr) leg.waiting = false;
  return backend;
}

void LegEngine::stop_waiting() {
  for (Leg& leg : legs_) {
    leg.wait.cancel();
    leg.waiting = false;
  }
}

pool::Pool* LegEngine::waiting_pool() const {
  for (const Leg& leg : legs_) {
    if (leg.waiting) return leg.target.pool;
  }
  return nullptr;
}

void LegEngine::detach(const pool::Backend& backend) {
  const size_t index = leg_of(backend);
  if (index == legs_.size()) return;
  Leg& leg = legs_[index];
  leg.backend->detach();
  if (std::exchange(leg.held, false)) leg.backend->connection().resume_reading();
  leg.backend = nullptr;
}

}  // namespace sw::session
