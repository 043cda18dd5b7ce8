#include "session/server_state.h"

#include "pool/backend.h"
#include "session/session_state.h"
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

int bring_server_to(pool::Backend& backend, std::string_view settings, uint64_t client,
                    std::string& prologue) {
  const bool in_state =
      !holds_other_sequences(backend.sequences_of, client) && backend.applied_state == settings;
  if (in_state) {
    backend.sequences_of = client;
    return 0;
  }
  wire::encode_query(prologue,
                     server_prologue_sql(backend.applied_state, backend.sequences_of, settings, client));
  backend.applied_state = settings;
  backend.sequences_of = client;
  return 1;
}

}  // namespace sw::session
