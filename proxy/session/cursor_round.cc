#include "session/cursor_round.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

CursorRound::CursorRound(LegEngine& legs, std::vector<LegEngine::Target> targets,
                         std::vector<std::string> messages, int ready, ServerState session_state,
                         std::function<void(std::string_view)> write_client, Take take,
                         LegEngine::HandBack hand_back, std::function<void(const Status&)> done)
    : messages_(std::move(messages)),
      ready_(ready),
      write_client_(std::move(write_client)),
      take_(std::move(take)),
      hand_back_(std::move(hand_back)),
      done_(std::move(done)) {
  engine_ = std::make_unique<LegEngine>(&legs, std::move(targets), std::move(session_state),
                                        "a merged cursor", static_cast<LegEngine::Runner&>(*this));
}

// Destroyed before its end only when the session closes: the engine closes the servers of the
// legs it added; the transaction's are the session's to close.
CursorRound::~CursorRound() = default;

void CursorRound::start() {
  if (messages_.empty()) {
    finish();
    return;
  }
  engine_->start();
}

void CursorRound::on_leg_server(size_t index, std::string prologue) {
  prologue += messages_[index];
  engine_->expect_ready(index, ready_);
  engine_->write(index, prologue);
}

bool CursorRound::on_leg_message(size_t index, const LegEngine::Message& message) {
  const bool injected = engine_->injected(index);
  switch (message.type) {
    case 'Z': return true;  // counted by the engine
    case 'E':
      if (injected) {
        LOG_WARN("shard %s refused session settings", engine_->shard(index).c_str());
        return true;
      }
      note_error(LegEngine::error_of(message.body), message.frame);
      return true;
    case 'N':
      if (!injected) write_client_(message.frame);
      return true;
    default: break;
  }
  if (injected || !error_.is_ok()) return true;
  return took(index, take_(index, message.type, message.body));
}

void CursorRound::on_leg_ready(size_t /*leg*/) { finish_if_done(); }

// The message was consumed and the leg is read no further: the round ends, every server going
// back owing the rest of its answer (the session reads and drops it).
bool CursorRound::on_leg_refused(size_t /*leg*/, const Status& why) {
  note_error(why, {});
  finish();
  return true;
}

void CursorRound::on_leg_violation(size_t /*leg*/, const Status& why) {
  note_error(why, {});
  finish();
}

void CursorRound::on_leg_lost(size_t /*leg*/, const Status& why) {
  note_error(Status::server("08006", why.message), {});
  finish();
}

void CursorRound::on_no_server(const Status& why) {
  note_error(why, {});
  finish();
}

void CursorRound::note_error(const Status& why, std::string_view frame) {
  if (!error_.is_ok()) return;
  error_ = why.is_ok() ? Status::server("XX000", "a shard reported an error") : why;
  if (!frame.empty()) {
    write_client_(frame);
    return;
  }
  std::string out;
  wire::encode_error(out, "ERROR", error_.sqlstate, error_.message);
  write_client_(out);
}

void CursorRound::finish_if_done() {
  for (size_t i = 0; i < messages_.size(); ++i) {
    if (engine_->waiting(i) || engine_->ready_owed(i) > 0) return;
  }
  finish();
}

// Every server goes back to the session with what it still owes; a failed round fails the
// transaction there (Session::end_run_on_legs).
void CursorRound::finish() {
  if (finished_) return;
  finished_ = true;
  (void)hand_back_(engine_->hand_over(), error_);
  done_(error_);
}

}  // namespace sw::session
