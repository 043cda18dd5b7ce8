#include "session/server_state.h"

#include "pool/backend.h"
#include "session/session_state.h"
#include "session/sql_prepared.h"
#include "sqltext/catalog_sql.h"
#include "wire/messages.h"

namespace sw::session {

namespace {

bool holds_other_sequences(uint64_t sequences_of, uint64_t client) {
  return sequences_of != 0 && sequences_of != client;
}

}  // namespace

std::string server_prologue_sql(std::string_view applied_settings, uint64_t sequences_of,
                                std::string_view settings, uint64_t client) {
  std::string sql;
  if (holds_other_sequences(sequences_of, client)) sql = "DISCARD SEQUENCES;";
  if (applied_settings != settings) {
    sql += SessionState::kResetSql;
    sql += settings;
  }
  return sql;
}

int bring_server_to(pool::Backend& backend, std::string_view settings, uint64_t client, std::string& prologue,
                    const SqlStatements* sql_statements) {
  int owed = 0;
  const bool in_state =
      !holds_other_sequences(backend.sequences_of, client) && backend.applied_state == settings;
  if (!in_state) {
    wire::encode_query(prologue,
                       server_prologue_sql(backend.applied_state, backend.sequences_of, settings, client));
    backend.applied_state = settings;
    owed = 1;
  }
  backend.sequences_of = client;
  // Nothing to compare for a client without statements on a server without any (the hot path).
  if (sql_statements != nullptr && (sql_statements->size() != 0 || !backend.sql_prepared.empty()))
    owed += bring_sql_statements_to(backend.sql_prepared, *sql_statements, prologue);
  return owed;
}

int bring_sql_statements_to(std::unordered_map<std::string, uint64_t>& held, const SqlStatements& client,
                            std::string& prologue) {
  const auto& wanted = client.all();
  int owed = 0;
  for (auto it = held.begin(); it != held.end();) {
    auto mine = wanted.find(it->first);
    if (mine != wanted.end() && mine->second.version == it->second) {
      ++it;
      continue;
    }
    wire::encode_query(prologue, "DEALLOCATE " + sqltext::quote_identifier(it->first));
    ++owed;
    it = held.erase(it);
  }
  for (const auto& [name, statement] : wanted) {
    if (held.contains(name)) continue;
    wire::encode_query(prologue, statement.sql);
    ++owed;
    held.emplace(name, statement.version);
  }
  return owed;
}

}  // namespace sw::session
