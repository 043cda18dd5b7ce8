#include "net/loop.h"

#include <uv.h>

#include <algorithm>

#include "net/connection.h"

namespace sw::net {

Loop::Loop()
    : loop_(std::make_unique<uv_loop_t>()),
      async_(std::make_unique<uv_async_t>()),
      check_(std::make_unique<uv_check_t>()),
      prepare_(std::make_unique<uv_prepare_t>()) {
  uv_loop_init(loop_.get());
  uv_async_init(loop_.get(), async_.get(), &Loop::on_async);
  async_->data = this;
  uv_check_init(loop_.get(), check_.get());
  check_->data = this;
  uv_check_start(check_.get(), &Loop::on_check);
  uv_unref(reinterpret_cast<uv_handle_t*>(check_.get()));
  uv_prepare_init(loop_.get(), prepare_.get());
  prepare_->data = this;
  uv_prepare_start(prepare_.get(), &Loop::on_prepare);
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_.get()));
  mark_ms_ = uv_hrtime() / 1000000;
}

Loop::~Loop() {
  // Tasks never run are dropped here, while the loop and its bookkeeping are alive:
  // a task may own a Connection whose destructor closes a handle and calls forget().
  for (;;) {
    std::vector<std::function<void()>> dropped;
    {
      std::lock_guard<std::mutex> lock(posted_mutex_);
      dropped.swap(posted_);
    }
    if (dropped.empty()) break;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(async_.get()), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(check_.get()), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(prepare_.get()), nullptr);
  // Let every pending close callback run before the loop memory goes away.
  uv_run(loop_.get(), UV_RUN_DEFAULT);
  uv_loop_close(loop_.get());
}

void Loop::run() {
  while (!stopping_) {
    if (uv_run(loop_.get(), UV_RUN_ONCE) == 0) break;
  }
}

void Loop::stop() {
  post([this] { stopping_ = true; });
}

void Loop::post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(posted_mutex_);
    posted_.push_back(std::move(task));
  }
  uv_async_send(async_.get());
}

namespace {
struct BlockingWork {
  uv_work_t request;
  std::function<void()> work;
  std::function<void()> after;
};
}  // namespace

void Loop::run_blocking(std::function<void()> work, std::function<void()> after) {
  auto* job = new BlockingWork{{}, std::move(work), std::move(after)};
  job->request.data = job;
  int rc = uv_queue_work(
      loop_.get(), &job->request, [](uv_work_t* r) { static_cast<BlockingWork*>(r->data)->work(); },
      [](uv_work_t* r, int) {
        std::unique_ptr<BlockingWork> done(static_cast<BlockingWork*>(r->data));
        done->after();
      });
  if (rc != 0) {
    // Only fails for a null callback; run inline rather than lose the answer.
    std::unique_ptr<BlockingWork> done(job);
    done->work();
    done->after();
  }
}

void Loop::on_async(uv_async_t* handle) {
  auto* self = static_cast<Loop*>(handle->data);
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(self->posted_mutex_);
    tasks.swap(self->posted_);
  }
  for (auto& task : tasks) task();
  self->flush_dirty();
}

namespace {
constexpr uint64_t kLatePoll = 250;      // ms past a poll's timeout
constexpr uint64_t kStalledTurn = 1000;  // ms between two polls
}  // namespace

void Loop::account_stopped(uint64_t now_ms) {
  if (in_poll_ && poll_timeout_ms_ < 0) return;  // an unbounded poll may sleep any time
  uint64_t expected = in_poll_ ? static_cast<uint64_t>(poll_timeout_ms_) : 0;
  uint64_t elapsed = now_ms - mark_ms_ - credited_ms_;
  if (elapsed <= expected + (in_poll_ ? kLatePoll : kStalledTurn)) return;
  stopped_ms_ += elapsed - expected;
  credited_ms_ += elapsed - expected;
}

uint64_t Loop::active_ms() {
  uint64_t now = uv_hrtime() / 1000000;
  account_stopped(now);
  return now - stopped_ms_;
}

void Loop::on_prepare(uv_prepare_t* handle) {
  auto* self = static_cast<Loop*>(handle->data);
  uint64_t now = uv_hrtime() / 1000000;
  self->account_stopped(now);
  self->in_poll_ = true;
  self->poll_timeout_ms_ = uv_backend_timeout(self->loop_.get());
  self->mark_ms_ = now;
  self->credited_ms_ = 0;
}

void Loop::on_check(uv_check_t* handle) {
  auto* self = static_cast<Loop*>(handle->data);
  uint64_t now = uv_hrtime() / 1000000;
  self->account_stopped(now);
  self->in_poll_ = false;
  self->mark_ms_ = now;
  self->credited_ms_ = 0;
  self->trim_idle();
  self->flush_dirty();
  ++self->iteration_;
}

void Loop::mark_dirty(Connection* connection) { dirty_.push_back(connection); }

void Loop::mark_trim(Connection* connection) { trim_.push_back(connection); }

void Loop::forget(Connection* connection) {
  std::replace(dirty_.begin(), dirty_.end(), connection, static_cast<Connection*>(nullptr));
  std::replace(trim_.begin(), trim_.end(), connection, static_cast<Connection*>(nullptr));
}

void Loop::trim_idle() {
  std::vector<Connection*> due;
  due.swap(trim_);  // a connection still busy marks itself again, for the next iteration
  for (Connection* connection : due) {
    if (connection != nullptr) connection->release_idle_buffers();
  }
}

void Loop::flush_dirty() {
  // A flush may close a connection (write error), which calls forget(): index, don't iterate.
  for (size_t i = 0; i < dirty_.size(); ++i) {
    if (Connection* connection = dirty_[i]) {
      dirty_[i] = nullptr;
      connection->flush();
    }
  }
  dirty_.clear();
}

}  // namespace sw::net
