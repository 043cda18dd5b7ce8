// LegEngine: the session's own legs (docs/architecture.md §5.1, §5.6). The session reads the
// servers of its client's transaction with an engine of its own, with no targets: a server it
// takes joins as a leg (adopt), a server it waits for waits on a leg (wait_for, a bare target: no
// prologue, the session brings it to the client's state itself), and a server it gives back or
// lends to a run leaves (detach).
#include <memory>
#include <utility>

#include "session/leg_engine.h"

namespace sw::session {

void LegEngine::retarget(Leg& leg, pool::Pool& pool) {
  leg.target.pool = &pool;
  leg.target.shard = pool.target().shard;
}

size_t LegEngine::add_bare_leg() {
  const size_t index = legs_.size();
  Target bare;
  bare.begin.clear();
  bare.bare = true;
  legs_.push_back(std::make_unique<Leg>(
      std::move(bare), [this, index](pool::Backend* server) { on_server(index, server); },
      [this, index](const Status& why) {
        legs_[index]->waiting = false;
        runner_.on_no_server(why);
      }));
  return index;
}

size_t LegEngine::adopt_free(pool::Backend& backend, int shard) {
  const size_t index = free_leg(backend.pool(), shard);
  legs_[index]->backend = &backend;
  backend.attach(this, index);
  return index;
}

pool::Pool* LegEngine::waiting_pool() const {
  for (const auto& slot : legs_) {
    const Leg& leg = *slot;
    if (leg.waiting) return leg.target.pool;
  }
  return nullptr;
}

}  // namespace sw::session
