// Which shards a transaction touched, which of them it wrote on, and what its COMMIT does there.
// With a single written shard the commit is atomic without two-phase commit: the read-only legs
// commit first, the written leg last, so a failure before the last COMMIT rolls everything back
// (a read-only leg's COMMIT has no effect to undo). A second written shard makes the plan
// TwoPhase (twopc/two_phase_commit.h) when sharding.cross_shard_transactions is two_phase and a
// catalog records the decisions; otherwise that write is refused with 0A000.
// Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::session {

// What COMMIT does on the legs of a transaction, in order.
struct CommitPlan {
  enum class Kind {
    OnePhase,  // plain COMMIT on `first`, then on `last`
    TwoPhase,  // COMMIT on `first`; PREPARE TRANSACTION, decision, COMMIT PREPARED on `written`
  };
  Kind kind = Kind::OnePhase;
  std::vector<int> first;    // read-only legs: committed first
  int last = -1;             // OnePhase: the written leg (or a read-only one when nothing was written)
  std::vector<int> written;  // TwoPhase: the written legs, at least two
};

// What a write on a second shard of a transaction gets.
enum class CrossShardWrites {
  TwoPhase,         // allowed: COMMIT runs two-phase commit
  Refuse,           // sharding.cross_shard_transactions: refuse
  RefuseNoCatalog,  // two_phase configured, but no catalog.dsn to record decisions in
};

class TransactionShards {
 public:
  // The transaction started on its first shard: `begin` is the SQL that started it there (BEGIN
  // with its options and the statements that rode with it), replayed on every shard it joins.
  void begin(std::string begin);
  bool open() const { return open_; }
  // A server reported a transaction this class did not see begin (a BEGIN sent by a driver in
  // session pooling): it is open from now on, started by a plain BEGIN.
  void on_server_status(char status);
  // Settings and savepoints run in the transaction: a shard that joins later runs them after its
  // BEGIN, so a later ROLLBACK TO or SET LOCAL means the same there.
  void note_replayed(std::string_view sql);
  // What a shard joining the transaction runs before the statement that needs it.
  const std::string& replay() const { return replay_; }

  // What a write on a second shard gets from now on (the session sets it from its config).
  void set_cross_shard_writes(CrossShardWrites policy) { policy_ = policy; }
  // A statement runs on `shard`. A write on a second shard is refused unless the policy allows
  // two-phase commit: the error names both shards.
  Status on_statement(int shard, bool writes, const std::string& shard_name);
  // The first shard written on, -1 for none.
  int writer() const { return writers_.empty() ? -1 : writers_.front(); }
  // Every shard written on, in the order of their first writes.
  const std::vector<int>& writers() const { return writers_; }
  // A write on `shard` would be allowed (not refused by on_statement).
  bool may_write(int shard) const;
  const std::vector<int>& touched() const { return touched_; }
  // The commit order over the legs the transaction holds.
  CommitPlan commit_plan(const std::vector<int>& legs) const;
  // The transaction ended on every shard.
  void end();

  // The refusal of a write on `second` after writes on `first`.
  static Status cross_shard_write(const std::string& first, const std::string& second,
                                  CrossShardWrites policy);

 private:
  bool open_ = false;
  std::string replay_;
  std::vector<int> touched_;
  std::vector<int> writers_;
  std::string writer_name_;  // of the first written shard
  CrossShardWrites policy_ = CrossShardWrites::Refuse;
};

}  // namespace sw::session
