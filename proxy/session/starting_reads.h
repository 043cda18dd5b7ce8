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

// A runner's registration in StartingReads, ended once (end() is idempotent; the destructor ends
// it too, so a runner destroyed mid-wait never holds an acknowledgement).
class StartWatch {
 public:
  StartWatch() = default;
  StartWatch(const StartWatch&) = delete;
  StartWatch& operator=(const StartWatch&) = delete;
  ~StartWatch() { end(); }

  // Registers a runner reading at directory `version`; `expire` runs if a cutover expires the
  // registration while it is active (LegEngine::watch_start decides what that fails).
  void begin(StartingReads& reads, uint64_t version, StartingReads::Expire expire);
  void end();
  bool active() const { return reads_ != nullptr; }

 private:
  StartingReads* reads_ = nullptr;
  uint64_t id_ = 0;
};

}  // namespace sw::session
