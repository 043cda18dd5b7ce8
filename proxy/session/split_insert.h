// A multi-row INSERT whose VALUES rows fall on several shards (Route::split, docs/architecture.md
// §5.11), or (outside a transaction block) an extended batch whose Binds go to several shards
// before its Sync, for one client: a server per shard of the split (EveryShardTransaction: new
// ones, or the session's servers it lends), each running its part (the INSERT with only that
// shard's rows) in a transaction. The parts' answers are combined (SplitAnswer: RowDescription
// once, RETURNING rows in VALUES order, the summed `INSERT 0 n`). Outside the client's
// transaction the shards' transactions then commit together, by two-phase commit (TwoPhaseLegs)
// when more than one shard inserted a row, else by COMMIT; an error on any part, a lost shard, or
// RETURNING rows that cannot be put in order closes every new server (its transaction rolls
// back), so no row is inserted anywhere. Inside the client's transaction every server stays in
// it, the shards that inserted recorded as written, for the client's COMMIT or ROLLBACK; a
// failure fails the transaction (the session settles the lent servers).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/batch_answer.h"
#include "session/every_shard_transaction.h"
#include "session/split_answer.h"
#include "session/split_bind.h"
#include "session/two_phase_legs.h"

namespace sw::session {

class SplitInsert : private EveryShardTransaction::Runner {
 public:
  struct Part {
    EveryShardTransaction::Target target;  // its shard's server (a new one, or lent)
    // After the prologue: the INSERT with this shard's rows as a Query, or (extended protocol) as
    // Parse/Bind/[Describe portal]/Execute/Sync with only its own parameters.
    std::string request;
  };
  struct Setup {
    std::string table;          // the sharded table, for messages
    std::string session_state;  // SessionState signature the servers get first
    std::vector<int> row_part;  // per VALUES row: its part (InsertSplit::row_part)
    std::string answered;       // extended protocol: ParseComplete/BindComplete the client is owed first
    // A batch of units (Bind/Execute) on several shards instead of one split INSERT: per unit in
    // the client's order, its part and whether the client parsed it (BatchAnswer). Empty: a split.
    std::vector<int> unit_part;
    std::vector<bool> unit_parsed;
    std::string what;  // names the statement in messages ("INSERT into sharded table t")
    // Inside the client's transaction (a split INSERT only): the shards' transactions are left
    // open for the client's COMMIT or ROLLBACK (hand_back gets every server), and the client's
    // ReadyForQuery is the session's.
    bool in_transaction = false;
  };
  using Callbacks = EveryShardTransaction::Callbacks;

  // One part per shard of the split, in its order; each part's shard is another.
  SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks);
  ~SplitInsert() override;
  SplitInsert(const SplitInsert&) = delete;
  SplitInsert& operator=(const SplitInsert&) = delete;

  void start();
  // The client's CancelRequest: while the statement runs, every leg still owing its answer is
  // cancelled (a shard's 57014 then fails the write on every shard, as one PostgreSQL's cancel
  // fails the statement). During the commit nothing is cancelled: a commit is never cut halfway.
  void cancel();
  // Moves the parts' targets out, in the parts' order.
  static std::vector<EveryShardTransaction::Target> targets_of(std::vector<Part>& parts);

 private:
  enum class Phase { Inserting, Committing, TwoPhase, Done };
  struct Leg {  // by index, as the servers' legs
    std::string request;
    int ready_owed = 0;  // ReadyForQuery messages still to come in this phase
    bool inserted = false;
  };
  using Message = EveryShardTransaction::Message;
  static Setup described(Setup setup);
  // EveryShardTransaction::Runner
  void on_leg_server(size_t leg, std::string prologue, int ready_owed) override;
  Status on_leg_message(size_t leg, const Message& message) override;
  // A ReadyForQuery of the phase's statements: the part, the COMMIT, or the two-phase commit's.
  void on_leg_ready(size_t leg) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;
  void on_leg_handed(size_t leg, EveryShardTransaction::Handed& handed) const override;

  Status on_part_answer(size_t index, char type, std::string_view frame, std::string_view body);
  Status on_batch_answer(size_t index, char type, std::string_view frame, std::string_view body);
  Status error_of(size_t index, std::string_view body) const;
  void commit();
  void commit_two_phase(const std::vector<size_t>& written);
  void finish(TwoPhaseOutcome outcome, const Status& error);
  void finish_in_transaction();
  void fail(const Status& why);
  // What a failure did to the shards, for messages.
  const char* undone() const;

  std::vector<Leg> legs_;
  Setup setup_;
  EveryShardTransaction servers_;  // after setup_: built from its session_state
  Callbacks callbacks_;
  Phase phase_ = Phase::Inserting;
  SplitAnswer answer_;
  std::string notices_;  // the parts' NoticeResponses, relayed ahead of the answer
  std::string result_;   // the combined answer, once every part answered
  Status commit_error_ = Status::ok();
  std::unique_ptr<TwoPhaseLegs> two_phase_;
  std::unique_ptr<BatchAnswer> batch_;  // a batch of units instead of a split INSERT
  Status batch_error_ = Status::ok();   // the first error of a unit: the batch is rolled back
};

}  // namespace sw::session
