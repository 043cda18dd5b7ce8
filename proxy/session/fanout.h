// One simple Query run on several shards for one client, outside any transaction:
//  * Mode::ConcatenateRows — a read sent to every shard at once; rows relayed shard after shard
//    (one RowDescription, the DataRows of all, one "SELECT n" with the total); a shard whose
//    columns differ from the first shard's fails the read (42804, session/result_shape.h)
//    before any of its rows; a COPY ... TO STDOUT's copies joined into one by CopyOutJoin (one
//    "COPY n");
//  * Mode::OneAfterAnother — DDL applied shard after shard; the first failure stops it and the
//    error names the shards that did and did not apply the statement (DDL is not atomic);
//  * Mode::FirstToSucceed — COMMIT PREPARED / ROLLBACK PREPARED of a client's gid, tried shard
//    after shard until one finishes it (docs/architecture.md §5.9): a shard's 42704 (no such gid)
//    or 0A000 (the gid is another database's of the same cluster) sends it to the next shard; the
//    client gets the answer of the shard that finished it, byte for byte, or the first miss.
// The client sees exactly one answer ending in ReadyForQuery.
// On the session's engine (keep_servers, ConcatenateRows only: a COPY ... TO STDOUT inside the
// client's transaction block, or in session pooling; docs/architecture.md §5.6) the run borrows the
// transaction's legs: no leg is cancelled or closed by the run, and at the end every leg it kept is
// handed back to the session, with what it still owes when the run failed.
// An answer policy on the leg engine (session/leg_engine.h): relay shard after shard.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "session/copy_out_join.h"
#include "session/leg_engine.h"
#include "session/result_shape.h"
#include "session/starting_reads.h"

namespace sw::session {

class Fanout : public LegEngine::Runner {
 public:
  enum class Mode { ConcatenateRows, OneAfterAnother, FirstToSucceed };

  struct Target {
    pool::Pool* pool = nullptr;
    std::string shard;
    std::string epilogue_sql;  // run after the query on this shard, answer swallowed (may be empty)
    // This shard's own Query message instead of the client's (OneAfterAnother, not the first
    // target): its answer counts for errors only, the client's tag is the first target's.
    std::string query_message;
    // COPY ... TO STDOUT with CSV HEADER (ConcatenateRows): the shards' copies are joined into
    // one, and only the first target's header line is kept (CopyOutJoin).
    bool copy_csv_header = false;
  };

  // `write_client` receives bytes for the client; `done` is called once, after ReadyForQuery
  // was written, from inside a callback (the owner may delete the Fanout on the next turn).
  // `session_state` is the client's state (server_state.h): servers are brought to it first.
  Fanout(Mode mode, std::vector<Target> targets, std::string query_message, ServerState session_state,
         std::function<void(std::string_view)> write_client, std::function<void()> done);
  ~Fanout() override;
  Fanout(const Fanout&) = delete;
  Fanout& operator=(const Fanout&) = delete;

  // Extended-protocol batches: the client sent no Parse (its Bind named a known statement, the
  // shards get one anyway), so the shards' ParseComplete is not for the client.
  void hide_parse_complete() { parse_complete_sent_ = true; }

  // Runs on the legs of `legs`, the session's engine (ConcatenateRows, before start()), as
  // MergeFanout::keep_servers: `targets` by leg (Session::transaction_targets). A shard the
  // transaction holds a leg on reads on that leg's server (nothing sent before the statement but
  // the session's settings when it lacks them); another gets a new leg of `legs`, sent the target's
  // `begin` first (which joins it to the client's transaction). At the end `hand_back` gets every
  // leg and the run's error. Inside the client's transaction (`in_transaction`) the client's
  // ReadyForQuery is the session's, not written here, and every leg stays; outside it (session
  // pooling) a new leg goes back to its pool once read to its end.
  void keep_servers(std::vector<LegEngine::Target> targets, bool in_transaction,
                    LegEngine::HandBack hand_back, LegEngine& legs);

  // A read through the owned-rows filter routed with directory `version` (before start()): it
  // stays in `reads` until every leg's server answered the statement itself (so it took its
  // snapshot). Expiring it there fails the run while a leg still waits for a server, and only
  // ends the registration once every leg was sent its statement.
  void watch_start(StartingReads& reads, uint64_t version);
  void start();
  bool finished() const { return finished_; }

 private:
  // LegEngine::Runner
  // The client's CancelRequest goes to every leg whose server is running the statement (its
  // 57014 reaches the client once, as any shard's error). A cancelled server is closed, never
  // reused: a late cancel could hit the next client's query. OneAfterAnother stops at the error,
  // naming the shards that applied the statement.
  bool cancellable(size_t leg) const override { return leg >= current_; }
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override;
  void on_leg_ready(size_t leg) override;
  bool on_leg_refused(size_t leg, const Status& why) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_no_server(const Status& why) override;

  Status handle_message(size_t index, char type, std::string_view frame, std::string_view body);
  Status relay_answer(size_t index, char type, std::string_view frame, std::string_view body);
  void try_answer(char type, std::string_view frame, std::string_view body);
  void finish_leg(size_t index);
  void fail(const Status& why);
  void complete();
  std::string applied_summary(size_t failed_index) const;

  Mode mode_;
  std::vector<Target> targets_;  // by leg
  std::vector<LegEngine::Target> engine_targets_;
  std::unique_ptr<LegEngine> engine_;     // made by start()
  StartingReads* watch_reads_ = nullptr;  // watch_start's, applied by start()
  uint64_t watch_version_ = 0;
  std::string query_message_;
  ServerState session_state_;
  std::function<void(std::string_view)> write_client_;
  std::function<void()> done_;
  size_t current_ = 0;          // the leg whose answers are being relayed (the ones before it are done)
  bool epilogue_sent_ = false;  // the current leg's epilogue_sql went (its answer is swallowed)
  bool row_description_sent_ = false;
  ResultShape shape_;                 // ConcatenateRows: every shard's columns are the first shard's
  bool parse_complete_sent_ = false;  // ParseComplete/BindComplete/NoData: once, from the first shard
  bool bind_complete_sent_ = false;
  uint64_t rows_ = 0;
  std::optional<CopyOutJoin> copy_;  // COPY ... TO STDOUT answers (from the first CopyOutResponse)
  std::string command_tag_;
  bool errored_ = false;  // an ErrorResponse went to the client already
  bool finished_ = false;
  Status error_ = Status::ok();  // the run's first error (keep_servers hands it back)
  HeldLegs held_;                // keep_servers: on the session's engine, handed back at the end
  // FirstToSucceed: the current leg's answer so far; the answer of the first shard that did not
  // know the gid (relayed when none knew it; a 42704 preferred to a 0A000).
  std::string attempt_;
  std::string missed_;
  bool missed_unknown_ = false;
};

}  // namespace sw::session
