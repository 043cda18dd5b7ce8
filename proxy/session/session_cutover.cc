// Session: statements (reads and writes) on a bucket in cutover (the decisions are CutoverWait's). The
// request waits, parked, until a new directory arrives or cutover.queue_timeout passes.
#include "common/log.h"
#include "config/config.h"
#include "session/session.h"

namespace sw::session {

Session::Start Session::wait_for_cutover(const router::Route& route) {
  uint32_t bucket = route.buckets.front();
  if (cutover_.enter(bucket) == CutoverWait::Enter::Register) {
    if (!host_.queue_for_cutover(this)) {
      cutover_.leave();
      refuse_request(
          Status::proxy("40001", "bucket " + std::to_string(bucket) +
                                     " is being moved and cutover.queue_max statements already wait; retry"));
      return Start::Answered;
    }
    cutover_.registered();
    timers_.cutover = std::make_unique<net::Timer>(host_.loop());
    timers_.cutover->start(static_cast<uint64_t>(host_.config().cutover.queue_timeout.count()), 0,
                           [this] { on_cutover_timeout(); });
    LOG_DEBUG("client=c%llu statement on bucket %u waits for its cutover", (unsigned long long)id(), bucket);
  }
  set_request_state(RequestState::WaitingForCutover);
  return Start::Wait;
}

// The directory changed: route the parked request again (it may wait once more).
void Session::resume_after_directory_change() {
  switch (request_.state) {
    case RequestState::WaitingForCutover:
      set_request_state(RequestState::Routing);
      if (phase_ == Phase::Ready) read_client_messages();
      return;
    case RequestState::Routing:
    case RequestState::WaitingForServer:
    case RequestState::Running:
    case RequestState::RetryingAfterFence:
    case RequestState::Answered:
    case RequestState::WaitingForLeg:
    case RequestState::LentUntilSync: return;  // not waiting for a cutover (any longer)
  }
}

// The request went on (or was refused): it no longer waits for a cutover.
void Session::end_cutover_wait() {
  if (!cutover_.leave()) return;
  timers_.cutover->stop();
  timers_.cutover.reset();
  host_.dequeue_from_cutover(this);
  if (request_.state == RequestState::WaitingForCutover) set_request_state(RequestState::Routing);
}

void Session::on_cutover_timeout() {
  uint32_t bucket = cutover_.bucket();
  end_cutover_wait();
  LOG_INFO("client=c%llu statement on bucket %u waited past cutover.queue_timeout", (unsigned long long)id(),
           bucket);
  refuse_request(
      Status::proxy("40001", "bucket " + std::to_string(bucket) +
                                 " is being moved; the statement waited cutover.queue_timeout; retry"));
  if (phase_ == Phase::Ready) read_client_messages();
}

}  // namespace sw::session
