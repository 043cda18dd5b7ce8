// One libuv event loop (a worker, or the main thread's signal loop). Owns the cross-thread post
// queue and the end-of-iteration write flush, so handlers can write many messages per callback
// and pay one syscall per connection per loop iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

typedef struct uv_loop_s uv_loop_t;
typedef struct uv_async_s uv_async_t;
typedef struct uv_check_s uv_check_t;
typedef struct uv_prepare_s uv_prepare_t;

namespace sw::net {

class Connection;

class Loop {
 public:
  Loop();
  ~Loop();
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  uv_loop_t* raw() { return loop_.get(); }
  // Runs until stop() is called or nothing is left to do.
  void run();
  // Thread-safe: makes run() return after the current iteration.
  void stop();
  // Thread-safe: runs `task` on this loop's thread.
  void post(std::function<void()> task);
  // Runs `work` on libuv's thread pool (blocking I/O), then `after` on this loop's thread.
  void run_blocking(std::function<void()> work, std::function<void()> after);

  // Called by Connection when it has buffered output; flushed after this iteration's callbacks.
  void mark_dirty(Connection* connection);
  // Called by Connection when a buffer that grew large became empty. At the end of each iteration
  // the connection is asked to release its empty buffers; one that moved bytes in that iteration
  // (streaming) keeps them and is asked again next time, so buffers are not freed and regrown per
  // iteration.
  void mark_trim(Connection* connection);
  // Milliseconds of a monotonic clock that does not count time the process was stopped
  // (SIGSTOP, a frozen VM): a poll that returned more than 250 ms after its timeout, or more than
  // 1 s between two iterations, is taken as stopped time. Deadlines of waits that the process
  // serves (server login, pool waits, timers) use it, so they do not expire for time in which
  // nobody could act; leases that guard correctness use a wall clock instead.
  uint64_t active_ms();
  // Counts iterations (end-of-iteration checks); connections note when they last moved bytes.
  uint64_t iteration() const { return iteration_; }
  void forget(Connection* connection);

 private:
  static void on_async(uv_async_t* handle);
  static void on_check(uv_check_t* handle);
  static void on_prepare(uv_prepare_t* handle);
  void account_stopped(uint64_t now_ms);
  void flush_dirty();
  void trim_idle();

  std::unique_ptr<uv_loop_t> loop_;
  std::unique_ptr<uv_async_t> async_;
  std::unique_ptr<uv_check_t> check_;
  std::unique_ptr<uv_prepare_t> prepare_;
  // Stopped-time accounting (active_ms), in uv_hrtime milliseconds.
  bool in_poll_ = false;
  int poll_timeout_ms_ = -1;  // of the poll under way (-1: none)
  uint64_t mark_ms_ = 0;      // when the poll, or the stretch between polls, began
  uint64_t credited_ms_ = 0;  // of the time since mark_ms_, already counted as stopped
  uint64_t stopped_ms_ = 0;   // total
  std::mutex posted_mutex_;
  std::vector<std::function<void()>> posted_;
  bool stopping_ = false;
  std::vector<Connection*> dirty_;
  std::vector<Connection*> trim_;
  uint64_t iteration_ = 0;
};

}  // namespace sw::net
