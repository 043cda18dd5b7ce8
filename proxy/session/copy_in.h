// COPY sharded_table [(columns)] FROM STDIN for one client, outside any transaction
// (docs/architecture.md §5.10): one server per shard, each running BEGIN and the client's COPY;
// the client's rows split by key (wire::CopyRowSplitter, the router's bucket hash, the directory
// snapshot taken at the start) and streamed to their shard's COPY; at the client's CopyDone every
// shard's COPY is ended, the `COPY n` tags summed, and the shards' transactions committed
// together (commit_written_legs: one shard written, its COMMIT; several, the session's two-phase
// commit, TwoPhaseCommit) or, on any error, CopyFail from the client or a bad row, none of them:
// the servers are closed, which rolls their transactions back, so nothing is written.
//
// The client sees what one PostgreSQL shows: one CopyInResponse, then `COPY n` (the total) and
// ReadyForQuery, or one ErrorResponse (at once; its ReadyForQuery once the client ended its copy
// with CopyDone or CopyFail, as a server answers).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "pool/pool.h"
#include "router/directory.h"
#include "router/router.h"
#include "session/copy_in_plan.h"
#include "session/leg_engine.h"
#include "session/two_phase.h"
#include "wire/copy_rows.h"

namespace sw::session {

class CopyIn : public LegEngine::Runner {
 public:
  using Target = LegEngine::Target;
  struct Setup {
    std::string copy_query;  // the client's Query message, whole
    router::TableRule rule;  // the table's rule (a copy: a reload may replace the rules)
    CopyInPlan plan;
    std::shared_ptr<const router::Directory> directory;  // routes every row of this COPY
    ServerState session_state;  // the client's state: the servers are brought to it first
    // Rows on several shards commit by two-phase commit; else such a COPY is refused at its end
    // with `no_two_phase` saying why (sharding.cross_shard_transactions: refuse, no catalog).
    bool two_phase = false;
    std::string no_two_phase;
    // Inside the client's transaction (docs/architecture.md §5.10): the shards' transactions are
    // left open for the client's COMMIT or ROLLBACK (hand_back gets every server), and the
    // client's ReadyForQuery is the session's.
    bool in_transaction = false;
    // A reference table (docs/architecture.md §6.4): every CopyData goes whole to every shard
    // (no key, no splitting), every shard must copy the same number of rows, all commit.
    bool every_shard = false;
  };
  struct Callbacks : LegEngine::Callbacks {
    std::function<void()> resume_client;  // streaming began, or a shard's output drained
  };

  // One target per shard of the directory, in its order (a run on `callbacks.on`'s legs when set).
  CopyIn(std::vector<Target> targets, Setup setup, Callbacks callbacks);
  ~CopyIn() override;
  CopyIn(const CopyIn&) = delete;
  CopyIn& operator=(const CopyIn&) = delete;

  void start();
  // The session may hand over the client's next message: the copy is streaming (or failed and
  // waits for the client's CopyDone/CopyFail) and no shard's output is over its high-water mark.
  bool accepts_client_input() const;
  // One client message ('d' CopyData, 'c' CopyDone, 'f' CopyFail; Flush and Sync are ignored as
  // PostgreSQL ignores them in COPY; anything else ends the copy with 08P01).
  void on_client_message(char type, std::string_view body);
  // Writes the rows batched for each shard; the session calls it when the client's input holds no
  // complete message.
  void flush();
  bool finished() const { return phase_ == Phase::Done; }
  uint64_t rows() const { return rows_; }

 private:
  enum class Phase { Starting, Streaming, Ending, Committing, TwoPhase, Failed, Done };
  // The client's line of each row sent to one shard, as varint deltas (about a byte a row): a
  // shard's error names its own stream's line, the client is told its own (client_line).
  struct RowLines {
    std::string deltas;
    uint64_t last = 0;
  };
  using Message = LegEngine::Message;

  // LegEngine::Runner (copy_in.cc)
  // The client's CancelRequest: before the commit every leg with a server is cancelled (a shard's
  // 57014 fails the copy on every shard, as a cancel fails one PostgreSQL's COPY); during the
  // commit nothing is cancelled.
  bool cancellable(size_t leg) const override;
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const Message& message) override;
  void on_leg_ready(size_t leg) override;
  // During a two-phase commit only that leg is dropped; before, the whole copy fails.
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_leg_drained(size_t leg) override;
  void on_no_server(const Status& why) override;
  void on_leg_handed(size_t leg, LegEngine::Handed& handed) const override;

  // Servers (copy_in.cc)
  Status on_answer(size_t index, const Message& message);  // any but ErrorResponse
  Status on_position(std::string_view data_row);
  void start_streaming();
  void end_copies();
  void commit_written_legs();
  bool same_rows_everywhere();
  void complete();
  void release_servers(bool clean, const Status& error);
  void finish_in_transaction();
  void ready_for_query(std::string& out) const;

  // Two-phase commit over the legs (copy_in_commit.cc)
  void start_two_phase(const std::vector<size_t>& written);
  void finish_two_phase(TwoPhaseOutcome outcome, const Status& error);
  void fail(const Status& why, std::string_view server_error = {});

  // The client's rows (copy_in_rows.cc)
  void split(bool end_of_data);
  Status route_row(const wire::CopyItem& row);
  void to_every_leg(std::string_view bytes);
  void write_pending(size_t index);
  Status row_error(const Status& why, uint64_t line) const;
  static void record_line(RowLines& lines, uint64_t line);
  uint64_t client_line(const RowLines& lines, uint64_t shard_line) const;  // 0: not known
  std::string with_client_line(size_t index, const Message& error) const;

  // By leg (the engine's leg is the leg: these are its COPY stream's state).
  std::vector<bool> copy_sent_;              // got the client's COPY statement
  std::vector<std::string> copy_responses_;  // its CopyInResponse (empty: none yet)
  std::vector<std::string> batches_;         // CopyData payload batched for it
  std::vector<uint64_t> rows_sent_;
  std::vector<uint64_t> rows_copied_;  // its `COPY n`
  std::vector<RowLines> lines_;
  Setup setup_;
  bool position_query_;  // the first leg runs the key position query
  LegEngine servers_;    // after setup_: built from its session_state
  Callbacks callbacks_;
  wire::CopyRowSplitter splitter_;
  Phase phase_ = Phase::Starting;
  bool client_ended_ = false;  // the client sent CopyDone or CopyFail
  bool data_ended_ = false;    // the splitter reached the end of the data
  uint64_t rows_ = 0;
  std::unique_ptr<TwoPhaseLegs> two_phase_;
};

}  // namespace sw::session
