#include "session/fence_retry.h"

#include "common/bytes.h"

namespace sw::session {

void FenceRetry::on_attach(std::string begin, bool capture) {
  begin_ = std::move(begin);
  first_request_.clear();
  capturing_ = capture;
  answer_started_ = false;
  flushed_ = false;
}

void FenceRetry::capture(std::string_view whole_message) {
  if (!capturing_) return;
  if (first_request_.size() + whole_message.size() > kMaxCapturedRequest) {
    capturing_ = false;  // too big to keep: a fence error will be a 40001
    first_request_.clear();
    return;
  }
  first_request_.append(whole_message);
}

bool FenceRetry::on_fence_error() {
  if (!capturing_ || answer_started_ || retried_) return false;
  pending_ = true;
  return true;
}

bool FenceRetry::on_request_answered(size_t idle_buffer_keep) {
  capturing_ = false;  // the first request got its answer: no retry from here on
  if (pending_) return true;
  retried_ = false;
  // Nothing will replay the first request now; an idle client keeps no copy of it.
  first_request_.clear();
  release_if_large(first_request_, idle_buffer_keep);
  release_if_large(held_, idle_buffer_keep);
  return false;
}

std::string FenceRetry::start_retry() {
  held_.clear();  // the retry answers these again
  replay_.insert(0, first_request_);
  first_request_.clear();
  capturing_ = false;
  retried_ = true;
  polls_ = 0;
  return begin_;
}

bool FenceRetry::poll(bool have_directory, uint64_t directory_version) {
  bool newer = have_directory && directory_version > routed_version_;
  if (!newer && ++polls_ < kDirectoryPolls) return false;
  pending_ = false;
  return true;
}

}  // namespace sw::session
