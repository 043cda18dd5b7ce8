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
  // Counts iterations (end-of-iteration checks); connections note when they last moved bytes.
  uint64_t iteration() const { return iteration_; }
  void forget(Connection* connection);

 private:
  static void on_async(uv_async_t* handle);
  static void on_check(uv_check_t* handle);
  void flush_dirty();
  void trim_idle();

  std::unique_ptr<uv_loop_t> loop_;
  std::unique_ptr<uv_async_t> async_;
  std::unique_ptr<uv_check_t> check_;
  std::mutex posted_mutex_;
  std::vector<std::function<void()>> posted_;
  bool stopping_ = false;
  std::vector<Connection*> dirty_;
  std::vector<Connection*> trim_;
  uint64_t iteration_ = 0;
};

}  // namespace sw::net
