#include "app/cancel_registry.h"

#include "auth/scram.h"

namespace sw::app {

wire::CancelKey CancelRegistry::add(Worker* owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (;;) {
    wire::CancelKey key;
    auth::random_bytes(&key.pid, sizeof key.pid);
    auth::random_bytes(&key.secret, sizeof key.secret);
    key.pid &= 0x7fffffff;  // clients treat the pid as a positive int32
    if (key.pid == 0) continue;
    if (owners_.emplace(pack(key), owner).second) return key;
  }
}

void CancelRegistry::remove(wire::CancelKey key) {
  std::lock_guard<std::mutex> lock(mutex_);
  owners_.erase(pack(key));
}

Worker* CancelRegistry::find(wire::CancelKey key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = owners_.find(pack(key));
  return it == owners_.end() ? nullptr : it->second;
}

}  // namespace sw::app
