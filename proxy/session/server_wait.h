// One wait for a server of one pool (docs/architecture.md §5.8): the only pool::Pool::Waiter of
// the session, for its own servers (login, the transaction's legs) and for the leg engine's legs
// (§5.6), so that waiting, the pool's timeout (query_wait_timeout) and the end of a wait are
// handled in one place.
//
// acquire() returns a server at once when the pool has one idle; otherwise the wait is registered
// with the pool and its answer comes later, exactly once: `ready` with the server, or `failed`
// with why there is none (the wait timed out, or the server's login failed). The wait is over
// before either is called (waiting() is false, and the callback may start another wait or destroy
// the owner). cancel(), and the destructor, stop a wait: nothing is called after it.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "common/status.h"
#include "pool/pool.h"

namespace sw::session {

class ServerWait final : private pool::Pool::Waiter {
 public:
  using Ready = std::function<void(pool::Backend* backend)>;
  using Failed = std::function<void(const Status& why)>;

  ServerWait(Ready ready, Failed failed) : ready_(std::move(ready)), failed_(std::move(failed)) {}
  ~ServerWait() override { cancel(); }
  ServerWait(const ServerWait&) = delete;
  ServerWait& operator=(const ServerWait&) = delete;

  // A server of `pool` for client `client` (0: any; else one it used last is preferred, whose
  // sequence values are its own): returned when one is idle, else null and waiting. One wait at a
  // time: a wait already running is cancelled first.
  pool::Backend* acquire(pool::Pool& pool, uint64_t client) {
    cancel();
    pool::Backend* backend = pool.acquire(this, client);
    if (backend == nullptr) pool_ = &pool;
    return backend;
  }
  // Stops waiting, if it waits.
  void cancel() {
    if (pool::Pool* pool = std::exchange(pool_, nullptr)) pool->cancel_wait(this);
  }
  bool waiting() const { return pool_ != nullptr; }
  // The pool waited for; null when not waiting.
  pool::Pool* pool() const { return pool_; }

 private:
  void on_backend_ready(pool::Backend* backend) override {
    pool_ = nullptr;
    ready_(backend);
  }
  void on_backend_failed(const Status& why) override {
    pool_ = nullptr;
    failed_(why);
  }

  Ready ready_;
  Failed failed_;
  pool::Pool* pool_ = nullptr;
};

}  // namespace sw::session
