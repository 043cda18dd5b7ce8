// The reads of one worker that read through the owned-rows filter (keyless scatter reads, COPY TO,
// INSERT ... SELECT on several shards) and still have a leg waiting for a server, by the
// directory version they were routed with (docs/architecture.md §7.3).
//
// Why: such a read counts each moving bucket on the shard that owned it when the read was routed.
// That holds only if each leg takes its snapshot before the cutover fences the source (and before
// it unfences the target), and the cutover does that only after every router acknowledged the
// MIGRATING version. So a worker acknowledges a new version only once every read routed with an
// older one has sent its statement on every leg; a read still waiting for a server when the
// worker's patience runs out is failed (40001, retryable) instead of counting a moving bucket
// nowhere or twice.
//
// Pure bookkeeping: the worker owns the timer and calls expire_older(); the runners call
// StartWatch::end() once no leg waits any more.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "common/status.h"

namespace sw::session {

class StartingReads {
 public:
  using Expire = std::function<void(const Status&)>;

  // A read routed with directory `version` has legs waiting for servers; `expire` fails it (it
  // must end the read's registration, directly or through its StartWatch). Returns its id.
  uint64_t add(uint64_t version, Expire expire);
  // Every leg of read `id` sent its statement, or the read ended. Unknown ids are ignored.
  void started(uint64_t id);
  // `done` runs once no read routed with a version below `version` still waits: now, or from
  // the started() that ends the last of them.
  void after_older(uint64_t version, std::function<void()> done);
  // Fails every read routed with a version below `version` that still waits, with `why`.
  void expire_older(uint64_t version, const Status& why);

  size_t waiting() const { return reads_.size(); }

 private:
  struct Read {
    uint64_t version = 0;
    Expire expire;
  };
  struct Waiter {
    uint64_t version = 0;
    std::function<void()> done;
  };
  bool any_older(uint64_t version) const;
  void run_waiters();

  uint64_t next_id_ = 1;
  std::map<uint64_t, Read> reads_;
  std::vector<Waiter> waiters_;
};

// For runners whose legs have `waiting` (for a server), `answered` (the server answered the
// statement itself) and `done`: whether every leg has started, and whether one still waits.
template <class Leg>
bool every_leg_started(const std::vector<Leg>& legs) {
  for (const Leg& leg : legs) {
    if (leg.waiting || !(leg.answered || leg.done)) return false;
  }
  return true;
}
template <class Leg>
bool any_leg_waiting(const std::vector<Leg>& legs) {
  for (const Leg& leg : legs) {
    if (leg.waiting) return true;
  }
  return false;
}

// A runner's registration in StartingReads, ended once (end() is idempotent; the destructor ends
// it too, so a runner destroyed mid-wait never holds an acknowledgement).
class StartWatch {
 public:
  StartWatch() = default;
  StartWatch(const StartWatch&) = delete;
  StartWatch& operator=(const StartWatch&) = delete;
  ~StartWatch() { end(); }

  // Registers a runner over `legs` (which outlive this watch). Expiring it fails the run with
  // `fail` while a leg still waits for a server: that leg must not start after the
  // acknowledgement. Otherwise every leg was sent a while ago and counts as started; a backend
  // holding its statement unread that long is the residual risk (docs/architecture.md §7.3).
  template <class Leg>
  void begin(StartingReads& reads, uint64_t version, const std::vector<Leg>& legs,
             std::function<void(const Status&)> fail) {
    begin(reads, version, [this, &legs, fail = std::move(fail)](const Status& why) {
      if (any_leg_waiting(legs)) {
        fail(why);
      } else {
        end();
      }
    });
  }
  void begin(StartingReads& reads, uint64_t version, StartingReads::Expire expire);
  // Ends the registration once every leg has started (every_leg_started).
  template <class Leg>
  void end_once_started(const std::vector<Leg>& legs) {
    if (every_leg_started(legs)) end();
  }
  void end();
  bool active() const { return reads_ != nullptr; }

 private:
  StartingReads* reads_ = nullptr;
  uint64_t id_ = 0;
};

}  // namespace sw::session
