// CopyIn: the end of the copy. Every shard ended its COPY inside its transaction; the shards
// that got rows commit together (docs/architecture.md §5.10): one such shard with its COMMIT (the
// others roll back), several by the runners' two-phase commit (TwoPhaseLegs, §5.9): PREPARE
// TRANSACTION on each, the decision recorded in the catalog, COMMIT PREPARED on each.
#include <utility>

#include "session/copy_in.h"
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
    names += (names.empty() ? "" : ", ") + servers_.shard(i);
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
    servers_.write(i, out);
  }
}

// Every leg answered its last statement: each goes back to its pool, the client gets `COPY n`.
void CopyIn::complete() {
  phase_ = Phase::Done;
  servers_.release_all(true);  // a leg lost after the decision: recovery commits it
  std::string out;
  wire::encode_command_complete(out, "COPY " + std::to_string(rows_));
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

void CopyIn::start_two_phase(const std::vector<size_t>& written) {
  phase_ = Phase::TwoPhase;
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      "COPY into " + setup_.rule.config_name, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) { servers_.send_query(leg, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish_two_phase(outcome, error); });
  two_phase_->start(servers_.shard_names(), written);
}

// The coordinator is done: every leg answered (or was lost); the client gets `COPY n` or the
// coordinator's error (40001 when recovery decided abort, 08007 when the outcome is unknown).
void CopyIn::finish_two_phase(TwoPhaseOutcome outcome, const Status& error) {
  if (outcome == TwoPhaseOutcome::Committed) {
    complete();
    return;
  }
  phase_ = Phase::Done;
  servers_.release_all(true);  // idle: rolled back, or prepared for recovery
  std::string out;
  wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

}  // namespace sw::session
