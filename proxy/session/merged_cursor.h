// A cursor merged across shards (docs/architecture.md §5.6, "Cursors merged across shards"): a
// cursor of the same name on each shard the read reaches, declared in the client's transaction
// with the merge plan's per-shard SQL, and the proxy's half of the merge (a merge::Merger) that
// lives from DECLARE to CLOSE or the transaction's end. Each FETCH pulls merged rows; a shard
// whose buffered rows ran out (Merger::waiting_for) is refilled by a `FETCH n` of its cursor, n
// the rows the client still wants, so at most that many rows per shard are held. Pure: no I/O;
// the session runs the rounds (CursorRound) and feeds their answers here. A cursor WITH HOLD is
// declared WITH HOLD on each shard (each shard materializes its own at its commit) and outlives
// the transaction that declared it once that transaction committed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "merge/collation.h"
#include "merge/merger.h"
#include "merge/plan.h"
#include "session/cursor_scroll.h"
#include "session/result_shape.h"

namespace sw::session {

class MergedCursor {
 public:
  // `shards`: the directory indexes of the shards the read reaches (the plan's, in leg order).
  MergedCursor(std::string name, std::vector<int> shards, merge::MergePlan plan, const config::Fanout& limits,
               bool hold = false, bool scroll = false);

  const std::string& name() const { return name_; }
  // WITH HOLD; `committed`: the transaction that declared it committed (a ROLLBACK no longer
  // drops it); `failed`: a FETCH of it failed outside the transaction that declared it, so, as on
  // PostgreSQL, it can only be closed.
  bool hold() const { return hold_; }
  // SCROLL: the rows it returned, kept to move back; null for NO SCROLL.
  CursorScroll* scroll() { return scroll_ ? &*scroll_ : nullptr; }
  bool committed = false;
  bool failed = false;
  const std::vector<int>& shards() const { return shards_; }
  merge::Merger& merger() { return merger_; }

  // The client's DECLARE in the extended protocol: its Parse's parameter types, and its Bind's
  // parameter format codes and values as sent (wire::BindRest::parameters).
  struct Parameters {
    std::vector<uint32_t> types;
    std::string values;
  };
  // What leg i is sent to declare its cursor (wire messages): the collations query, the DECLARE
  // (with `parameters`, when given, as an extended batch), and a `FETCH 0` that answers the
  // cursor's RowDescription without moving it; declare_ready() ReadyForQuery messages answer it.
  std::string declare_messages(size_t leg, const Parameters* parameters) const;
  static int declare_ready(const Parameters* parameters) { return parameters != nullptr ? 3 : 1; }
  // A message of leg i's answer to declare_sql; `shard` names the leg's shard. Every shard's
  // RowDescription must match the first one's (42804 otherwise, session/result_shape.h).
  Status take_declared(size_t leg, std::string_view shard, char type, std::string_view body);
  // After the DECLARE round: every leg answered and the columns are known.
  bool declared() const;
  // The client's RowDescription of every FETCH.
  const std::string& row_description() const { return row_description_; }

  // What a shard whose rows ran out runs to refill them.
  std::string refill_sql(int64_t rows) const;
  // A message of a leg's answer to refill_sql(rows).
  Status take_refill(size_t leg, char type, std::string_view body, int64_t rows);
  // How many rows a refill asks each shard, `wanted` rows still wanted by the client (kAll:
  // every row left).
  int64_t refill_size(int64_t wanted) const;

 private:
  Status describe(std::string_view body);

  std::string name_;
  bool hold_ = false;
  std::optional<CursorScroll> scroll_;
  std::vector<int> shards_;
  merge::MergePlan plan_;
  merge::Merger merger_;
  int64_t max_rows_buffered_;
  std::vector<int> phase_;  // per leg: the DECLARE round's step its answer reached
  std::vector<merge::ShardCollations> collations_;
  merge::ShardColumns shard_columns_;
  ResultShape shape_;  // the DECLARE round's RowDescriptions: one shape
  bool described_ = false;
  std::string row_description_;
};

// The session's merged cursors by name: the transaction's, and the held ones that outlive it.
using MergedCursors = std::map<std::string, std::shared_ptr<MergedCursor>, std::less<>>;

// How the cursors' transaction ended, as PostgreSQL ends its portals: a COMMIT keeps the held
// cursors (committed from then on); a ROLLBACK drops every cursor it declared; a failure (a
// round's error) drops them too, the held ones of earlier transactions stay, but the one whose
// FETCH failed (`running`) can only be closed.
enum class CursorsEnd : uint8_t { Commit, Rollback, Failure };
void end_cursors(MergedCursors& cursors, CursorsEnd end, std::string_view running = {});

// A FETCH or MOVE of a merged cursor in progress (rounds may refill shards before it ends).
struct CursorFetch {
  std::string name;
  int64_t wanted = 1;  // CursorStatement::kAll: every row left
  int64_t rows = 0;    // rows it returned (or skipped) so far
  bool move = false;
  // A SCROLL cursor's move: answered from the kept rows once `wanted` rows are kept.
  std::optional<std::pair<CursorStatement::Direction, int64_t>> scroll;
};

}  // namespace sw::session
