// CopyIn: the end of the copy. Every shard ended its COPY inside its transaction; the shards
// that got rows commit together (docs/architecture.md §5.10): one such shard with its COMMIT (the
// others roll back), several by the one two-phase-commit driver (TwoPhaseLegs, §5.9): PREPARE
// TRANSACTION on each, the decision recorded in the catalog, COMMIT PREPARED on each.
#include <utility>

#include "common/log.h"
#include "session/copy_in.h"
#include "wire/messages.h"

namespace sw::session {

void CopyIn::commit_written_legs() {
  std::vector<size_t> written;
  std::string names;
  for (size_t i = 0; i < servers_.size(); ++i) {
    rows_ += rows_copied_[i];
    if (rows_copied_[i] == 0 && rows_sent_[i] == 0) continue;
    written.push_back(i);
    names += (names.empty() ? "" : ", ") + servers_.shard(i);
  }
  if (setup_.every_shard && !same_rows_everywhere()) return;
  if (setup_.in_transaction) {
    finish_in_transaction();
    return;
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
  for (size_t i = 0; i < servers_.size(); ++i) {
    std::string out;
    wire::encode_query(out, !written.empty() && written.front() == i ? "COMMIT" : "ROLLBACK");
    servers_.expect_ready(i, 1);
    servers_.write(i, out);
  }
}

// Every leg answered its last statement: each goes back to its pool, the client gets `COPY n`.
void CopyIn::complete() {
  phase_ = Phase::Done;
  release_servers(true, Status::ok());  // a leg lost after the decision: recovery commits it
  std::string out;
  wire::encode_command_complete(out, "COPY " + std::to_string(rows_));
  ready_for_query(out);
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
  release_servers(true, error);  // idle: rolled back, or prepared for recovery
  std::string out;
  wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  ready_for_query(out);
  callbacks_.write_client(out);
  callbacks_.done();
}

// A reference table's copies must stay equal: every shard copied the same rows, the client's
// `COPY n` is one shard's count. Else the copy fails on every shard (55000).
bool CopyIn::same_rows_everywhere() {
  std::string answers;
  bool equal = true;
  for (size_t i = 0; i < rows_copied_.size(); ++i) {
    equal = equal && rows_copied_[i] == rows_copied_.front();
    answers += (answers.empty() ? "" : ", ") + servers_.shard(i) + ": " + std::to_string(rows_copied_[i]);
  }
  rows_ = rows_copied_.empty() ? 0 : rows_copied_.front();
  if (!equal) {
    fail(Status::server("55000", "COPY into reference table " + setup_.rule.config_name +
                                     " copied different row counts on the shards (" + answers +
                                     "); nothing was written"));
  }
  return equal;
}

// A COPY still open on a server (started, CopyDone not sent) needs the session's CopyFail.
void CopyIn::on_leg_handed(size_t index, LegEngine::Handed& handed) const {
  const bool copies_open = phase_ == Phase::Starting || phase_ == Phase::Streaming;
  handed.copy_open = copies_open && copy_sent_[index];
  handed.wrote = rows_sent_[index] > 0;
}

// Its end without a result the session could refuse (outside a transaction, or failed).
void CopyIn::release_servers(bool clean, const Status& error) {
  servers_.end_settled(setup_.in_transaction, clean, error, callbacks_.hand_back);
}

// Inside the client's transaction every shard ended its COPY: the servers stay in the
// transaction (the session records which shards wrote), the client gets `COPY n`.
void CopyIn::finish_in_transaction() {
  phase_ = Phase::Done;
  const Status verdict = servers_.end(setup_.in_transaction, true, Status::ok(), callbacks_.hand_back);
  std::string out;
  if (verdict.is_ok()) {
    wire::encode_command_complete(out, "COPY " + std::to_string(rows_));
  } else {
    wire::encode_error(out, "ERROR", verdict.sqlstate, verdict.message);
  }
  callbacks_.write_client(out);
  callbacks_.done();
}

// Outside a transaction the copy's answer ends with ReadyForQuery; inside, the session writes it.
void CopyIn::ready_for_query(std::string& out) const {
  if (!setup_.in_transaction) wire::encode_ready_for_query(out, 'I');
}

}  // namespace sw::session
