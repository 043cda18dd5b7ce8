// MergeFanout on the session's engine (keep_servers; docs/architecture.md §5.6): inside the
// client's transaction block a read runs on the transaction's legs and joins the shards it lacks,
// so it sees the transaction's own writes and snapshot. No leg may be cancelled there (a cancel
// aborts the client's transaction on that shard) nor closed (the transaction lives on it): a leg
// whose rows are no longer needed is read to its end, and every server goes back to the session.
#include <utility>

#include "common/log.h"
#include "session/merge_fanout.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

void MergeFanout::keep_servers(std::vector<LegEngine::Target> targets, bool in_transaction,
                               LegEngine::HandBack hand_back, LegEngine& legs) {
  held_.keep(engine_targets_, std::move(targets), in_transaction, std::move(hand_back), legs);
}

// The leg's server arrived (or was borrowed): the session's settings when it lacks them, the
// target's `begin` (kept legs), then the read.
void MergeFanout::on_leg_server(size_t index, std::string prologue) {
  prologue += messages_[index];
  engine_->expect_ready(index, extended_ ? 2 : 1);  // the collation query's own ReadyForQuery too
  engine_->write(index, prologue);
}

// Every row the client needs went out: the held legs still running are read on, their rows
// dropped, until each ended its statement. True when all have.
bool MergeFanout::drain_held_legs() {
  draining_ = true;
  for (size_t i = 0; i < answers_.size() && !finished_; ++i) {
    if (!done(i) && engine_->held(i)) engine_->resume(i);
  }
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (!done(i)) return false;
  }
  return true;
}

// Every kept leg goes back to the session (HeldLegs::end).
void MergeFanout::hand_back_held() {
  if (closing_ && errored_)  // the client sees the transaction failed at its next statement (25P02)
    LOG_WARN(
        "a shard failed while the rows of a portal the client left were dropped: %s; the "
        "client's transaction fails",
        error_.message.c_str());
  answers_.assign(answers_.size(), Answer::Done);
  held_.end(*engine_, errored_ ? error_ : Status::ok());
}

void MergeFanout::keep_portal(std::function<void(bool answers_sync)> parked) {
  on_parked_ = std::move(parked);
}

// The Execute's row limit was reached: PortalSuspended, and the legs wait unread (their rows
// stay in the merger and in TCP) for the portal's next Execute.
void MergeFanout::park() {
  parked_ = true;
  std::string out;
  wire::MessageWriter(out).begin('s').end();
  write_client_(out);
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (!done(i)) engine_->hold(i);
  }
  const bool answers_sync = !std::exchange(parked_once_, true);
  on_parked_(answers_sync);
}

// The portal's next Execute: the merge goes on from where it stopped (pump resumes the legs the
// merger has room for).
void MergeFanout::resume(uint32_t max_rows) {
  parked_ = false;
  suspended_ = false;
  rows_before_execute_ = rows_out_;
  row_limit_ = max_rows > 0 ? rows_out_ + max_rows : 0;
  pump();
}

void MergeFanout::close_portal() {
  parked_ = false;
  suspended_ = false;
  closing_ = true;
  draining_ = true;
  pump();
}

}  // namespace sw::session
