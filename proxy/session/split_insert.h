// A multi-row INSERT whose VALUES rows fall on several shards (Route::split, docs/architecture.md
// §5.11), or an extended batch whose Binds go to several shards before its Sync, for one client,
// outside any transaction block: one server per shard of the split, each
// running BEGIN and its part (the INSERT with only that shard's rows). The parts' answers are
// combined (SplitAnswer: RowDescription once, RETURNING rows in VALUES order, the summed `INSERT
// 0 n`); then the shards' transactions commit together, by two-phase commit (TwoPhaseLegs) when
// more than one shard inserted a row, else by COMMIT. An error on any part, a lost shard, or
// RETURNING rows that cannot be put in order: every server is closed, which rolls its transaction
// back, so no row is inserted anywhere, and the client gets the error naming the shard.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/batch_answer.h"
#include "session/split_answer.h"
#include "session/split_bind.h"
#include "session/two_phase_legs.h"
#include "wire/server_check.h"

namespace sw::session {

class SplitInsert : private pool::Pool::Waiter, private pool::BackendUser {
 public:
  struct Part {
    pool::Pool* pool = nullptr;
    std::string shard;  // its name, for messages
    // After BEGIN: the INSERT with this shard's rows as a Query, or (extended protocol) as
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
  };
  struct Callbacks {
    std::function<void(std::string_view)> write_client;
    std::function<void()> done;  // ReadyForQuery was written (called from a callback)
    TwoPhaseHooks two_phase;
  };

  // One part per shard of the split, in its order; each part's pool is another shard's.
  SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks);
  ~SplitInsert() override;
  SplitInsert(const SplitInsert&) = delete;
  SplitInsert& operator=(const SplitInsert&) = delete;

  void start();

 private:
  enum class Phase { Inserting, Committing, TwoPhase, Done };
  struct Leg {
    Part part;
    pool::Backend* backend = nullptr;
    bool waiting = false;
    int ready_owed = 0;  // ReadyForQuery messages still to come in this phase
    bool inserted = false;
    wire::ServerMessageCheck check;
  };

  // pool::Pool::Waiter, pool::BackendUser
  void on_backend_ready(pool::Backend* backend) override;
  void on_backend_failed(const Status& why) override;
  void on_backend_readable(pool::Backend& backend) override;
  void on_backend_lost(pool::Backend& backend, const Status& why) override;

  void send_start(Leg& leg);
  void read_leg(Leg& leg);
  Status on_message(Leg& leg, char type, std::string_view frame, std::string_view body);
  Status on_part_answer(Leg& leg, char type, std::string_view frame, std::string_view body);
  Status on_batch_answer(Leg& leg, char type, std::string_view frame, std::string_view body);
  void on_ready(Leg& leg);
  void commit();
  void commit_two_phase(const std::vector<size_t>& written);
  void finish(TwoPhaseOutcome outcome, const Status& error);
  void fail(const Status& why);
  void release_legs(bool clean);
  size_t index_of(const Leg& leg) const { return static_cast<size_t>(&leg - legs_.data()); }
  Leg* leg_of(const pool::Backend& backend);

  std::vector<Leg> legs_;
  Setup setup_;
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
