// Session pooling with several shards: the session keeps one server per shard it touched, and the
// client sees them as one session. What drops session state there — DEALLOCATE (a name or ALL), a
// protocol Close of a named statement, DISCARD ALL/PLANS/TEMP/SEQUENCES — runs on the active
// leg's server as the client sent it; once it succeeded there, every other server of the session
// drops the same, before the client's next request runs anywhere (read_client_messages waits for
// parked legs). Statements are closed with protocol Close messages, which also work in a failed
// transaction and need no quoting. SET and RESET reach the other servers before they run, like
// the savepoints (session_legs.cc).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

using parser::StatementKind;

// A statement of a Query that succeeded on the active leg.
void Session::reset_other_legs(const parser::StatementFacts& statement) {
  if (!pools_.session_pooling) return;
  switch (statement.kind) {
    case StatementKind::Prepare:
      // A SQL-level PREPARE lives on this server only: a DEALLOCATE of it runs here.
      if (auto prepare = parser::sql_prepare(statement.text))
        txn_.leg.client_statements.emplace(prepare->name);
      return;
    case StatementKind::Deallocate:
      if (auto name = parser::sql_deallocate(statement.text))
        drop_session_statements(name->empty() ? std::nullopt : std::optional<std::string>(std::move(*name)));
      return;
    case StatementKind::DiscardAll:
    case StatementKind::Discard: break;
    default: return;
  }
  const bool all = statement.kind == StatementKind::DiscardAll;
  if (all) drop_session_statements(std::nullopt);
  if (all) txn_.cursors.clear();  // every leg closes its halves of cursors over several shards
  // DISCARD ALL resets the settings to the proxy login's defaults: the client's startup values
  // come back as on the active leg (forward_query).
  std::string restore = all ? profile_.settings.restore_startup({statement}) : std::string();
  std::string out;
  std::vector<Owed> owed{Owed::Query};
  wire::encode_query(out, statement.text);
  if (!restore.empty()) {
    wire::encode_query(out, restore);
    owed.push_back(Owed::Query);
  }
  for (LegAnswers& other : txn_.parked) send_unseen(other, out, owed);
}

// A Query of several statements that succeeded on the active leg reached no other leg: a SET or
// RESET in it reaches them before their next request (catch_up_parked_leg).
void Session::note_settings_of_query(const parser::QueryFacts& facts) {
  if (!pools_.session_pooling || facts.statements.size() < 2) return;
  const bool settings =
      std::any_of(facts.statements.begin(), facts.statements.end(), [](const auto& statement) {
        return statement.kind == StatementKind::Set || statement.kind == StatementKind::Reset ||
               statement.kind == StatementKind::ResetAll;
      });
  if (!settings) return;
  for (LegAnswers& other : txn_.parked) other.settings_behind = true;
}

// The client's statement `name` (every one when nullopt) is gone from the active leg's server: the
// other servers of the session close their copies, and no leg parses it again from the proxy's
// memory (a Bind of it gets the server's 26000, as on one server).
void Session::drop_session_statements(const std::optional<std::string>& name) {
  if (name) {
    profile_.statements.remove(*name);
    txn_.leg.client_statements.erase(*name);
  } else {
    profile_.statements.clear();
    txn_.leg.client_statements.clear();
  }
  for (LegAnswers& other : txn_.parked) {
    std::string closes;
    std::vector<Owed> owed;
    for (const std::string& held : other.client_statements) {
      if (name && held != *name) continue;
      wire::encode_target(closes, 'C', 'S', held);
      owed.push_back(Owed::Close);
    }
    if (owed.empty()) continue;
    if (name)
      other.client_statements.erase(*name);
    else
      other.client_statements.clear();
    wire::encode_sync(closes);
    owed.push_back(Owed::Sync);
    send_unseen(other, closes, owed);
  }
}

// A Close of a named statement (session pooling): the active leg's server closes it as the client
// asked; the other servers of the session close their copies, so the name can be parsed again.
void Session::close_session_statement(std::string_view name) {
  if (!name.empty()) drop_session_statements(std::string(name));
}

// DEALLOCATE of a statement the active leg's server does not hold but another server of the
// session does (it was prepared there): the shard that runs it, else -1.
int Session::shard_holding_deallocated(const parser::StatementFacts& statement) const {
  if (!pools_.session_pooling || statement.kind != StatementKind::Deallocate) return -1;
  auto name = parser::sql_deallocate(statement.text);
  if (!name || name->empty() || txn_.leg.client_statements.count(*name) != 0) return -1;
  for (const LegAnswers& other : txn_.parked)
    if (other.client_statements.count(*name) != 0) return shard_of(other);
  return -1;
}

}  // namespace sw::session
