// The coordinator of a two-phase commit over the legs of one transaction (docs/architecture.md
// "Two-phase commit"). Pure: it says what each leg is sent and what the client gets; the session
// sends, reads the answers and asks the catalog for the decision (SessionHost::decide_commit).
//
// Steps: Preparing (read-only legs COMMIT, written legs PREPARE TRANSACTION '<gid>_<n>', all in
// parallel) ->
// Deciding (the catalog records 'commit' for the gid, presumed abort) -> Committing (COMMIT
// PREPARED on every written leg) -> Done. A failure before the decision goes to RollingBack
// (ROLLBACK PREPARED where PREPARE succeeded); an abort decided earlier by recovery rolls back
// too; a decision that could not be recorded leaves the legs prepared for recovery.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace sw::twopc {

// One leg of the transaction, as the coordinator sees it.
struct Participant {
  int shard = -1;
  std::string name;  // the shard's name, for errors and the catalog row
  bool written = false;
};

// A statement (simple Query) for one leg.
struct LegCommand {
  int shard = -1;
  std::string sql;
  bool operator==(const LegCommand& other) const { return shard == other.shard && sql == other.sql; }
};

// What the catalog said about the gid.
enum class Decision : uint8_t {
  Commit,   // this proxy recorded 'commit'
  Abort,    // recovery recorded 'abort' first
  Unknown,  // the catalog failed or was unreachable: the outcome is not known
};

// How the transaction ended, for the client and the counters.
enum class TwoPhaseOutcome : uint8_t {
  Committed,
  RolledBack,  // a leg failed before the decision, or recovery had decided abort
  Unknown,     // left prepared for recovery; the client gets 08007
};

class TwoPhaseCommit {
 public:
  enum class Step : uint8_t { Preparing, Deciding, Committing, RollingBack, Done };

  TwoPhaseCommit(std::string gid, std::vector<Participant> legs);

  const std::string& gid() const { return gid_; }
  Step step() const { return step_; }
  // The names of the written shards (the catalog row's `shards`).
  std::vector<std::string> written_names() const;

  // The first commands: COMMIT on the read-only legs, PREPARE TRANSACTION on the written ones.
  std::vector<LegCommand> start();
  // The leg on `shard` answered its command (its ReadyForQuery arrived); `error` is the first
  // error it reported for it, ok when none.
  std::vector<LegCommand> on_answer(int shard, const Status& error);
  // The leg on `shard` lost its server: it answers nothing more.
  std::vector<LegCommand> on_lost(int shard, const std::string& why);
  // Step Deciding: the catalog's answer (`detail`: why it is unknown).
  std::vector<LegCommand> on_decision(Decision decision, const std::string& detail);

  // Written legs whose PREPARE TRANSACTION succeeded so far; written legs that answered
  // COMMIT PREPARED so far (the fault points between the legs use them).
  int prepared_count() const;
  int commit_prepared_count() const { return commit_prepared_; }

  // Step Done: the outcome and, unless committed, the error the client gets.
  TwoPhaseOutcome outcome() const { return outcome_; }
  const Status& client_error() const { return client_error_; }

 private:
  struct LegState {
    Participant who;
    bool pending = false;   // owes the answer to its last command
    bool prepared = false;  // PREPARE TRANSACTION succeeded, not yet resolved
    bool lost = false;
    int number = -1;  // written legs: 0, 1, ... in the order given
  };

  LegState* find(int shard);
  // What leg `leg` is prepared under: <gid>_<number> (twopc::leg_gid, gid.h): a gid is unique in a
  // whole PostgreSQL cluster, and two shards may be databases of one cluster.
  std::string leg_gid(const LegState& leg) const;
  std::vector<LegCommand> after_answer();
  std::vector<LegCommand> roll_back(Status error, TwoPhaseOutcome outcome);
  std::vector<LegCommand> send_prepared(const std::string& verb);
  void fail_before_decision(const LegState& leg, const Status& error);
  void finish(TwoPhaseOutcome outcome);

  std::string gid_;
  std::vector<LegState> legs_;
  Step step_ = Step::Preparing;
  Status first_failure_ = Status::ok();  // before the decision: what rolls the transaction back
  int commit_prepared_ = 0;
  TwoPhaseOutcome outcome_ = TwoPhaseOutcome::Unknown;
  Status client_error_ = Status::ok();
};

}  // namespace sw::twopc
