// Session: writes to a bucket in cutover (DESIGN §7 step 5a). A transaction whose first statement
// writes a MIGRATING bucket waits until the directory says where the bucket lives now, bounded by
// cutover.queue_timeout and cutover.queue_max (then 40001). Statements of transactions already
// running on the source are not held: they go on and meet the source's fence.
#include "common/log.h"
#include "config/config.h"
#include "session/session.h"

namespace sw::session {

Session::Start Session::wait_for_cutover(const router::Route& route) {
  const config::Cutover& limits = host_.config().cutover;
  if (!cutover_timer_) {
    if (!host_.queue_for_cutover(this)) {
      refuse_request(
          Status::proxy("40001", "bucket " + std::to_string(route.buckets.front()) +
                                     " is being moved and cutover.queue_max writes already wait; retry"));
      return Start::Answered;
    }
    cutover_timer_ = std::make_unique<net::Timer>(host_.loop());
    cutover_timer_->start(static_cast<uint64_t>(limits.queue_timeout.count()), 0,
                          [this] { on_cutover_timeout(); });
    LOG_DEBUG("client=c%llu write to bucket %u waits for its cutover", (unsigned long long)id(),
              route.buckets.front());
  }
  waiting_bucket_ = route.buckets.front();
  queued_for_cutover_ = true;
  return Start::Wait;
}

// The directory changed: route the held request again (it may wait once more).
void Session::resume_after_directory_change() {
  if (!queued_for_cutover_) return;
  queued_for_cutover_ = false;
  if (phase_ == Phase::Ready) read_client_messages();
}

// The request went on (or was refused): it no longer waits for a cutover.
void Session::end_cutover_wait() {
  if (!cutover_timer_) return;
  cutover_timer_->stop();
  cutover_timer_.reset();
  host_.dequeue_from_cutover(this);
  queued_for_cutover_ = false;
}

void Session::on_cutover_timeout() {
  uint32_t bucket = waiting_bucket_;
  end_cutover_wait();
  LOG_INFO("client=c%llu write to bucket %u waited past cutover.queue_timeout", (unsigned long long)id(),
           bucket);
  refuse_request(Status::proxy(
      "40001",
      "bucket " + std::to_string(bucket) + " is being moved; the write waited cutover.queue_timeout; retry"));
  if (phase_ == Phase::Ready) read_client_messages();
}

}  // namespace sw::session
