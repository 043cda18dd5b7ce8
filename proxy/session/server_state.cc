#include "session/server_state.h"

#include "pool/backend.h"
#include "session/session_state.h"
#include "wire/messages.h"

namespace sw::session {

std::string server_prologue_sql(const std::string& applied_settings, uint64_t sequences_of,
                                const ServerState& state) {
  std::string sql;
  if (sequences_of != 0 && sequences_of != state.client) sql = "DISCARD SEQUENCES;";
  if (applied_settings != state.settings) {
    sql += SessionState::kResetSql;
    sql += state.settings;
  }
  return sql;
}

int bring_server_to(pool::Backend& backend, const ServerState& state, std::string& prologue) {
  const std::string sql = server_prologue_sql(backend.applied_state, backend.sequences_of, state);
  backend.applied_state = state.settings;
  backend.sequences_of = state.client;
  if (sql.empty()) return 0;
  wire::encode_query(prologue, sql);
  return 1;
}

}  // namespace sw::session
