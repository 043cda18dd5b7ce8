// TwoPhaseLegs: the runners' two-phase commit (CopyIn, ReferenceWrite; docs/architecture.md §5.9).
#include "session/two_phase_legs.h"

#include <algorithm>
#include <utility>

#include "common/log.h"
#include "stats/snapshot.h"

namespace sw::session {

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
  started_us_ = stats::monotonic_us();
  coordinator_ = std::make_unique<TwoPhaseCommit>(hooks_.next_gid(), std::move(participants));
  LOG_DEBUG("%s: two-phase commit %s over %zu written shards", what_.c_str(), coordinator_->gid().c_str(),
            written.size());
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
    LOG_WARN("%s: two-phase commit %s: shard %zu answered %s", what_.c_str(), coordinator_->gid().c_str(),
             leg, error.sqlstate.c_str());
  }
  send_commands(coordinator_->on_answer(static_cast<int>(leg), error));
  advance();
}

void TwoPhaseLegs::on_lost(size_t leg, const std::string& why) {
  if (!coordinator_ || done_) return;
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
  if (outcome == TwoPhaseOutcome::Committed) {
    LOG_DEBUG("%s: two-phase commit %s committed", what_.c_str(), coordinator_->gid().c_str());
  } else {
    LOG_INFO("%s: two-phase commit %s %s", what_.c_str(), coordinator_->gid().c_str(),
             outcome == TwoPhaseOutcome::Unknown ? "left to recovery" : "rolled back");
  }
  if (hooks_.two_phase_done) hooks_.two_phase_done(outcome, started_us_);
  finished_(outcome, coordinator_->client_error());
}

}  // namespace sw::session
