// Session: how cursors over several shards end (docs/architecture.md §5.6, "Cursors merged across
// shards"): with their transaction (COMMIT keeps the WITH HOLD ones, ROLLBACK drops those it
// declared), at DISCARD ALL, and the WITH HOLD ones' own rules: in transaction pooling they pin
// the client, a DECLARE outside a transaction block that failed on one shard is closed on the
// others, and a COMMIT that two-phase commit could not run with one open is refused.
#include <algorithm>

#include "parser/analyze.h"
#include "session/cursor_statement.h"
#include "session/session.h"

namespace sw::session {

// A COMMIT or ROLLBACK ends the cursors with the transaction (the held ones outlive a COMMIT);
// DISCARD ALL closes every cursor, held ones too.
void Session::forget_cursors_at_end(std::string_view sql) {
  if (txn_.cursors.empty()) return;
  auto facts = parser::analyze(sql);
  if (!facts || (*facts)->statements.size() != 1) return;
  const parser::StatementKind kind = (*facts)->statements[0].kind;
  if (kind == parser::StatementKind::Commit) end_cursors(txn_.cursors, CursorsEnd::Commit);
  if (kind == parser::StatementKind::Rollback) end_cursors(txn_.cursors, CursorsEnd::Rollback);
  if (kind == parser::StatementKind::DiscardAll) txn_.cursors.clear();  // every leg runs it
}

// A COMMIT that would run two-phase commit on a shard holding a cursor WITH HOLD declared in
// this transaction: PostgreSQL cannot PREPARE such a transaction, and the shards committed first
// would keep their halves of the cursor, so it is refused before anything commits.
Status Session::held_cursor_commit_refusal(std::string_view sql) const {
  const std::vector<int>& writers = txn_.shards.writers();
  if (txn_.cursors.empty() || writers.size() < 2 || txn_.control.aborted()) return Status::ok();
  for (const auto& [name, cursor] : txn_.cursors) {
    if (!cursor->hold() || cursor->committed) continue;
    for (int shard : cursor->shards()) {
      if (std::find(writers.begin(), writers.end(), shard) == writers.end()) continue;
      auto facts = parser::analyze(sql);
      if (!facts || (*facts)->statements.size() != 1 ||
          (*facts)->statements[0].kind != parser::StatementKind::Commit)
        return Status::ok();
      return Status::client(
          "0A000", "cursor \"" + name +
                       "\" WITH HOLD reads several shards and was declared in this transaction, which "
                       "wrote on several shards: their two-phase commit cannot keep such a cursor "
                       "(PostgreSQL cannot PREPARE a transaction that created a cursor WITH HOLD); the "
                       "transaction failed: ROLLBACK, then CLOSE the cursor before COMMIT or declare it "
                       "outside the transaction block");
    }
  }
  return Status::ok();
}

// In transaction pooling a cursor WITH HOLD pins the client (its shards' servers keep their
// halves of it), as the same cursor on one shard does (session_pin.cc).
Status Session::pin_for_held_cursor(const CursorStatement& statement, std::string_view declare_sql) {
  if (!statement.hold) return Status::ok();
  auto facts = parser::analyze(declare_sql);
  if (!facts || (*facts)->statements.size() != 1)
    return Status::proxy("XX000", "shardwire could not read the DECLARE it routed");
  return refuse_unpoolable((*facts)->statements[0], /*merged_cursor=*/true);
}

// A DECLARE ... WITH HOLD outside a transaction block failed on some shard (its error reached the
// client): the shards where it committed close their halves, so none is left behind.
void Session::close_held_halves(const MergedCursor& cursor) {
  std::string name = cursor.name();
  std::string close = "CLOSE " + quoted_name(name);
  for (std::string* text : {&name, &close})
    for (size_t at = text->find('\''); at != std::string::npos; at = text->find('\'', at + 2))
      text->insert(at, 1, '\'');
  const std::string sql = "DO $sw_close$ BEGIN IF EXISTS (SELECT FROM pg_cursors WHERE name = '" + name +
                          "') THEN EXECUTE '" + close + "'; END IF; END $sw_close$";
  start_cursor_round(
      cursor.shards(), std::vector<std::string>(cursor.shards().size(), sql),
      [](size_t, char, std::string_view) { return Status::ok(); },
      [this](const Status&) { end_cursor_request(); });
}

}  // namespace sw::session
