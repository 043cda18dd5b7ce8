// Which shards a transaction touched, which of them it wrote on, and what its COMMIT does there.
// A transaction may read on any number of shards but write on at most one: without two-phase
// commit, one COMMIT per shard cannot be made atomic across two written shards. With a single
// written shard the commit is atomic anyway: the read-only legs commit first, the written leg
// last, so a failure before the last COMMIT rolls everything back (a read-only leg's COMMIT has
// no effect to undo). Two-phase commit plugs in here: a second written shard would then make the
// plan TwoPhase instead of a refusal.
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
  };
  Kind kind = Kind::OnePhase;
  std::vector<int> first;  // read-only legs: committed first
  int last = -1;           // the written leg (or a read-only one when nothing was written)
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

  // A statement runs on `shard`. A write on a second shard is refused: the error names both shards.
  Status on_statement(int shard, bool writes, const std::string& shard_name);
  // The shard written on so far, -1 for none.
  int writer() const { return writer_; }
  const std::vector<int>& touched() const { return touched_; }
  // The commit order over the legs the transaction holds.
  CommitPlan commit_plan(const std::vector<int>& legs) const;
  // The transaction ended on every shard.
  void end();

  // The refusal of a write on `second` after writes on `first`.
  static Status cross_shard_write(const std::string& first, const std::string& second);

 private:
  bool open_ = false;
  std::string replay_;
  std::vector<int> touched_;
  int writer_ = -1;
  std::string writer_name_;
};

}  // namespace sw::session
