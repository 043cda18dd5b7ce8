// A libuv timer owned by an object on the same loop; stops and releases itself on destruction.
#pragma once

#include <cstdint>
#include <functional>

typedef struct uv_timer_s uv_timer_t;

namespace sw::net {

class Loop;

class Timer {
 public:
  explicit Timer(Loop& loop);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Calls `callback` after `timeout_ms`, then every `repeat_ms` if non-zero. Restarts if running.
  void start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> callback);
  void stop();
  // A repeating timer that should not keep the loop alive by itself.
  void unref();

 private:
  uv_timer_t* handle_;
  std::function<void()> callback_;
};

// Milliseconds from the loop's monotonic clock (cached per iteration).
uint64_t now_ms(Loop& loop);

}  // namespace sw::net
