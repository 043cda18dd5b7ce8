// A write of a reference table (INSERT, UPDATE, DELETE, MERGE, TRUNCATE; docs/architecture.md
// §6.4) for one client, outside any transaction: one server per shard, each running BEGIN and the
// client's statement. Every shard must answer the same CommandComplete tag (the copies are equal,
// so the write must do the same everywhere); then the shards' transactions commit together by
// two-phase commit (TwoPhaseLegs; one shard: its COMMIT). The client gets the first shard's
// result (RowDescription and DataRows of RETURNING, buffered until every shard answered: the
// copies are equal, so they are the rows) and the tag once, as one PostgreSQL answers. An error
// on a shard, a lost shard or differing tags: every server is closed, which rolls its transaction
// back, so no copy changes, and the client gets the error naming the shard.
//
// With Answer::SumRows it runs an INSERT ... SELECT between co-located sharded tables (§6.3) on
// some shards: each inserts different rows, so the tags are not compared; the client gets one
// RowDescription, every shard's DataRows (RETURNING; an INSERT ... SELECT has no row order) and
// `INSERT 0 <the shards' total>`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "session/joint_write.h"
#include "session/key_move.h"
#include "session/starting_reads.h"

namespace sw::session {

class ReferenceWrite : public JointWrite {
 public:
  enum class Answer : uint8_t {
    EqualTags,  // every shard's tag must be equal; the first shard's rows are the client's
    SumRows,    // every shard's rows, one RowDescription, INSERT 0 <sum of the shards' counts>
  };
  struct Setup {
    // The client's Query message whole, or its extended batch rebuilt: Parse (unnamed), Bind,
    // [Describe portal], Execute, Sync.
    std::string query;
    // Instead of `query`, one message per target, in the targets' order (a split write: each shard
    // with its own key lists).
    std::vector<std::string> queries;
    bool hide_parse_complete = false;  // extended: the client sent no Parse
    std::string table;                 // the reference table, for messages
    ServerState session_state;         // the client's state: the servers are brought to it first
    Answer answer = Answer::EqualTags;
    // The write, for messages: "write of reference table plans" (the default, from `table`).
    std::string what;
    // Inside the client's transaction (docs/architecture.md §6.4): the shards' transactions are
    // left open for the client's COMMIT or ROLLBACK (hand_back gets every server), and the
    // client's ReadyForQuery is the session's.
    bool in_transaction = false;
    // The statement reads sharded tables through the owned-rows filter (an INSERT ... SELECT):
    // the session registers it in StartingReads (watch_start).
    bool reads_owned_rows = false;
    // SumRows of an UPDATE that moves rows between shards (docs/architecture.md §6.3): after the
    // statement (each shard deleted its rows and answered the new ones) each leg inserts the new
    // rows its shard owns (KeyMovePlan), then they commit together; the client sees only its own
    // RETURNING items and `UPDATE <count>`.
    std::shared_ptr<const router::KeyMove> key_move;
    KeyMoveClient key_move_client;  // how the client asked for the move's answer
  };

  // EqualTags: one target per shard of the directory, in its order; SumRows: the route's shards.
  ReferenceWrite(std::vector<Target> targets, Setup setup, Callbacks callbacks);
  ~ReferenceWrite() override;
  ReferenceWrite(const ReferenceWrite&) = delete;
  ReferenceWrite& operator=(const ReferenceWrite&) = delete;

  // An INSERT ... SELECT on several shards reads through the owned-rows filter: see
  // LegEngine::watch_start.
  void watch_start(StartingReads& reads, uint64_t version) { servers_.watch_start(reads, version); }
  // Inside a transaction block, once answered: the RETURNING rows of a move that its client's
  // Executes left at their row limits (KeyMovePlan::take_rest); null otherwise.
  std::unique_ptr<KeyMoveRest> take_key_move_rest() { return std::move(rest_); }

 private:
  // `what` defaults to the reference write's wording.
  static std::string what_of(const Setup& setup);

  // LegEngine::Runner
  bool on_leg_message(size_t leg, const Message& message) override;
  // JointWrite
  std::string_view statement(size_t leg) const override;
  // Every shard ran the statement: equal tags commit, on several shards by two-phase commit.
  void commit() override;
  void on_committed() override { finish(TwoPhaseOutcome::Committed, Status::ok()); }
  bool wrote(size_t /*leg*/) const override { return true; }
  std::string take_answer() override;

  Status hold(size_t index, char type, std::string_view frame);
  Status answer_tag();  // the client's tag from the legs' tags, into tag_

  // An UPDATE that moves rows: the statement's rows, then (moving_) the legs' moves.
  Status on_move_message(size_t index, const Message& message);
  bool start_moves();  // false: nothing moves

  std::vector<std::string> tags_;  // by leg: its CommandComplete tag of the client's statement
  Setup setup_;
  std::unique_ptr<KeyMovePlan> move_;
  bool moving_ = false;
  std::unique_ptr<KeyMoveRest> rest_;
  std::string result_;     // the client's RowDescription and DataRows (EqualTags: the first shard's)
  std::string held_once_;  // SumRows: the types held from the first shard that sent them (1, 2, T, n)
  std::string tag_;        // the client's CommandComplete tag
};

}  // namespace sw::session
