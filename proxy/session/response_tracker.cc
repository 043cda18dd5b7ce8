#include "session/response_tracker.h"

#include <utility>

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

void ExpectationQueue::erase(size_t index) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = index; i + 1 < size_; ++i) {
    const size_t to = (head_ + i) & mask;
    const size_t from = (head_ + i + 1) & mask;
    slots_[to] = std::move(slots_[from]);
    texts_[to].swap(texts_[from]);  // push_back assigns the text left behind
  }
  --size_;
}

void ResponseTracker::expect(Expectation&& expectation, std::string_view text, std::string* emit_now) {
  if (client_copy_ && expectation.owed == Owed::Sync) return;
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
  if (owes_ready(expectation.owed)) {
    ++ready_owed_;
    sync_due_ = false;  // its ReadyForQuery ends the batch the copy left open
  }
  queue_.push_back(std::move(expectation), text);
}

void ResponseTracker::on_client_copy_end() {
  if (std::exchange(client_copy_, false)) return;
  if (queue_.empty() || skipping_) return;  // no Execute or Query owed that could start a copy
  Expectation marker;
  marker.owed = Owed::CopyEnd;
  marker.relay = false;
  queue_.push_back(std::move(marker), std::string_view());
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
  client_copy_ = false;
  sync_due_ = false;
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

// What owes nothing from the server goes once it reaches the head: a Synthetic's bytes are sent,
// a CopyEnd whose copy never began (or ended already) is dropped.
void ResponseTracker::emit_due_synthetics(std::string* emit) {
  while (!queue_.empty() &&
         (queue_.front().owed == Owed::Synthetic || queue_.front().owed == Owed::CopyEnd)) {
    if (queue_.front().owed == Owed::Synthetic) emit_synthetic(queue_.front(), queue_.front_text(), emit);
    queue_.pop_front();
  }
}

// A CopyInResponse answered the head (an Execute or a Query): the server now ignores Sync up to
// the client's copy end, so the Syncs forwarded since are owed nothing. When that end was
// forwarded already (a CopyEnd after them), the copy is over for the client; else the Syncs it
// sends are owed nothing until it ends (or an error ends the copy: anything but CopyData, CopyDone,
// CopyFail, Sync and Flush does). An Execute's batch then ends at a Sync sent after the copy.
void ResponseTracker::enter_copy_in() {
  const bool execute = queue_.front().owed == Owed::Execute;
  while (queue_.size() > 1 && queue_.at(1).owed == Owed::Sync) {
    queue_.erase(1);
    --ready_owed_;
  }
  if (queue_.size() > 1 && queue_.at(1).owed == Owed::CopyEnd)
    queue_.erase(1);
  else
    client_copy_ = true;
  sync_due_ = execute && !ready_owed_after_head();
}

// A ReadyForQuery owed after the head (a Sync's, or a Query's: either ends an open batch).
bool ResponseTracker::ready_owed_after_head() const {
  for (size_t i = 1; i < queue_.size(); ++i)
    if (owes_ready(queue_.at(i).owed)) return true;
  return false;
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
    client_copy_ = false;  // an error ends a copy-in: the server answers the next Sync
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
        if (type == 'G') enter_copy_in();
        outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
        return outcome;
      }
      done = type == 'C' || type == 'I' || type == 's';
      break;
    case Owed::Sync: done = type == 'Z'; break;
    case Owed::Query:
      if (type != 'Z') {
        if (type == 'G' || type == 'H' || type == 'W') copy_ = true;
        if (type == 'G') enter_copy_in();
        if (type == 'C') copy_ = false;
        outcome.verdict = head.relay ? Verdict::Relay : Verdict::Swallow;
        return outcome;
      }
      done = true;
      break;
    case Owed::Synthetic:
    case Owed::CopyEnd: break;  // never at the head (emit_due_synthetics)
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
