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

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/every_shard_transaction.h"
#include "session/two_phase_legs.h"

namespace sw::session {

class ReferenceWrite : private EveryShardTransaction::Runner {
 public:
  using Target = EveryShardTransaction::Target;
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
    std::string session_state;         // SessionState signature the servers get first
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
  };
  using Callbacks = EveryShardTransaction::Callbacks;

  // EqualTags: one target per shard of the directory, in its order; SumRows: the route's shards.
  ReferenceWrite(std::vector<Target> targets, Setup setup, Callbacks callbacks);
  ~ReferenceWrite() override;
  ReferenceWrite(const ReferenceWrite&) = delete;
  ReferenceWrite& operator=(const ReferenceWrite&) = delete;

  // An INSERT ... SELECT on several shards reads through the owned-rows filter: see
  // EveryShardTransaction::watch_start.
  void watch_start(StartingReads& reads, uint64_t version) { servers_.watch_start(reads, version); }
  void start();
  // The client's CancelRequest: while the statement runs, every leg still owing its answer is
  // cancelled (a shard's 57014 then fails the write on every shard, as one PostgreSQL's cancel
  // fails the statement). During the commit nothing is cancelled: a commit is never cut halfway.
  void cancel();

 private:
  enum class Phase { Writing, Committing, TwoPhase, Done };
  static Setup described(Setup setup);
  struct Leg {           // by index, as the servers' legs
    int ready_owed = 0;  // ReadyForQuery messages still to come in this phase
    std::string tag;     // its CommandComplete tag of the client's statement
  };
  using Message = EveryShardTransaction::Message;

  // EveryShardTransaction::Runner
  void on_leg_server(size_t leg, std::string prologue, int ready_owed) override;
  Status on_leg_message(size_t leg, const Message& message) override;
  // A ReadyForQuery of the phase's statements: the write, the COMMIT, or the two-phase commit's.
  void on_leg_ready(size_t leg) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;
  void on_leg_handed(size_t leg, EveryShardTransaction::Handed& handed) const override;

  Status hold(size_t index, char type, std::string_view frame);
  Status answer_tag();  // the client's tag from the legs' tags, into tag_
  void commit();
  void finish(TwoPhaseOutcome outcome, const Status& error);
  void fail(const Status& why);
  void release_servers(bool clean, const Status& error);
  void finish_in_transaction();
  // What the failure did to the shards, for messages.
  const char* undone() const;

  std::vector<Leg> legs_;
  Setup setup_;
  EveryShardTransaction servers_;  // after setup_: built from its session_state
  Callbacks callbacks_;
  Phase phase_ = Phase::Writing;
  std::string result_;     // the client's RowDescription and DataRows (EqualTags: the first shard's)
  std::string held_once_;  // SumRows: the types held from the first shard that sent them (1, 2, T, n)
  std::string tag_;        // the client's CommandComplete tag
  std::unique_ptr<TwoPhaseLegs> two_phase_;
};

}  // namespace sw::session
