// The one two-phase-commit driver (docs/architecture.md §5.9, §5.10, §6.4): the session's COMMIT of
// a transaction written on several shards (a client's COMMIT, or the Sync that ends a batch spread
// over shards) and the runners' own commit (CopyIn, JointWrite: ReferenceWrite, SplitInsert) all
// end by it. It drives the coordinator (TwoPhaseCommit): its owner says which legs wrote, hands it
// each leg's error, ReadyForQuery and loss, and sends what it is told to send; the session's hooks
// give the gid, record the decision in the catalog and count the outcome (two_phase_outcome_row).
// The fault points of §6.4 (common/failpoint.h) are hit here. At the end `finished` gets the
// outcome and, unless committed, the error the client gets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "stats/traffic.h"
#include "twopc/two_phase_commit.h"

namespace sw::twopc {

// The table of outcomes: how each way a two-phase commit ends is counted and logged.
struct TwoPhaseOutcomeRow {
  TwoPhaseOutcome outcome;
  stats::CrossShardOutcome counted;  // cross_shard_commits
  bool observes_latency;             // two_phase_commit_latency: a commit's time only
  bool routine;                      // logged at debug; else at info, for an operator to find
  const char* logged;                // "committed", "rolled back", "left to recovery"
};
const TwoPhaseOutcomeRow& two_phase_outcome_row(TwoPhaseOutcome outcome);
// Counts `outcome` by its row; `elapsed_us`: from the first PREPARE to the end.
void count_two_phase_outcome(stats::WorkerTraffic& traffic, TwoPhaseOutcome outcome, int64_t elapsed_us);

// What a two-phase commit needs from the session (SessionHost): a new gid; the catalog's decision
// (`decided` is called on the session's thread); the outcome, for the counters.
struct TwoPhaseHooks {
  std::function<std::string()> next_gid;
  std::function<void(const std::string& gid, const std::vector<std::string>& shards,
                     std::function<void(Decision, std::string)> decided)>
      decide_commit;
  std::function<void(TwoPhaseOutcome outcome, int64_t started_us)> two_phase_done;
};

class TwoPhaseLegs {
 public:
  // Writes a simple Query to leg `leg`'s server (nothing when it lost its server).
  using Send = std::function<void(size_t leg, const std::string& sql)>;
  // Every leg answered (or was lost); `client_error` is set unless committed.
  using Finished = std::function<void(TwoPhaseOutcome outcome, const Status& client_error)>;

  // `what` names the statement in logs ("COPY into t", "client=c7 COMMIT").
  TwoPhaseLegs(std::string what, TwoPhaseHooks hooks, Send send, Finished finished);

  // Legs by index with their shard names; `written`: the indexes of the legs that wrote (PREPARE
  // TRANSACTION), the others commit as read-only legs.
  void start(const std::vector<std::string>& shards, const std::vector<size_t>& written);
  // The leg's ErrorResponse (the first one before its ReadyForQuery counts).
  void on_error(size_t leg, const Status& error);
  // The leg's ReadyForQuery: it answered its last command.
  void on_ready(size_t leg);
  // The leg lost its server (or broke the protocol and was dropped).
  void on_lost(size_t leg, const std::string& why);
  const std::string& gid() const;

 private:
  void send_commands(const std::vector<LegCommand>& commands);
  void hit_fault_points(TwoPhaseCommit::Step before) const;
  void advance();

  std::string what_;
  TwoPhaseHooks hooks_;
  Send send_;
  Finished finished_;
  std::unique_ptr<TwoPhaseCommit> coordinator_;
  std::vector<std::string> shards_;  // per leg: its shard's name, for logs
  std::vector<Status> errors_;       // per leg: the first error before its next ReadyForQuery
  bool deciding_ = false;
  bool done_ = false;
  int64_t started_us_ = 0;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // lets the decision's callback see our end
};

}  // namespace sw::twopc
