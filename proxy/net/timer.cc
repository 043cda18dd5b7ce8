#include "net/timer.h"

#include <uv.h>

#include "net/loop.h"

namespace sw::net {

Timer::Timer(Loop& loop) : loop_(loop), handle_(new uv_timer_t) {
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
  one_shot_ = repeat_ms == 0;
  due_active_ms_ = loop_.active_ms() + timeout_ms;
  uv_timer_start(handle_, &Timer::on_fire, timeout_ms, repeat_ms);
}

void Timer::on_fire(uv_timer_t* handle) {
  auto* self = static_cast<Timer*>(handle->data);
  if (self == nullptr) return;
  if (self->one_shot_) {
    uint64_t now = self->loop_.active_ms();
    if (now < self->due_active_ms_) {  // the process was stopped meanwhile: wait the rest
      uv_timer_start(handle, &Timer::on_fire, self->due_active_ms_ - now, 0);
      return;
    }
  }
  self->callback_();
}

void Timer::stop() { uv_timer_stop(handle_); }

void Timer::unref() { uv_unref(reinterpret_cast<uv_handle_t*>(handle_)); }

uint64_t now_ms(Loop& loop) { return loop.active_ms(); }

}  // namespace sw::net
