#include "net/timer.h"

#include <uv.h>

#include "net/loop.h"

namespace sw::net {

Timer::Timer(Loop& loop) : handle_(new uv_timer_t) {
  uv_timer_init(loop.raw(), handle_);
  handle_->data = this;
}

Timer::~Timer() {
  uv_timer_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_timer_t*>(handle); });
}

void Timer::start(uint64_t timeout_ms, uint64_t repeat_ms, std::function<void()> callback) {
  callback_ = std::move(callback);
  uv_timer_start(
      handle_,
      [](uv_timer_t* handle) {
        if (auto* self = static_cast<Timer*>(handle->data)) self->callback_();
      },
      timeout_ms, repeat_ms);
}

void Timer::stop() { uv_timer_stop(handle_); }

void Timer::unref() { uv_unref(reinterpret_cast<uv_handle_t*>(handle_)); }

uint64_t now_ms(Loop& loop) { return uv_now(loop.raw()); }

}  // namespace sw::net
