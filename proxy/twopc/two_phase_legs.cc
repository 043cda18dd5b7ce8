// TwoPhaseLegs: the one two-phase-commit driver and its table of outcomes (docs/architecture.md
// §5.9).
#include "twopc/two_phase_legs.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/failpoint.h"
#include "common/log.h"
#include "stats/snapshot.h"

namespace sw::twopc {

namespace {

constexpr std::array<TwoPhaseOutcomeRow, 3> kOutcomes{{
    {TwoPhaseOutcome::Committed, stats::CrossShardOutcome::TwoPhaseCommitted, true, true, "committed"},
    {TwoPhaseOutcome::RolledBack, stats::CrossShardOutcome::RolledBack, false, false, "rolled back"},
    {TwoPhaseOutcome::Unknown, stats::CrossShardOutcome::Unknown, false, false, "left to recovery"},
}};

}  // namespace

const TwoPhaseOutcomeRow& two_phase_outcome_row(TwoPhaseOutcome outcome) {
  for (const TwoPhaseOutcomeRow& row : kOutcomes)
    if (row.outcome == outcome) return row;
  return kOutcomes.back();  // unreachable: every outcome has its row
}

void count_two_phase_outcome(stats::WorkerTraffic& traffic, TwoPhaseOutcome outcome, int64_t elapsed_us) {
  const TwoPhaseOutcomeRow& row = two_phase_outcome_row(outcome);
  traffic.count_cross_shard_commit(row.counted);
  if (row.observes_latency) traffic.two_phase_commit_latency.observe_us(static_cast<uint64_t>(elapsed_us));
}

TwoPhaseLegs::TwoPhaseLegs(std::string what, TwoPhaseHooks hooks, Send send, Finished finished)
    : what_(std::move(what)),
      hooks_(std::move(hooks)),
      send_(std::move(send)),
      finished_(std::move(finished)) {}

const std::string& TwoPhaseLegs::gid() const {
  static const std::string none;
  return coordinator_ ? coordinator_->gid() : none;
}

void TwoPhaseLegs::start(const std::vector<std::string>& shards, const std::vector<size_t>& written) {
  std::vector<Participant> participants;
  for (size_t i = 0; i < shards.size(); ++i) {
    const bool writes = std::find(written.begin(), written.end(), i) != written.end();
    participants.push_back({static_cast<int>(i), shards[i], writes});
  }
  errors_.assign(shards.size(), Status::ok());
  shards_ = shards;
  started_us_ = stats::monotonic_us();
  coordinator_ = std::make_unique<TwoPhaseCommit>(hooks_.next_gid(), std::move(participants));
  LOG_DEBUG("%s: two-phase commit %s over %zu written shards", what_.c_str(), coordinator_->gid().c_str(),
            written.size());
  failpoint::hit("2pc.before_prepare");
  send_commands(coordinator_->start());
}

void TwoPhaseLegs::send_commands(const std::vector<LegCommand>& commands) {
  for (const LegCommand& command : commands) {
    const auto leg = static_cast<size_t>(command.shard);
    errors_[leg] = Status::ok();
    send_(leg, command.sql);
  }
}

void TwoPhaseLegs::on_error(size_t leg, const Status& error) {
  if (leg < errors_.size() && errors_[leg].is_ok()) errors_[leg] = error;
}

void TwoPhaseLegs::on_ready(size_t leg) {
  if (!coordinator_ || done_ || leg >= errors_.size()) return;
  const Status error = std::exchange(errors_[leg], Status::ok());
  if (!error.is_ok()) {
    LOG_WARN("%s: two-phase commit %s: shard %s answered %s", what_.c_str(), coordinator_->gid().c_str(),
             shards_[leg].c_str(), error.sqlstate.c_str());
  }
  const TwoPhaseCommit::Step before = coordinator_->step();
  send_commands(coordinator_->on_answer(static_cast<int>(leg), error));
  hit_fault_points(before);
  advance();
}

// The fault points between the legs (docs/architecture.md §6.4): the first written leg prepared
// while others still owe their answer; the first COMMIT PREPARED answered.
void TwoPhaseLegs::hit_fault_points(TwoPhaseCommit::Step before) const {
  const TwoPhaseCommit::Step now = coordinator_->step();
  if (before == TwoPhaseCommit::Step::Preparing && now == TwoPhaseCommit::Step::Preparing &&
      coordinator_->prepared_count() == 1)
    failpoint::hit("2pc.between_prepares");
  if (now == TwoPhaseCommit::Step::Committing && coordinator_->commit_prepared_count() == 1)
    failpoint::hit("2pc.between_commit_prepared");
}

void TwoPhaseLegs::on_lost(size_t leg, const std::string& why) {
  if (!coordinator_ || done_ || leg >= shards_.size()) return;
  LOG_WARN("%s: two-phase commit %s lost its server on shard %s: %s", what_.c_str(),
           coordinator_->gid().c_str(), shards_[leg].c_str(), why.c_str());
  send_commands(coordinator_->on_lost(static_cast<int>(leg), why));
  advance();
}

// The decision is asked for once every written leg prepared; `finished` is called at the end.
void TwoPhaseLegs::advance() {
  if (coordinator_->step() == TwoPhaseCommit::Step::Deciding && !deciding_) {
    deciding_ = true;
    hooks_.decide_commit(
        coordinator_->gid(), coordinator_->written_names(),
        [this, alive = std::weak_ptr<int>(alive_)](Decision decision, const std::string& detail) {
          if (alive.expired() || done_) return;
          if (decision == Decision::Commit) failpoint::hit("2pc.after_decision");
          if (decision != Decision::Commit) {
            LOG_WARN("%s: two-phase commit %s: decision %s %s", what_.c_str(), coordinator_->gid().c_str(),
                     decision == Decision::Abort ? "abort (recovery's)" : "unknown", detail.c_str());
          }
          send_commands(coordinator_->on_decision(decision, detail));
          advance();
        });
    return;
  }
  if (coordinator_->step() != TwoPhaseCommit::Step::Done || done_) return;
  done_ = true;
  const TwoPhaseOutcome outcome = coordinator_->outcome();
  const TwoPhaseOutcomeRow& row = two_phase_outcome_row(outcome);
  if (row.routine)
    LOG_DEBUG("%s: two-phase commit %s %s", what_.c_str(), coordinator_->gid().c_str(), row.logged);
  else
    LOG_INFO("%s: two-phase commit %s %s", what_.c_str(), coordinator_->gid().c_str(), row.logged);
  if (hooks_.two_phase_done) hooks_.two_phase_done(outcome, started_us_);
  finished_(outcome, coordinator_->client_error());
}

}  // namespace sw::twopc
