// A multi-row INSERT whose VALUES rows fall on several shards (Route::split, docs/architecture.md
// §5.11), or (outside a transaction block) an extended batch whose Binds go to several shards
// before its Sync, for one client: a server per shard of the split (LegEngine: new
// legs, or the transaction's legs on those shards), each running its part (the INSERT with only that
// shard's rows) in a transaction. The parts' answers are combined (SplitAnswer: RowDescription
// once, RETURNING rows in VALUES order, the summed `INSERT 0 n`). Outside the client's
// transaction the shards' transactions then commit together, by two-phase commit (TwoPhaseLegs)
// when more than one shard inserted a row, else by COMMIT; an error on any part, a lost shard, or
// RETURNING rows that cannot be put in order closes every new server (its transaction rolls
// back), so no row is inserted anywhere. Inside the client's transaction every server stays in
// it, the shards that inserted recorded as written, for the client's COMMIT or ROLLBACK; a
// failure fails the transaction (the session settles its borrowed legs).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "session/batch_answer.h"
#include "session/joint_write.h"
#include "session/split_answer.h"
#include "session/split_bind.h"

namespace sw::session {

class SplitInsert : public JointWrite {
 public:
  struct Part {
    LegEngine::Target target;  // its shard's server (a new leg, or borrowed)
    // After the prologue: the INSERT with this shard's rows as a Query, or (extended protocol) as
    // Parse/Bind/[Describe portal]/Execute/Sync with only its own parameters; row by row, one
    // INSERT per row in the Query, or one Parse/Bind/[Describe]/Execute per row before the Sync.
    std::string request;
  };
  struct Setup {
    std::string table;          // the sharded table, for messages
    ServerState session_state;  // the client's state: the servers are brought to it first
    std::vector<int> row_part;  // per VALUES row: its part (InsertSplit::row_part)
    bool row_by_row = false;    // each part runs one INSERT per row (InsertSplit::row_by_row)
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

  // One part per shard of the split, in its order; each part's shard is another.
  SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks);
  ~SplitInsert() override;
  SplitInsert(const SplitInsert&) = delete;
  SplitInsert& operator=(const SplitInsert&) = delete;

  // Moves the parts' targets out, in the parts' order.
  static std::vector<LegEngine::Target> targets_of(std::vector<Part>& parts);

 private:
  // `what` defaults to the split INSERT's wording.
  static std::string what_of(const Setup& setup);

  // LegEngine::Runner
  bool on_leg_message(size_t leg, const Message& message) override;
  // JointWrite
  std::string_view statement(size_t leg) const override { return requests_[leg]; }
  // Every part ran: the answer is combined before anything commits (a refusal still rolls back);
  // inside the client's transaction nothing commits; else rows on several shards commit by
  // two-phase commit, and otherwise every leg by COMMIT.
  void commit() override;
  // Committed, or the first COMMIT's error.
  void on_committed() override;
  bool wrote(size_t leg) const override { return inserted_[leg]; }
  std::string take_preface() override;
  std::string take_answer() override { return std::move(result_); }

  Status on_part_answer(size_t index, char type, std::string_view frame, std::string_view body);
  Status on_batch_answer(size_t index, char type, std::string_view frame, std::string_view body);
  Status error_of(size_t index, std::string_view body) const;

  std::vector<std::string> requests_;  // by leg: what it runs (its part of the split)
  std::vector<bool> inserted_;         // by leg: its part inserted rows
  Setup setup_;
  SplitAnswer answer_;
  std::string notices_;  // the parts' NoticeResponses, relayed ahead of the answer
  std::string result_;   // the combined answer, once every part answered
  Status commit_error_ = Status::ok();
  std::unique_ptr<BatchAnswer> batch_;  // a batch of units instead of a split INSERT
  Status batch_error_ = Status::ok();   // the first error of a unit: the batch is rolled back
};

}  // namespace sw::session
