// SplitInsert: a multi-row INSERT split by shard, its parts in one transaction per shard committed
// together, or left in the client's transaction (docs/architecture.md §5.11).
#include "session/split_insert.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

SplitInsert::SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks)
    : legs_(parts.size()),
      setup_(described(std::move(setup))),
      servers_(targets_of(parts), setup_.session_state, setup_.what, *this),
      callbacks_(std::move(callbacks)),
      answer_(setup_.row_part) {
  for (size_t i = 0; i < parts.size(); ++i) legs_[i].request = std::move(parts[i].request);
  if (!setup_.unit_part.empty()) batch_ = std::make_unique<BatchAnswer>(setup_.unit_part, setup_.unit_parsed);
}

SplitInsert::~SplitInsert() = default;

// Shared by the constructor's initializers: `what` defaults to the split INSERT's wording.
SplitInsert::Setup SplitInsert::described(Setup setup) {
  if (setup.what.empty()) setup.what = "INSERT into sharded table " + setup.table;
  return setup;
}

std::vector<EveryShardTransaction::Target> SplitInsert::targets_of(std::vector<Part>& parts) {
  std::vector<EveryShardTransaction::Target> targets;
  targets.reserve(parts.size());
  for (Part& part : parts) targets.push_back(std::move(part.target));
  return targets;
}

void SplitInsert::start() { servers_.start(); }

void SplitInsert::cancel() {
  if (phase_ != Phase::Inserting) return;
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i].ready_owed > 0) servers_.cancel(i);
  }
}

void SplitInsert::on_no_server(const Status& why) { fail(why); }

// The client's settings, BEGIN (or what joins the client's transaction) and the part, in one write.
void SplitInsert::on_leg_server(size_t index, std::string prologue, int ready_owed) {
  prologue += legs_[index].request;
  legs_[index].ready_owed += ready_owed + 1;
  servers_.write(index, prologue);
}

// Before the commit a violation fails the INSERT; during the two-phase commit it drops only that
// leg (the coordinator decides what its loss means).
void SplitInsert::on_leg_violation(size_t index, const Status& why) {
  if (phase_ != Phase::TwoPhase) {
    fail(why);
    return;
  }
  servers_.release(index, false);
  two_phase_->on_lost(index, why.message);
}

Status SplitInsert::error_of(size_t index, std::string_view body) const {
  Status error = EveryShardTransaction::error_of(body);
  error.message = setup_.what + " failed on shard " + servers_.shard(index) + ", " +
                  (batch_ ? "the batch was rolled back on every shard" : undone()) + ": " + error.message;
  return error;
}

Status SplitInsert::on_leg_message(size_t index, const Message& message) {
  const auto [type, frame, body] = message;
  Leg& leg = legs_[index];
  if (batch_ && phase_ == Phase::Inserting && leg.ready_owed == 1) {
    switch (type) {
      case '2':
      case 'T':
      case 'n':
      case 'D':
      case 'C':
      case 'E': return on_batch_answer(index, type, frame, body);
      default: break;
    }
  }
  switch (type) {
    case 'Z': return Status::ok();
    case '1':
    case '2':
      if (phase_ == Phase::Inserting) return Status::ok();  // owed to the client in Setup::answered
      break;
    case 'N':
      if (phase_ == Phase::Inserting) notices_.append(frame);
      return Status::ok();
    case 'E': {
      if (phase_ == Phase::TwoPhase) {
        two_phase_->on_error(index, EveryShardTransaction::error_of(body));
        return Status::ok();
      }
      Status error = error_of(index, body);
      if (phase_ == Phase::Committing) {
        if (commit_error_) commit_error_ = error;
        return Status::ok();
      }
      fail(error);
      return Status::ok();
    }
    case 'T':
    case 'n':
    case 'D':
    case 'C':
      if (phase_ == Phase::Inserting && leg.ready_owed == 1) return on_part_answer(index, type, frame, body);
      // The settings' set_config row, BEGIN, the joining prologue, COMMIT: not the client's.
      if (type == 'C' || phase_ == Phase::Inserting) return Status::ok();
      break;
    default: break;
  }
  return Status::server("08P01", "shard " + servers_.shard(index) + " answered its part of " + setup_.what +
                                     " with an unexpected message ('" + std::string(1, type) + "')");
}

// The part's own answer: held in the combiner until every part answered.
Status SplitInsert::on_part_answer(size_t index, char type, std::string_view frame, std::string_view body) {
  Status held = Status::ok();
  if (type == 'T' || type == 'n') held = answer_.on_row_description(index, frame);
  if (type == 'D') held = answer_.on_data_row(index, frame);
  if (type == 'C') {
    auto tag = wire::decode_command_complete(body);
    if (!tag) return tag.status();
    const long long before = answer_.inserted();
    held = answer_.on_command_complete(index, *tag);
    legs_[index].inserted = answer_.inserted() > before;
  }
  if (!held && held.fault != Fault::Server) {
    fail(held);
    return Status::ok();
  }
  return held;
}

// A unit's answer in a batch: held in the batch's order; an error is kept until every leg reached
// its Sync (the batch is then rolled back everywhere and answered up to the failed unit).
Status SplitInsert::on_batch_answer(size_t index, char type, std::string_view frame, std::string_view body) {
  if (type != 'E') {
    Status held = batch_->on_message(index, type, frame);
    if (!held && held.fault != Fault::Server) {
      fail(held);
      return Status::ok();
    }
    return held;
  }
  if (batch_error_) batch_error_ = error_of(index, body);
  return Status::ok();
}

void SplitInsert::on_leg_ready(size_t index) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index);
    return;
  }
  if (phase_ == Phase::Done || --legs_[index].ready_owed > 0) return;
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (servers_.backend(i) == nullptr || legs_[i].ready_owed > 0) return;
  }
  if (phase_ == Phase::Inserting) {
    commit();
  } else {
    finish(commit_error_ ? TwoPhaseOutcome::Committed : TwoPhaseOutcome::RolledBack, commit_error_);
  }
}

// Every part ran: the answer is combined before anything commits (a refusal still rolls back);
// inside the client's transaction nothing commits; else rows on several shards commit by
// two-phase commit, and otherwise every leg by COMMIT.
void SplitInsert::commit() {
  if (batch_) {
    if (!batch_error_ || !batch_->complete()) {
      std::string before = batch_->answered();
      notices_.insert(0, before);  // the units before the failed one are answered first, as a server does
      fail(batch_error_ ? Status::server("08P01", setup_.what + ": a shard did not answer every Execute")
                        : batch_error_);
      return;
    }
    result_ = batch_->answered();
  } else {
    auto combined = answer_.combine();
    if (!combined) {
      fail(combined.status());
      return;
    }
    result_ = std::move(combined.value());
  }
  if (setup_.in_transaction) {
    finish_in_transaction();
    return;
  }
  std::vector<size_t> written;
  for (size_t i = 0; i < legs_.size(); ++i)
    if (batch_ ? batch_->wrote(i) : legs_[i].inserted) written.push_back(i);
  if (written.size() > 1) {
    commit_two_phase(written);
    return;
  }
  phase_ = Phase::Committing;
  for (size_t i = 0; i < legs_.size(); ++i) {
    legs_[i].ready_owed = 1;
    servers_.send_query(i, "COMMIT");
  }
}

void SplitInsert::commit_two_phase(const std::vector<size_t>& written) {
  phase_ = Phase::TwoPhase;
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      setup_.what, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) { servers_.send_query(leg, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(servers_.shard_names(), written);
}

// Committed: the client gets the combined answer; else the coordinator's (or COMMIT's) error.
void SplitInsert::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  servers_.end_settled(setup_.in_transaction, true,
                       outcome == TwoPhaseOutcome::Committed ? Status::ok() : error, callbacks_.hand_back);
  std::string out = std::move(notices_);
  out += setup_.answered;
  if (outcome == TwoPhaseOutcome::Committed)
    out += result_;
  else
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

// Inside the client's transaction every server stays in it, the shards that inserted a row
// recorded as written; the client's ReadyForQuery is the session's.
void SplitInsert::finish_in_transaction() {
  phase_ = Phase::Done;
  const Status verdict = servers_.end(setup_.in_transaction, true, Status::ok(), callbacks_.hand_back);
  std::string out = std::move(notices_);
  out += setup_.answered;
  if (verdict.is_ok())
    out += result_;
  else
    wire::encode_error(out, "ERROR", verdict.sqlstate, verdict.message);
  callbacks_.write_client(out);
  callbacks_.done();
}

// Before the commit: new servers are closed, which rolls their transactions back; the session
// settles its lent ones (rolled back, or the client's transaction failed).
void SplitInsert::fail(const Status& why) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  servers_.end_settled(setup_.in_transaction, false, why, callbacks_.hand_back);
  LOG_INFO("%s over %zu shards failed, %s: %s", setup_.what.c_str(), legs_.size(), undone(),
           why.message.c_str());
  std::string out = std::move(notices_);
  out += setup_.answered;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  if (!setup_.in_transaction) wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

const char* SplitInsert::undone() const {
  return setup_.in_transaction ? "the transaction is aborted" : "rolled back on every shard";
}

void SplitInsert::on_leg_handed(size_t index, EveryShardTransaction::Handed& handed) const {
  handed.ready_owed = legs_[index].ready_owed;
  handed.wrote = legs_[index].inserted;
}

void SplitInsert::on_leg_lost(size_t index, const Status& why) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index, why.message);
    return;
  }
  fail(Status::server(
      "08006", setup_.what + ": lost shard " + servers_.shard(index) + ", " + undone() + ": " + why.message));
}

}  // namespace sw::session
