#include "session/server_state.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "session/session_state.h"
#include "session/sql_prepared.h"

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

namespace {

// The SQL of each Query in `messages` (each 'Q', length, text, NUL), in order.
std::vector<std::string> queries_in(const std::string& messages) {
  std::vector<std::string> out;
  for (size_t at = 0; at + 5 <= messages.size();) {
    const auto byte = [&](size_t i) {
      return static_cast<uint32_t>(static_cast<unsigned char>(messages[i]));
    };
    const uint32_t length = byte(at + 1) << 24 | byte(at + 2) << 16 | byte(at + 3) << 8 | byte(at + 4);
    out.push_back(messages.substr(at + 5, length - 5));  // without the NUL
    at += 1 + length;
  }
  return out;
}

sw::parser::SqlPrepare prepare_named(const std::string& name) {
  sw::parser::SqlPrepare prepare;
  prepare.name = name;
  prepare.query = "SELECT 1";
  return prepare;
}

}  // namespace

TEST_CASE("bring_sql_statements_to: the server ends holding exactly the client's statements") {
  using Held = std::unordered_map<std::string, uint64_t>;
  sw::session::SqlStatements client;
  const uint64_t a = client.add(prepare_named("a"), "PREPARE a AS SELECT 1;");
  const uint64_t b = client.add(prepare_named("B c"), "PREPARE \"B c\" AS SELECT 1;");
  struct HeldCase {
    const char* what;
    Held held;
    std::vector<std::string> sql;
  };
  const HeldCase cases[] = {
      {"a server holding none", {}, {"PREPARE \"B c\" AS SELECT 1;", "PREPARE a AS SELECT 1;"}},
      {"the client's own server", {{"a", a}, {"B c", b}}, {}},
      {"another client's statements, one under the same name",
       {{"a", a + 100}, {"x", 7}},
       {"DEALLOCATE \"x\"", "DEALLOCATE \"a\"", "PREPARE \"B c\" AS SELECT 1;", "PREPARE a AS SELECT 1;"}},
  };
  for (const HeldCase& c : cases) {
    CAPTURE(c.what);
    Held held = c.held;
    std::string prologue;
    const int owed = sw::session::bring_sql_statements_to(held, client, prologue);
    std::vector<std::string> sql = queries_in(prologue);
    // DEALLOCATEs come first, in the held map's order; compare them as a set.
    auto first_prepare =
        std::find_if(sql.begin(), sql.end(), [](const std::string& q) { return q.rfind("PREPARE", 0) == 0; });
    std::sort(sql.begin(), first_prepare);
    std::vector<std::string> expected = c.sql;
    auto expected_prepare = std::find_if(expected.begin(), expected.end(),
                                         [](const std::string& q) { return q.rfind("PREPARE", 0) == 0; });
    std::sort(expected.begin(), expected_prepare);
    CHECK(sql == expected);
    CHECK(owed == static_cast<int>(expected.size()));
    CHECK(held == Held{{"a", a}, {"B c", b}});
  }
  sw::session::SqlStatements none;
  Held held{{"a", a}};
  std::string prologue;
  CHECK(sw::session::bring_sql_statements_to(held, none, prologue) == 1);
  CHECK(queries_in(prologue) == std::vector<std::string>{"DEALLOCATE \"a\""});
  CHECK(held.empty());
}
