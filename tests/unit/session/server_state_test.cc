#include "session/server_state.h"

#include <doctest/doctest.h>

#include <string>

#include "session/session_state.h"

namespace {

struct Case {
  const char* what;
  const char* applied;    // the server's applied settings
  uint64_t sequences_of;  // whose sequence values it may hold
  const char* settings;   // the client's settings
  uint64_t client;        // the client
  std::string sql;        // what it runs first
};

const std::string kReset(sw::session::SessionState::kResetSql);

}  // namespace

TEST_CASE("server_prologue_sql: another client's sequences are discarded, the client's own kept") {
  const Case cases[] = {
      {"a new server, no settings", "", 0, "", 5, ""},
      {"the client's own server back", "", 5, "", 5, ""},
      {"another client's server", "", 4, "", 5, "DISCARD SEQUENCES;"},
      {"another client's server, other settings", "", 4, "SET a = '1';", 5,
       "DISCARD SEQUENCES;" + kReset + "SET a = '1';"},
      {"the client's own server, settings changed since", "SET a = '1';", 5, "SET a = '2';", 5,
       kReset + "SET a = '2';"},
      {"a new server, client settings", "", 0, "SET a = '1';", 5, kReset + "SET a = '1';"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(sw::session::server_prologue_sql(c.applied, c.sequences_of, c.settings, c.client) == c.sql);
  }
}
