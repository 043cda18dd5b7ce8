// What the runners of one write on several shards' transactions, committed together, share
// (ReferenceWrite and SplitInsert; docs/architecture.md §5.11, §6.4): a LegEngine
// whose legs each run one statement after their prologue; the phase's end once every leg gave
// the ReadyForQuery it owes in the run's phase (the statement, the COMMITs; the engine counts
// them); the client's cancel while the statement runs; a leg that breaks the protocol
// or is lost (before the commit the write fails; during the two-phase commit only that leg is
// dropped and the coordinator decides what its loss means); the two-phase commit; and the run's
// end for the client, written once. The runner keeps its own policy: each leg's statement, what it
// takes of the legs' messages, when and how it commits, and the answer the client gets.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "session/leg_engine.h"
#include "session/result_shape.h"
#include "session/two_phase.h"

namespace sw::session {

class JointWrite : public LegEngine::Runner {
 public:
  using Target = LegEngine::Target;
  using Callbacks = LegEngine::Callbacks;

  ~JointWrite() override;
  JointWrite(const JointWrite&) = delete;
  JointWrite& operator=(const JointWrite&) = delete;

  void start() { servers_.start(); }

 protected:
  enum class Phase { Statement, Committing, TwoPhase, Done };
  using Message = LegEngine::Message;

  // One leg per target, in its order (a run on `callbacks.on`'s legs when set). `what` names the
  // statement in messages; inside the client's transaction (`in_transaction`) the shards'
  // transactions are left open for the client's COMMIT or ROLLBACK (hand_back gets every server),
  // and the client's ReadyForQuery is the session's.
  JointWrite(std::vector<Target> targets, ServerState session_state, std::string what, bool in_transaction,
             Callbacks callbacks);

  const std::string& what() const { return what_; }
  size_t leg_count() const { return servers_.size(); }
  // The leg's message is part of its answer to the statement (not of the prologue before it).
  bool answers_statement(size_t leg) const { return phase_ == Phase::Statement && !servers_.injected(leg); }
  // Whether leg `leg`'s RowDescription `body` has the columns of the first one this write took,
  // whose rows it goes under (result_shape.h). False: the write failed (42804, the undo named)
  // and the caller drops the message.
  bool same_columns(size_t leg, std::string_view body);
  // During the two-phase commit a leg's ErrorResponse is the coordinator's: true when it took it.
  bool two_phase_error(size_t leg, std::string_view error_body);
  // One more statement (`sql`, a simple Query) on the leg, in its transaction, before the commit:
  // commit() runs again once every leg answered it.
  void run_next(size_t leg, const std::string& sql);
  // COMMIT on every leg; on_committed() once every leg answered.
  void commit_every_leg();
  // The two-phase commit (TwoPhaseLegs): the `written` legs prepare, the others commit as
  // read-only legs; finish() gets its outcome.
  void commit_two_phase(const std::vector<size_t>& written);
  // Outside the client's transaction, after the commit: every server is released (clean), and
  // the client gets the answer when committed, else `error`.
  void finish(TwoPhaseOutcome outcome, const Status& error);
  // Inside the client's transaction, every leg answered the statement: every server goes to the
  // session, which may still refuse the outcome (the client then gets its error).
  void finish_in_transaction();
  // Before the commit: new servers are closed, which rolls their transactions back; the session
  // settles its borrowed legs (rolled back, or the client's transaction failed). Once only.
  void fail(const Status& why);
  // What a failure did to the shards, for messages.
  const char* undone() const;

  LegEngine servers_;
  Phase phase_ = Phase::Statement;

 private:
  ResultShape shape_;  // the RowDescriptions whose rows go to the client under the first one
  // The runner's policy.
  // LegEngine::Runner: what it takes of a leg's messages.
  bool on_leg_message(size_t leg, const Message& message) override = 0;
  // What leg `leg` runs after its prologue.
  virtual std::string_view statement(size_t leg) const = 0;
  // Every leg answered the statement: the runner commits (commit_every_leg, commit_two_phase,
  // finish_in_transaction) or fails.
  virtual void commit() = 0;
  // Every leg answered the COMMIT of commit_every_leg().
  virtual void on_committed() = 0;
  // Whether the leg's statement wrote there (the session records the shard written).
  virtual bool wrote(size_t leg) const = 0;
  // What the client gets ahead of the run's answer or error (moved out).
  virtual std::string take_preface() { return {}; }
  // The client's answer when the write succeeded: rows and tag (moved out).
  virtual std::string take_answer() = 0;

  // The client's end: the preface, then the answer when `succeeded`, else `error`; outside the
  // client's transaction ReadyForQuery.
  void answer_client(bool succeeded, const Status& error);

  // LegEngine::Runner
  // The client's CancelRequest: while the statement runs, every leg still owing its answer is
  // cancelled (a shard's 57014 then fails the write on every shard, as one PostgreSQL's cancel
  // fails the statement), and a leg still waiting for its server fails it with 57014 at once. During the
  // commit nothing is cancelled: a commit is never cut halfway.
  bool cancellable(size_t leg) const final {
    return phase_ == Phase::Statement && (servers_.ready_owed(leg) > 0 || servers_.waiting(leg));
  }
  void on_leg_server(size_t leg, std::string prologue) final;
  // A ReadyForQuery of the phase's statements: the statement, the COMMIT, or the two-phase commit's.
  void on_leg_ready(size_t leg) final;
  void on_leg_violation(size_t leg, const Status& why) final;
  void on_leg_lost(size_t leg, const Status& why) final;
  void on_no_server(const Status& why) final;
  void on_leg_handed(size_t leg, LegEngine::Handed& handed) const final;

  std::string what_;
  bool in_transaction_;
  Callbacks callbacks_;
  std::unique_ptr<TwoPhaseLegs> two_phase_;
};

}  // namespace sw::session
