#include "twopc/two_phase_commit.h"

#include <algorithm>
#include <utility>

#include "twopc/gid.h"

namespace sw::twopc {

TwoPhaseCommit::TwoPhaseCommit(std::string gid, std::vector<Participant> legs) : gid_(std::move(gid)) {
  legs_.reserve(legs.size());
  int written = 0;
  for (Participant& who : legs) {
    LegState leg{std::move(who)};
    if (leg.who.written) leg.number = written++;
    legs_.push_back(std::move(leg));
  }
}

std::vector<std::string> TwoPhaseCommit::written_names() const {
  std::vector<std::string> names;
  for (const LegState& leg : legs_)
    if (leg.who.written) names.push_back(leg.who.name);
  return names;
}

int TwoPhaseCommit::prepared_count() const {
  return static_cast<int>(
      std::count_if(legs_.begin(), legs_.end(), [](const LegState& l) { return l.prepared; }));
}

TwoPhaseCommit::LegState* TwoPhaseCommit::find(int shard) {
  for (LegState& leg : legs_)
    if (leg.who.shard == shard) return &leg;
  return nullptr;
}

std::string TwoPhaseCommit::leg_gid(const LegState& leg) const {
  return twopc::leg_gid(gid_, static_cast<size_t>(leg.number));
}

std::vector<LegCommand> TwoPhaseCommit::start() {
  std::vector<LegCommand> out;
  for (LegState& leg : legs_) {
    leg.pending = true;
    // A gid holds only letters, digits and '_': quoting it needs no escaping.
    out.push_back({leg.who.shard, leg.who.written ? "PREPARE TRANSACTION '" + leg_gid(leg) + "'" : "COMMIT"});
  }
  return out;
}

// Before the decision the first failure is kept: it is what the client gets once every leg has
// answered and the prepared ones are rolled back.
void TwoPhaseCommit::fail_before_decision(const LegState& leg, const Status& error) {
  if (!first_failure_.is_ok()) return;
  const char* what = leg.who.written ? "PREPARE TRANSACTION" : "COMMIT";
  first_failure_ = error;
  first_failure_.message = "COMMIT failed: " + std::string(what) + " on shard " + leg.who.name +
                           " failed: " + error.message + "; the transaction was rolled back on every shard";
}

std::vector<LegCommand> TwoPhaseCommit::on_answer(int shard, const Status& error) {
  LegState* leg = find(shard);
  if (leg == nullptr || !leg->pending) return {};
  leg->pending = false;
  switch (step_) {
    case Step::Preparing:
      if (!error.is_ok())
        fail_before_decision(*leg, error);
      else if (leg->who.written)
        leg->prepared = true;
      break;
    case Step::Committing:
      // A COMMIT PREPARED that failed stays prepared: recovery commits it (the decision is recorded).
      if (error.is_ok()) leg->prepared = false;
      ++commit_prepared_;
      break;
    case Step::RollingBack:
      if (error.is_ok()) leg->prepared = false;
      break;
    case Step::Deciding:
    case Step::Done: break;
  }
  return after_answer();
}

std::vector<LegCommand> TwoPhaseCommit::on_lost(int shard, const std::string& why) {
  LegState* leg = find(shard);
  if (leg == nullptr || leg->lost) return {};
  const bool was_pending = leg->pending;
  leg->lost = true;
  leg->pending = false;
  // Once the decision runs, a lost leg changes nothing: a recorded commit is committed by
  // recovery there, anything else leaves it to recovery anyway.
  if (step_ == Step::Preparing)
    fail_before_decision(*leg, Status::server("08006", "its server was lost (" + why + ")"));
  if (!was_pending && step_ != Step::Preparing) return {};
  return after_answer();
}

// Every leg answered the current step: the next one starts.
std::vector<LegCommand> TwoPhaseCommit::after_answer() {
  if (std::any_of(legs_.begin(), legs_.end(), [](const LegState& l) { return l.pending; })) return {};
  switch (step_) {
    case Step::Preparing:
      if (!first_failure_.is_ok()) return roll_back(first_failure_, TwoPhaseOutcome::RolledBack);
      step_ = Step::Deciding;
      return {};
    case Step::Committing: finish(TwoPhaseOutcome::Committed); return {};
    case Step::RollingBack: finish(outcome_); return {};
    case Step::Deciding:
    case Step::Done: return {};
  }
  return {};
}

std::vector<LegCommand> TwoPhaseCommit::on_decision(Decision decision, const std::string& detail) {
  if (step_ != Step::Deciding) return {};
  switch (decision) {
    case Decision::Commit: {
      step_ = Step::Committing;
      std::vector<LegCommand> out = send_prepared("COMMIT PREPARED");
      if (out.empty()) finish(TwoPhaseOutcome::Committed);  // every written leg was lost: recovery commits
      return out;
    }
    case Decision::Abort:
      return roll_back(Status::server("40001", "COMMIT failed: two-phase commit " + gid_ +
                                                   " was decided abort by recovery before this proxy "
                                                   "recorded its commit (it took longer than the grace "
                                                   "period); the transaction was rolled back on every "
                                                   "shard; retry it"),
                       TwoPhaseOutcome::RolledBack);
    case Decision::Unknown: {
      std::string shards;
      for (const std::string& name : written_names()) shards += (shards.empty() ? "" : ", ") + name;
      client_error_ =
          Status::server("08007",
                         "the outcome of COMMIT is unknown: the catalog could not record the decision for "
                         "two-phase commit " +
                             gid_ + " (" + detail + "); it stays prepared on shards " + shards +
                             " until shardwire's recovery resolves it (committed only if the decision was "
                             "recorded)");
      finish(TwoPhaseOutcome::Unknown);
      return {};
    }
  }
  return {};
}

// The prepared transaction's end on every written leg that prepared and is still reachable.
std::vector<LegCommand> TwoPhaseCommit::send_prepared(const std::string& verb) {
  std::vector<LegCommand> out;
  for (LegState& leg : legs_) {
    if (!leg.prepared || leg.lost) continue;
    leg.pending = true;
    out.push_back({leg.who.shard, verb + " '" + leg_gid(leg) + "'"});
  }
  return out;
}

std::vector<LegCommand> TwoPhaseCommit::roll_back(Status error, TwoPhaseOutcome outcome) {
  step_ = Step::RollingBack;
  client_error_ = std::move(error);
  outcome_ = outcome;
  std::vector<LegCommand> out = send_prepared("ROLLBACK PREPARED");
  if (out.empty()) finish(outcome);
  return out;
}

void TwoPhaseCommit::finish(TwoPhaseOutcome outcome) {
  step_ = Step::Done;
  outcome_ = outcome;
  if (outcome == TwoPhaseOutcome::Committed) client_error_ = Status::ok();
}

}  // namespace sw::twopc
