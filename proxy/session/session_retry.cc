// Session: fence errors. A shard answers SW001 when it no longer owns a bucket (the proxy's
// directory is stale). The first request of a transaction is re-run on the new owner once the
// directory has moved on; anything later gets 40001 so the client retries the transaction.
#include "common/log.h"
#include "net/timer.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {
namespace {
constexpr size_t kMaxCapturedRequest = 1024 * 1024;
constexpr uint64_t kDirectoryPollMs = 10;
constexpr int kDirectoryPolls = 200;  // wait up to 2 s for a newer directory
}  // namespace

void Session::to_client(std::string_view bytes) {
  if (bytes.empty()) return;
  char type = bytes[0];
  bool preamble = type == '1' || type == '2' || type == 't' || type == 'n' || type == 'T';
  if (capturing_ && !answer_started_ && preamble) {
    held_.append(bytes);
    return;
  }
  if (!held_.empty()) {
    client_->write(held_);
    held_.clear();
  }
  client_->write(bytes);
  if (type != 'N' && type != 'A' && type != 'S') answer_started_ = true;
}

void Session::capture_request(std::string_view bytes) {
  if (first_request_.size() + bytes.size() > kMaxCapturedRequest) {
    capturing_ = false;  // too big to keep: a fence error will be a 40001
    first_request_.clear();
    return;
  }
  first_request_.append(bytes);
}

// Called for an ErrorResponse with SQLSTATE SW001. Returns true when the error is swallowed
// because the request will be retried; otherwise the client gets `replacement` as a 40001.
bool Session::on_fence_error(std::string_view body) {
  host_.request_directory_refresh();
  if (capturing_ && !answer_started_ && !retried_) {
    LOG_INFO("client=c%llu shard %d refused a write (bucket moved); retrying on the new owner",
             (unsigned long long)id(), shard_);
    retry_pending_ = true;
    return true;
  }
  auto fields = wire::decode_error_fields(body);
  std::string message = "the bucket moved to another shard during the transaction";
  if (fields) message += " (" + std::string(fields->message) + ")";
  std::string out;
  wire::encode_error(out, "ERROR", "40001", message + "; retry the transaction");
  client_->write(out);
  return true;
}

// The failed first request's server answered ReadyForQuery: drop that server, wait for a newer
// directory, and run the request again from the start (BEGIN included).
void Session::retry_after_fence() {
  release_backend(tracker_.idle() && server_status_ == 'I');
  held_.clear();  // the retry answers these again
  replay_input_.insert(0, first_request_);
  first_request_.clear();
  capturing_ = false;
  deferred_begin_ = first_request_begin_;
  transaction_status_ = deferred_begin_.empty() ? 'I' : 'T';
  retried_ = true;
  retry_polls_ = 0;
  if (!retry_timer_) retry_timer_ = std::make_unique<net::Timer>(host_.loop());
  retry_timer_->start(kDirectoryPollMs, kDirectoryPollMs, [this] {
    const auto& directory = host_.directory();
    bool newer = directory && directory->version() > routed_version_;
    if (!newer && ++retry_polls_ < kDirectoryPolls) return;
    retry_timer_->stop();
    retry_pending_ = false;
    if (phase_ == Phase::Ready) read_client_messages();
  });
}

}  // namespace sw::session
