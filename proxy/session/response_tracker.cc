#include "session/response_tracker.h"

#include "wire/messages.h"

namespace sw::session {
namespace {

bool is_async(char type) { return type == 'N' || type == 'A' || type == 'S'; }

bool owes_ready(Owed owed) { return owed == Owed::Sync || owed == Owed::Query; }

}  // namespace

void ExpectationQueue::push_back(Expectation&& expectation, std::string_view text) {
  if (size_ == slots_.size()) {
    const size_t capacity = slots_.empty() ? 8 : slots_.size() * 2;
    std::vector<Expectation> larger(capacity);
    std::vector<std::string> larger_texts(capacity);
    for (size_t i = 0; i < size_; ++i) {
      const size_t from = (head_ + i) & (slots_.size() - 1);
      larger[i] = std::move(slots_[from]);
      larger_texts[i] = std::move(texts_[from]);
    }
    slots_ = std::move(larger);
    texts_ = std::move(larger_texts);
    head_ = 0;
  }
  const size_t tail = (head_ + size_) & (slots_.size() - 1);
  slots_[tail] = std::move(expectation);
  if (!text.empty() || !texts_[tail].empty()) texts_[tail].assign(text);  // most have none
  ++size_;
}

void ResponseTracker::expect(Expectation&& expectation, std::string_view text, std::string* emit_now) {
  if (skipping_ && expectation.owed != Owed::Sync) {
    std::string dropped(text);
    note_if_parse(expectation, dropped);
    return;
  }
  skipping_ = false;
  if (expectation.owed == Owed::Synthetic && queue_.empty()) {
    emit_synthetic(expectation, text, emit_now);
    return;
  }
  if (owes_ready(expectation.owed)) ++ready_owed_;
  queue_.push_back(std::move(expectation), text);
}

void ResponseTracker::emit_synthetic(const Expectation& e, std::string_view text, std::string* emit) {
  if (e.parse_complete)
    wire::encode_parse_complete(*emit);
  else
    emit->append(text);
}

void ResponseTracker::reset() {
  queue_.clear();
  skipping_ = false;
  ready_owed_ = 0;
  copy_ = false;
  failed_parses_.clear();
}

// A Parse (or the proxy's ParseComplete for one) the server will not run: what it was to define.
void ResponseTracker::note_if_parse(const Expectation& dropped, std::string& text) {
  const bool parse = dropped.owed == Owed::Parse && dropped.statement != 0;
  const bool named = text_is_client_name(dropped) && !text.empty();
  if (!parse && !named) return;
  failed_parses_.push_back({dropped.statement, parse, named ? std::move(text) : std::string()});
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
    note_if_parse(queue_.front(), queue_.front_text());
    queue_.pop_front();
  }
  skipping_ = queue_.empty();
}

void ResponseTracker::emit_due_synthetics(std::string* emit) {
  while (!queue_.empty() && queue_.front().owed == Owed::Synthetic) {
    emit_synthetic(queue_.front(), queue_.front_text(), emit);
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
    if (head.owed == Owed::Parse) note_if_parse(head, queue_.front_text());
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
