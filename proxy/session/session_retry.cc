// Session: what happens when a shard answers SW001 (the decisions are FenceRetry's). The first
// request of a transaction is run again on the bucket's new owner once the directory has moved
// on; anything later gets 40001 so the client retries the transaction.
#include "common/log.h"
#include "net/timer.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

// Called for an ErrorResponse with SQLSTATE SW001 on its way to the client. Always swallows it:
// either the request will be retried, or the client gets a 40001 in its place.
bool Session::on_fence_error(std::string_view body) {
  host_.request_directory_refresh();
  if (fence_.on_fence_error()) {
    LOG_INFO("client=c%llu shard %d refused a write (bucket moved); retrying on the new owner",
             (unsigned long long)id(), shard_of(txn_.leg));
    set_request_state(RequestState::RetryingAfterFence);
    return true;
  }
  auto fields = wire::decode_error_fields(body);
  std::string message = "the bucket moved to another shard during the transaction";
  if (fields) message += " (" + std::string(fields->message) + ")";
  std::string out;
  wire::encode_error(out, "ERROR", "40001", message + "; retry the transaction");
  to_client(out);  // in its place: after the answers held back for a retry that cannot happen now
  return true;
}

// The refused first request's server answered ReadyForQuery: drop that server, wait for a newer
// directory, and run the request again from the start (BEGIN included).
void Session::retry_after_fence() {
  release_backend(txn_.leg.tracker.idle() && txn_.leg.server_status == 'I');
  txn_.control.restore_begin(fence_.start_retry());
  if (!timers_.fence_poll) timers_.fence_poll = std::make_unique<net::Timer>(host_.loop());
  timers_.fence_poll->start(FenceRetry::kDirectoryPollMs, FenceRetry::kDirectoryPollMs, [this] {
    const auto& directory = host_.directory();
    if (!fence_.poll(directory != nullptr, directory ? directory->version() : 0)) return;
    timers_.fence_poll->stop();
    on_fence_polled();
  });
}

// A newer directory came while the refused request waited for one: it runs again from the start.
void Session::on_fence_polled() {
  switch (request_.state) {
    case RequestState::RetryingAfterFence: break;
    case RequestState::Routing:
    case RequestState::WaitingForServer:
    case RequestState::WaitingForCutover:
    case RequestState::Running:
    case RequestState::Answered:
    case RequestState::WaitingForLeg:
    case RequestState::LentUntilSync: report_unexpected_event("the fence retry's directory came"); break;
  }
  set_request_state(RequestState::Routing);
  if (phase_ == Phase::Ready) read_client_messages();
}

}  // namespace sw::session
