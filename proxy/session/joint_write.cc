// JointWrite: the legs, phases, commit and end that ReferenceWrite and SplitInsert share
// (docs/architecture.md §5.11, §6.4).
#include "session/joint_write.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

JointWrite::JointWrite(std::vector<Target> targets, ServerState session_state, std::string what,
                       bool in_transaction, Callbacks callbacks)
    : servers_(callbacks.on, std::move(targets), std::move(session_state), what, *this),
      what_(std::move(what)),
      in_transaction_(in_transaction),
      callbacks_(std::move(callbacks)) {}

JointWrite::~JointWrite() = default;

void JointWrite::on_no_server(const Status& why) { fail(why); }

// The client's settings, BEGIN (or what joins the client's transaction) and the statement, in one
// write.
void JointWrite::on_leg_server(size_t index, std::string prologue) {
  prologue += statement(index);
  servers_.expect_ready(index, 1);
  servers_.write(index, prologue);
}

// Before the commit a violation fails the write; during the two-phase commit it drops only that
// leg (the coordinator decides what its loss means).
void JointWrite::on_leg_violation(size_t index, const Status& why) {
  if (phase_ != Phase::TwoPhase) {
    fail(why);
    return;
  }
  servers_.release(index, false);
  two_phase_->on_lost(index, why.message);
}

void JointWrite::on_leg_lost(size_t index, const Status& why) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index, why.message);
    return;
  }
  fail(Status::server(
      "08006", what_ + ": lost shard " + servers_.shard(index) + ", " + undone() + ": " + why.message));
}

bool JointWrite::two_phase_error(size_t index, std::string_view error_body) {
  if (phase_ != Phase::TwoPhase) return false;
  two_phase_->on_error(index, LegEngine::error_of(error_body));
  return true;
}

void JointWrite::on_leg_ready(size_t index) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index);
    return;
  }
  if (phase_ == Phase::Done || servers_.ready_owed(index) > 0) return;
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (servers_.backend(i) == nullptr || servers_.ready_owed(i) > 0) return;
  }
  if (phase_ == Phase::Statement) {
    commit();
  } else {
    on_committed();
  }
}

void JointWrite::run_next(size_t index, const std::string& sql) {
  servers_.expect_ready(index, 1);
  servers_.send_query(index, sql);
}

void JointWrite::commit_every_leg() {
  phase_ = Phase::Committing;
  for (size_t i = 0; i < servers_.size(); ++i) {
    servers_.expect_ready(i, 1);
    servers_.send_query(i, "COMMIT");
  }
}

void JointWrite::commit_two_phase(const std::vector<size_t>& written) {
  phase_ = Phase::TwoPhase;
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      what_, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) { servers_.send_query(leg, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(servers_.shard_names(), written);
}

void JointWrite::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  const bool committed = outcome == TwoPhaseOutcome::Committed;
  servers_.end_settled(in_transaction_, true, committed ? Status::ok() : error, callbacks_.hand_back);
  answer_client(committed, error);
}

void JointWrite::finish_in_transaction() {
  phase_ = Phase::Done;
  const Status verdict = servers_.end(in_transaction_, true, Status::ok(), callbacks_.hand_back);
  answer_client(verdict.is_ok(), verdict);
}

bool JointWrite::same_columns(size_t leg, std::string_view body) {
  // The engine's server check decoded the body already (wire/server_check.h): a failure here is
  // a difference of columns.
  Status differs = shape_.check(leg, servers_.shard(leg), body);
  if (differs) return true;
  differs.message.append("; ").append(undone());
  fail(differs);
  return false;
}

void JointWrite::fail(const Status& why) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  servers_.end_settled(in_transaction_, false, why, callbacks_.hand_back);
  LOG_INFO("%s over %zu shards failed, %s: %s", what_.c_str(), servers_.size(), undone(),
           why.message.c_str());
  answer_client(false, why);
}

void JointWrite::answer_client(bool succeeded, const Status& error) {
  std::string out = take_preface();
  if (succeeded) {
    out += take_answer();
  } else {
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  }
  if (!in_transaction_) wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

const char* JointWrite::undone() const {
  return in_transaction_ ? "the transaction is aborted" : "rolled back on every shard";
}

void JointWrite::on_leg_handed(size_t index, LegEngine::Handed& handed) const { handed.wrote = wrote(index); }

}  // namespace sw::session
