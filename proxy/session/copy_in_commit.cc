// CopyIn: the end of the copy. Every shard ended its COPY inside its transaction; the shards
// that got rows commit together (docs/architecture.md §5.10): one such shard with its COMMIT (the
// others roll back), several by the session's two-phase commit (TwoPhaseCommit, §5.9): PREPARE
// TRANSACTION on each, the decision recorded in the catalog, COMMIT PREPARED on each.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "session/copy_in.h"
#include "stats/snapshot.h"
#include "wire/messages.h"

namespace sw::session {

void CopyIn::commit_written_legs() {
  std::vector<size_t> written;
  std::string names;
  for (size_t i = 0; i < legs_.size(); ++i) {
    const Leg& leg = legs_[i];
    rows_ += leg.rows_copied;
    if (leg.rows_copied == 0 && leg.rows_sent == 0) continue;
    written.push_back(i);
    names += (names.empty() ? "" : ", ") + leg.target.shard;
  }
  if (written.size() > 1) {
    if (setup_.two_phase) {
      start_two_phase(written);
      return;
    }
    fail(Status::client(
        "0A000", "COPY into sharded table " + setup_.rule.config_name + " has rows for shards " + names +
                     ", which commit together only by two-phase commit (" + setup_.no_two_phase +
                     "); nothing was written: split the data by shard"));
    return;
  }
  phase_ = Phase::Committing;
  for (size_t i = 0; i < legs_.size(); ++i) {
    std::string out;
    wire::encode_query(out, !written.empty() && written.front() == i ? "COMMIT" : "ROLLBACK");
    legs_[i].ready_owed = 1;
    legs_[i].backend->connection().write(out);
  }
}

// Every leg answered its last statement: each goes back to its pool, the client gets `COPY n`.
void CopyIn::complete() {
  phase_ = Phase::Done;
  for (Leg& leg : legs_) {
    pool::Backend* backend = leg.backend;
    if (backend == nullptr) continue;  // lost after the decision: recovery commits it
    leg.backend = nullptr;
    backend->detach();
    leg.target.pool->release(backend, true);
  }
  std::string out;
  wire::encode_command_complete(out, "COPY " + std::to_string(rows_));
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

void CopyIn::start_two_phase(const std::vector<size_t>& written) {
  std::vector<Participant> participants;
  for (size_t i = 0; i < legs_.size(); ++i) {
    const bool writes = std::find(written.begin(), written.end(), i) != written.end();
    participants.push_back({static_cast<int>(i), legs_[i].target.shard, writes});
  }
  phase_ = Phase::TwoPhase;
  two_phase_started_us_ = stats::monotonic_us();
  two_phase_ = std::make_unique<TwoPhaseCommit>(callbacks_.next_gid(), std::move(participants));
  LOG_INFO("COPY into %s: two-phase commit %s over %zu written shards", setup_.rule.config_name.c_str(),
           two_phase_->gid().c_str(), written.size());
  send_commands(two_phase_->start());
}

void CopyIn::send_commands(const std::vector<LegCommand>& commands) {
  for (const LegCommand& command : commands) {
    Leg& leg = legs_[static_cast<size_t>(command.shard)];
    if (leg.backend == nullptr) continue;  // lost: the coordinator knows
    std::string out;
    wire::encode_query(out, command.sql);
    leg.end_error = Status::ok();
    leg.backend->connection().write(out);
  }
}

// A leg's ReadyForQuery ends its answer to the coordinator's last statement.
void CopyIn::on_two_phase_ready(Leg& leg) {
  const Status error = std::exchange(leg.end_error, Status::ok());
  if (!error.is_ok()) {
    LOG_WARN("COPY into %s: two-phase commit %s: shard %s answered %s", setup_.rule.config_name.c_str(),
             two_phase_->gid().c_str(), leg.target.shard.c_str(), error.sqlstate.c_str());
  }
  send_commands(two_phase_->on_answer(static_cast<int>(&leg - legs_.data()), error));
  advance_two_phase();
}

// The decision is asked for once every written leg prepared; the client is answered at the end.
void CopyIn::advance_two_phase() {
  if (two_phase_->step() == TwoPhaseCommit::Step::Deciding && !deciding_) {
    deciding_ = true;
    callbacks_.decide_commit(
        two_phase_->gid(), two_phase_->written_names(),
        [this, alive = std::weak_ptr<int>(alive_)](Decision decision, const std::string& detail) {
          if (alive.expired() || phase_ != Phase::TwoPhase) return;
          if (decision != Decision::Commit) {
            LOG_WARN("COPY into %s: two-phase commit %s: decision %s %s", setup_.rule.config_name.c_str(),
                     two_phase_->gid().c_str(),
                     decision == Decision::Abort ? "abort (recovery's)" : "unknown", detail.c_str());
          }
          send_commands(two_phase_->on_decision(decision, detail));
          advance_two_phase();
        });
    return;
  }
  if (two_phase_->step() == TwoPhaseCommit::Step::Done) finish_two_phase();
}

// The coordinator is done: every leg answered (or was lost); the client gets `COPY n` or the
// coordinator's error (40001 when recovery decided abort, 08007 when the outcome is unknown).
void CopyIn::finish_two_phase() {
  const TwoPhaseOutcome outcome = two_phase_->outcome();
  LOG_INFO("COPY into %s: two-phase commit %s %s", setup_.rule.config_name.c_str(), two_phase_->gid().c_str(),
           outcome == TwoPhaseOutcome::Committed ? "committed"
           : outcome == TwoPhaseOutcome::Unknown ? "left to recovery"
                                                 : "rolled back");
  if (callbacks_.two_phase_done) callbacks_.two_phase_done(outcome, two_phase_started_us_);
  if (outcome == TwoPhaseOutcome::Committed) {
    complete();
    return;
  }
  const Status error = two_phase_->client_error();
  phase_ = Phase::Done;
  for (Leg& leg : legs_) {
    pool::Backend* backend = leg.backend;
    if (backend == nullptr) continue;
    leg.backend = nullptr;
    backend->detach();
    leg.target.pool->release(backend, true);  // idle: rolled back, or prepared for recovery
  }
  std::string out;
  wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

}  // namespace sw::session
