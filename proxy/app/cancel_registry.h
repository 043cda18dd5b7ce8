// Process-wide map from the BackendKeyData the proxy gave a client to the worker that owns the
// client. A CancelRequest can arrive on any worker; it is handed to the owner, which cancels
// only what that client's server is running at that moment.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "wire/startup.h"

namespace sw::app {

class Worker;

class CancelRegistry {
 public:
  // A fresh random key for a client of `owner`.
  wire::CancelKey add(Worker* owner);
  void remove(wire::CancelKey key);
  // The worker owning `key`, or nullptr.
  Worker* find(wire::CancelKey key) const;

 private:
  static uint64_t pack(wire::CancelKey key) { return (uint64_t{key.pid} << 32) | key.secret; }
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Worker*> owners_;
};

}  // namespace sw::app
