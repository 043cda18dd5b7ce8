// The client's transaction and the servers it runs on. A transaction owns zero or more legs, one
// server per shard it touched: the active leg runs the client's requests, the others are parked
// (idle, in the transaction) until a request needs their shard or the transaction ends. Outside
// any transaction, a Fanout runs one statement on every shard, or a CopyIn a COPY FROM STDIN into a
// sharded table.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pool/pool.h"
#include "session/commit_legs.h"
#include "session/copy_in.h"
#include "session/cursor_round.h"
#include "session/fanout.h"
#include "session/merge_fanout.h"
#include "session/merged_cursor.h"
#include "session/reference_write.h"
#include "session/response_tracker.h"
#include "session/runner_slot.h"
#include "session/split_insert.h"
#include "session/transaction_control.h"
#include "session/transaction_shards.h"
#include "session/two_phase.h"
#include "wire/server_check.h"

namespace sw::session {

using RunnerSlot = RunnerSlotOf<Fanout, MergeFanout, CopyIn, ReferenceWrite, SplitInsert, CursorRound>;

// The session runner's answer state of one leg of its engine (Session::legs_, leg `slot`), a
// server of the transaction: what the session expects of it. The server and its shard are the
// engine leg's (LegEngine::backend, target); the server is null when that leg lost it in a run,
// until the run's end drops this state. It never outlives its leg: it is dropped when the server
// is given back or lost.
struct LegAnswers {
  static constexpr size_t kNoSlot = static_cast<size_t>(-1);
  size_t slot = kNoSlot;     // the engine leg; kNoSlot: none
  ResponseTracker tracker;   // what the server still owes
  char server_status = 'I';  // as the server's last ReadyForQuery said
  // The server runs a Parse/Describe batch outside the client's transaction, which has no shard
  // yet (a deferred BEGIN): that batch must not pick the transaction's shard.
  bool outside_transaction = false;
  // That server runs the deferred BEGIN and riders first (a SET LOCAL search_path resolves the
  // batch's names as in the transaction), rolled back once the batch is answered; the client's
  // ReadyForQuery waits for that ROLLBACK (client_ready_owed), so nothing of the client's runs there
  // meanwhile.
  bool outside_begun = false;
  bool client_ready_owed = false;
  // Session pooling: the client's named statements parsed on this server (under the client's
  // names); another leg's server gets a statement's Parse before its first Bind or Describe.
  std::set<std::string, std::less<>> client_statements;
  // Session pooling: a SET or RESET ran in a transaction this server had not joined; it is brought
  // to the session's settings (SessionState::signature) before it runs the client's next request.
  bool settings_behind = false;

  bool attached() const { return slot != kNoSlot; }
  // Back at a transaction boundary: nothing owed, no transaction, no extended batch open.
  bool at_boundary(bool batch_open) const { return tracker.idle() && server_status == 'I' && !batch_open; }
};

// How the transaction's end runs over its parked legs before the active leg gets the client's
// COMMIT or ROLLBACK (session_legs.cc).
enum class Ending : uint8_t { None, Commit, Rollback };

// An extended batch outside a transaction block whose Binds reach several shards before its Sync
// (session_legs_pipeline.cc, docs/architecture.md §5.3): it became a transaction on those legs.
enum class SpreadBatch : uint8_t {
  None,
  Open,     // the legs run its units; the client's Sync commits them
  Syncing,  // every leg got a Sync of the proxy's; the client's Sync waits for their answers
};

// A two-phase commit of the client's transaction in progress (session_two_phase.cc), run by the
// one driver on the leg engine (CommitLegs), a run on the transaction's legs: they stay parked
// meanwhile (every one, the active one too), their servers read by the run.
struct TwoPhaseState {
  std::unique_ptr<CommitLegs> legs;
  std::string answered;   // extended COMMIT: what the proxy owes before CommandComplete
  bool extended = false;  // the batch's Sync gets the ReadyForQuery
  // It commits a spread batch at its Sync: no CommandComplete, only ReadyForQuery 'I'.
  bool ends_batch = false;
  // The driver finished (set by its `finished`; the session answers the client after the event).
  bool finished = false;
  TwoPhaseOutcome outcome = TwoPhaseOutcome::Unknown;
  Status client_error = Status::ok();
};

struct Transaction {
  TransactionControl control;      // deferred BEGIN, the status the client sees
  TransactionShards shards;        // the shards it read and wrote, what a joining shard replays
  LegAnswers leg;                  // the active leg: runs the client's requests
  std::vector<LegAnswers> parked;  // its other legs, each on another shard
  Ending ending = Ending::None;    // COMMIT/ROLLBACK runs on the parked legs first
  std::string end_failure;         // what a parked leg answered that fails the COMMIT
  bool active_committed = false;   // the active leg's last transaction end was a COMMIT
  // The multi-shard runner of the request in progress, if any: a Fanout (a statement on every
  // shard, outside any transaction), a MergeFanout (a read on every shard whose rows are merged),
  // a CopyIn (COPY FROM STDIN into a sharded table, split by key), a ReferenceWrite (a write of a
  // reference table on every shard) or a SplitInsert (a multi-row INSERT split by shard).
  RunnerSlot runner;
  // COMMIT runs two-phase commit: every leg is parked and in its run (a lost one gone); the
  // session counts as holding servers until it ends (holds_server), every leg lost or not.
  std::unique_ptr<TwoPhaseState> two_phase;
  // The client's portal of a read on every shard run on the legs with an Execute row limit: its
  // next Executes continue the merge while it waits (MergeFanout::keep_portal); once it ended
  // otherwise no shard holds it, so a later Execute of it is refused.
  std::string scatter_portal;
  bool scatter_portal_open = false;
  // SQL cursors over several shards (session_merged_cursor.cc; a CursorRound runs their rounds),
  // and the FETCH or MOVE of one in progress.
  MergedCursors cursors;
  std::optional<CursorFetch> cursor_fetch;
  // The unsynced batch runs on several legs; Syncing: whether something in it failed.
  SpreadBatch spread = SpreadBatch::None;
  bool spread_failed = false;

  bool holds_server() const { return leg.attached() || !parked.empty() || !runner.empty() || two_phase; }
  // Some parked leg still owes answers to what the proxy sent it.
  bool parked_busy() const {
    for (const LegAnswers& other : parked)
      if (!other.tracker.idle()) return true;
    return false;
  }
  // The status the client sees when the active leg reports `active`: failed if any leg failed.
  char combined_status(char active) const {
    for (const LegAnswers& other : parked)
      if (other.server_status == 'E') return 'E';
    return active;
  }
};

}  // namespace sw::session
