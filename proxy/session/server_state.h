// The state a pooled server must be in before one client's statements run there
// (docs/architecture.md §5.7): that client's settings, and no other client's sequence values.
// PostgreSQL keeps the last value nextval/setval gave per sequence (currval) and the last sequence
// used (lastval) for the session, so a server that served another client since may answer that
// client's values; DISCARD SEQUENCES forgets them, as a fresh session has none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sw::pool {
class Backend;
}

namespace sw::session {

class SqlStatements;

struct ServerState {
  std::string settings;  // the client's SessionState::signature()
  uint64_t client = 0;   // the client's connection id (unique in the process); 0: nobody's
  // The client's SQL-level PREPAREs the server must hold, exactly (transaction pooling with one
  // shard); null: the servers' SQL-level statements are none of the proxy's business.
  const SqlStatements* sql_statements = nullptr;
};

// The SQL that brings a server to client `client`'s state (one Query's text; "" when it is in it
// already): a server whose applied settings are `applied_settings` and that may hold the sequence
// values of client `sequences_of` (0: nobody's). Another client's sequence values: DISCARD
// SEQUENCES; other settings: SessionState::kResetSql and `settings` (the client's signature). The
// client's own sequence values stay, so its currval goes on working on a server it gets back.
std::string server_prologue_sql(std::string_view applied_settings, uint64_t sequences_of,
                                std::string_view settings, uint64_t client);

// Appends to `prologue` the Query of server_prologue_sql, if any, and records that `backend` is
// in that state (and from now on may hold this client's sequence values: whatever the client runs
// may call nextval or setval, through a column default, a trigger, a function or a view).
// Then, with `sql_statements`, the Queries that make the server hold exactly those SQL-level
// prepared statements (bring_sql_statements_to). Returns the number of Queries appended: each
// owes a ReadyForQuery. Builds nothing when the server is in the state already (the common case:
// a hot path, once per transaction).
int bring_server_to(pool::Backend& backend, std::string_view settings, uint64_t client, std::string& prologue,
                    const SqlStatements* sql_statements = nullptr);
inline int bring_server_to(pool::Backend& backend, const ServerState& state, std::string& prologue) {
  return bring_server_to(backend, state.settings, state.client, prologue, state.sql_statements);
}

// Appends one Query per statement the server holds (`held`: name -> version) that the client does
// not hold in that version (DEALLOCATE), then one per statement of the client the server lacks
// (its PREPARE, run with the client's settings, which the prologue replayed before), and updates
// `held`. One Query each, so that one that fails (a PREPARE whose table is gone) spoils none of
// the others; their answers are swallowed like the prologue's. Returns the Queries appended.
int bring_sql_statements_to(std::unordered_map<std::string, uint64_t>& held, const SqlStatements& client,
                            std::string& prologue);

}  // namespace sw::session
