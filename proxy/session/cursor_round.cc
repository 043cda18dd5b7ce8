#include "session/cursor_round.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

CursorRound::CursorRound(std::vector<LegEngine::Target> targets, std::vector<std::string> messages, int ready,
                         ServerState session_state, std::function<void(std::string_view)> write_client,
                         Take take, LegEngine::HandBack hand_back, std::function<void(const Status&)> done)
    : ready_(ready),
      write_client_(std::move(write_client)),
      take_(std::move(take)),
      hand_back_(std::move(hand_back)),
      done_(std::move(done)) {
  for (std::string& message : messages) legs_.push_back(Leg{std::move(message)});
  engine_ = std::make_unique<LegEngine>(std::move(targets), std::move(session_state), "a merged cursor",
                                        static_cast<LegEngine::Runner&>(*this));
}

// Destroyed before its end only when the session closes: the engine closes the servers.
CursorRound::~CursorRound() = default;

void CursorRound::start() {
  if (legs_.empty()) {
    finish();
    return;
  }
  engine_->start();
}

void CursorRound::on_leg_server(size_t index, std::string prologue, int ready_owed) {
  Leg& leg = legs_[index];
  leg.swallow_ready += ready_owed;
  prologue += leg.messages;
  leg.ready_owed = ready_owed + ready_;
  engine_->write(index, prologue);
}

Status CursorRound::on_leg_message(size_t index, const LegEngine::Message& message) {
  Leg& leg = legs_[index];
  switch (message.type) {
    case 'Z':
      --leg.ready_owed;
      if (leg.swallow_ready > 0) {
        --leg.swallow_ready;
        return Status::ok();
      }
      leg.done = leg.ready_owed <= 0;
      return Status::ok();
    case 'E':
      if (leg.swallow_ready > 0) {
        LOG_WARN("shard %s refused session settings", engine_->shard(index).c_str());
        return Status::ok();
      }
      note_error(LegEngine::error_of(message.body), message.frame);
      return Status::ok();
    case 'N':
      if (leg.swallow_ready == 0) write_client_(message.frame);
      return Status::ok();
    default: break;
  }
  if (leg.swallow_ready > 0 || !error_.is_ok()) return Status::ok();
  return take_(index, message.type, message.body);
}

void CursorRound::on_leg_ready(size_t /*leg*/) { finish_if_done(); }

// The message was consumed and the leg is read no further: the round ends, every server going
// back owing the rest of its answer (the session reads and drops it).
bool CursorRound::on_leg_refused(size_t /*leg*/, const Status& why) {
  note_error(why, {});
  finish();
  return true;
}

void CursorRound::on_leg_violation(size_t index, const Status& why) {
  legs_[index].done = true;
  note_error(why, {});
  finish();
}

void CursorRound::on_leg_lost(size_t index, const Status& why) {
  legs_[index].done = true;
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
  for (const Leg& leg : legs_) {
    if (!leg.done) return;
  }
  finish();
}

// Every server goes back to the session with what it still owes; a failed round fails the
// transaction there (Session::take_back_servers).
void CursorRound::finish() {
  if (finished_) return;
  finished_ = true;
  std::vector<LegEngine::Handed> handed = engine_->hand_over();
  for (size_t i = 0; i < handed.size() && i < legs_.size(); ++i)
    handed[i].ready_owed = legs_[i].ready_owed > 0 ? legs_[i].ready_owed : 0;
  (void)hand_back_(std::move(handed), error_);
  done_(error_);
}

}  // namespace sw::session
