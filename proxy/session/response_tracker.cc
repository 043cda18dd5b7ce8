#include "session/response_tracker.h"

namespace sw::session {
namespace {

bool is_async(char type) { return type == 'N' || type == 'A' || type == 'S'; }

bool owes_ready(Owed owed) { return owed == Owed::Sync || owed == Owed::Query; }

}  // namespace

void ExpectationQueue::push_back(Expectation&& expectation) {
  if (size_ == slots_.size()) {
    std::vector<Expectation> larger(slots_.empty() ? 8 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) larger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(larger);
    head_ = 0;
  }
  slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(expectation);
  ++size_;
}

void ResponseTracker::expect(Expectation expectation, std::string* emit_now) {
  if (skipping_ && expectation.owed != Owed::Sync) {
    note_if_parse(expectation);
    return;
  }
  skipping_ = false;
  if (expectation.owed == Owed::Synthetic && queue_.empty()) {
    emit_now->append(expectation.bytes);
    return;
  }
  if (owes_ready(expectation.owed)) ++ready_owed_;
  queue_.push_back(std::move(expectation));
}

void ResponseTracker::reset() {
  queue_.clear();
  skipping_ = false;
  ready_owed_ = 0;
  copy_ = false;
  failed_parses_.clear();
}

// A Parse (or the proxy's ParseComplete for one) the server will not run: what it was to define.
void ResponseTracker::note_if_parse(Expectation& dropped) {
  const bool parse = dropped.owed == Owed::Parse && dropped.statement != 0;
  if (!parse && dropped.client_name.empty()) return;
  failed_parses_.push_back({dropped.statement, parse, std::move(dropped.client_name)});
}

ResponseTracker::Outcome ResponseTracker::complete_head() {
  Outcome outcome;
  outcome.completed = true;
  outcome.finished = std::move(queue_.front());
  queue_.pop_front();
  if (owes_ready(outcome.finished.owed)) --ready_owed_;
  outcome.verdict = outcome.finished.relay ? Verdict::Relay : Verdict::Swallow;
  return outcome;
}

// After an ErrorResponse in the extended protocol the server ignores everything up to Sync; so
// do we: whatever was owed for those messages will never come.
void ResponseTracker::skip_to_sync() {
  while (!queue_.empty() && queue_.front().owed != Owed::Sync) {
    note_if_parse(queue_.front());
    queue_.pop_front();
  }
  skipping_ = queue_.empty();
}

void ResponseTracker::emit_due_synthetics(std::string* emit) {
  while (!queue_.empty() && queue_.front().owed == Owed::Synthetic) {
    emit->append(queue_.front().bytes);
    queue_.pop_front();
  }
}

ResponseTracker::Outcome ResponseTracker::on_server_message(char type, std::string* emit) {
  Outcome outcome;
  if (queue_.empty()) {
    outcome.verdict = is_async(type) ? Verdict::Relay : Verdict::Desync;
    return outcome;
  }
  Expectation& head = queue_.front();
  if (is_async(type)) {
    outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
    return outcome;
  }

  if (type == 'E') {
    copy_ = false;
    bool relay = head.relay || head.relay_errors;
    if (owes_ready(head.owed)) {
      // A simple Query, or the implicit commit at Sync, still ends with ReadyForQuery.
      outcome.verdict = relay ? Verdict::Relay : Verdict::Swallow;
      return outcome;
    }
    if (head.owed == Owed::Parse) note_if_parse(head);
    outcome.completed = true;
    outcome.finished = std::move(head);
    queue_.pop_front();
    skip_to_sync();
    outcome.verdict = relay ? Verdict::Relay : Verdict::Swallow;
    return outcome;
  }

  bool done = false;
  switch (head.owed) {
    case Owed::Parse: done = type == '1'; break;
    case Owed::Bind: done = type == '2'; break;
    case Owed::Close: done = type == '3'; break;
    case Owed::DescribeStatement:
      if (type == 't') {
        outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
        return outcome;
      }
      done = type == 'T' || type == 'n';
      break;
    case Owed::DescribePortal: done = type == 'T' || type == 'n'; break;
    case Owed::Execute:
      if (type == 'D' || type == 'd' || type == 'c' || type == 'G' || type == 'H' || type == 'W') {
        copy_ = type == 'G' || type == 'H' || type == 'W' || (copy_ && type == 'd');
        outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
        return outcome;
      }
      done = type == 'C' || type == 'I' || type == 's';
      break;
    case Owed::Sync: done = type == 'Z'; break;
    case Owed::Query:
      if (type != 'Z') {
        if (type == 'G' || type == 'H' || type == 'W') copy_ = true;
        if (type == 'C') copy_ = false;
        outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
        return outcome;
      }
      done = true;
      break;
    case Owed::Synthetic: break;
  }
  if (!done) {
    outcome.verdict = Verdict::Desync;
    return outcome;
  }
  if (type == 'C' || type == 'Z') copy_ = false;
  outcome = complete_head();
  emit_due_synthetics(emit);
  return outcome;
}

}  // namespace sw::session
