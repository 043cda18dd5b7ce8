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

  // Calls `callback` after `timeout_ms` of Loop::active_ms (time the process was stopped does not
  // count: a one-shot timer that comes due early by that measure waits the rest), then every
  // `repeat_ms` if non-zero. Restarts if running.
  void start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> callback);
  void stop();
  // A repeating timer that should not keep the loop alive by itself.
  void unref();

 private:
  static void on_fire(uv_timer_t* handle);

  Loop& loop_;
  uv_timer_t* handle_;
  std::function<void()> callback_;
  uint64_t due_active_ms_ = 0;  // one-shot: when it is due, in Loop::active_ms
  bool one_shot_ = false;
};

// Milliseconds of the loop's monotonic clock without stopped time (Loop::active_ms).
uint64_t now_ms(Loop& loop);

}  // namespace sw::net
