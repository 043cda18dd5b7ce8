#include "session/session_state.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::parser::StatementFacts;
using sw::parser::StatementKind;
using sw::session::SessionState;

namespace {
StatementFacts statement(StatementKind kind, std::string name, std::string text) {
  StatementFacts s;
  s.kind = kind;
  s.set_name = std::move(name);
  s.text = std::move(text);
  return s;
}
}  // namespace

TEST_CASE("startup parameters become set_config calls: options first, then the other parameters") {
  SessionState state;
  state.set_startup({{"user", "app"},
                     {"database", "app"},
                     {"application_name", "it's"},
                     {"options", "-c search_path=a,b --statement-timeout=5s -cwork_mem=2MB"}});
  CHECK(state.signature() ==
        "SELECT pg_catalog.set_config('search_path', 'a,b', false), "
        "pg_catalog.set_config('statement_timeout', '5s', false), "
        "pg_catalog.set_config('work_mem', '2MB', false), "
        "pg_catalog.set_config('application_name', 'it''s', false);");
}

TEST_CASE("options: a backslash takes the next character, spaces included") {
  SessionState state;
  state.set_startup({{"options", "-c application_name=a\\ b\\\\c  -c  DateStyle=ISO,\\ MDY"}});
  CHECK(state.signature() ==
        "SELECT pg_catalog.set_config('application_name', E'a b\\\\c', false), "
        "pg_catalog.set_config('datestyle', 'ISO, MDY', false);");
}

TEST_CASE("SET counts once its transaction commits") {
  SessionState state;
  state.on_statement(statement(StatementKind::Set, "search_path", "SET search_path = x"));
  CHECK(state.signature().empty());
  state.end_transaction(true);
  CHECK(state.signature() == "SET search_path = x;");

  state.on_statement(statement(StatementKind::Set, "work_mem", "SET work_mem = '1MB'"));
  state.end_transaction(false);  // rolled back
  CHECK(state.signature() == "SET search_path = x;");
}

TEST_CASE("later SET replaces earlier, RESET and RESET ALL remove") {
  SessionState state;
  state.set_startup({{"application_name", "psql"}});
  state.on_statement(statement(StatementKind::Set, "a", "SET a = 1"));
  state.on_statement(statement(StatementKind::Set, "b", "SET b = 2"));
  state.on_statement(statement(StatementKind::Set, "a", "SET a = 3"));
  state.end_transaction(true);
  const std::string startup = "SELECT pg_catalog.set_config('application_name', 'psql', false);";
  CHECK(state.signature() == startup + "SET b = 2;SET a = 3;");
  state.on_statement(statement(StatementKind::Reset, "b", "RESET b"));
  state.end_transaction(true);
  CHECK(state.signature() == startup + "SET a = 3;");
  state.on_statement(statement(StatementKind::ResetAll, "", "RESET ALL"));
  state.end_transaction(true);
  CHECK(state.signature() == startup);  // startup values are the defaults
}

TEST_CASE("SET LOCAL is not session state") {
  SessionState state;
  state.on_statement(statement(StatementKind::SetLocal, "a", "SET LOCAL a = 1"));
  state.end_transaction(true);
  CHECK(state.signature().empty());
}

TEST_CASE("protected settings") {
  CHECK(SessionState::is_protected("session_replication_role"));
  CHECK(SessionState::is_protected("Session_Replication_Role"));
  CHECK(SessionState::is_protected("shardwire.anything"));
  CHECK_FALSE(SessionState::is_protected("search_path"));
}

TEST_CASE("quote_literal") {
  CHECK(sw::session::quote_literal("a'b") == "'a''b'");
  CHECK(sw::session::quote_literal("a\\b") == "E'a\\\\b'");
}

TEST_CASE("restore_startup: the startup values a RESET took away, unless set again after it") {
  SessionState state;
  state.set_startup({{"application_name", "x"}, {"options", "-c DateStyle=Postgres,\\ MDY"}});
  using K = StatementKind;
  const std::string both =
      "SELECT pg_catalog.set_config('datestyle', 'Postgres, MDY', false), "
      "pg_catalog.set_config('application_name', 'x', false)";
  CHECK(state.restore_startup({statement(K::ResetAll, "", "RESET ALL")}) == both);
  CHECK(state.restore_startup({statement(K::DiscardAll, "", "DISCARD ALL")}) == both);
  CHECK(state.restore_startup({statement(K::Reset, "DateStyle", "RESET DateStyle")}) ==
        "SELECT pg_catalog.set_config('datestyle', 'Postgres, MDY', false)");
  CHECK(state.restore_startup({statement(K::Reset, "work_mem", "RESET work_mem")}).empty());
  CHECK(state.restore_startup({statement(K::ResetAll, "", "RESET ALL"),
                               statement(K::Set, "application_name", "SET application_name = y")}) ==
        "SELECT pg_catalog.set_config('datestyle', 'Postgres, MDY', false)");
  CHECK(state.restore_startup({statement(K::Select, "", "SELECT 1")}).empty());

  SessionState plain;  // a client without startup settings: nothing to restore, ever
  CHECK(plain.restore_startup({statement(K::ResetAll, "", "RESET ALL")}).empty());
}

TEST_CASE("only Queries that change settings or SQL prepared statements are tracked to their end") {
  auto tracked = [](const char* sql) {
    auto facts = sw::parser::analyze(sql);
    REQUIRE(facts);
    return sw::session::changes_tracked_state(**facts);
  };
  CHECK_FALSE(tracked("SELECT abalance FROM pgbench_accounts WHERE aid = 17"));
  CHECK_FALSE(tracked("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 17"));
  CHECK_FALSE(tracked("BEGIN; SELECT 1; COMMIT"));
  CHECK_FALSE(tracked("SET LOCAL work_mem = '2MB'"));
  CHECK(tracked("SET work_mem = '2MB'"));
  CHECK(tracked("SELECT 1; RESET work_mem"));
  CHECK(tracked("RESET ALL"));
  CHECK(tracked("DISCARD ALL"));
  CHECK(tracked("DISCARD PLANS"));
  CHECK(tracked("PREPARE p(int) AS SELECT $1"));
  CHECK(tracked("DEALLOCATE p"));
  CHECK(tracked("DEALLOCATE ALL"));
}

namespace {

// Runs `script` as one client's statements on a real server would: each statement outside
// BEGIN ... COMMIT/ROLLBACK is its own transaction. Facts come from the real parser.
std::string signature_after(const std::vector<std::string>& script) {
  SessionState state;
  bool in_block = false;
  for (const std::string& sql : script) {
    auto facts = sw::parser::analyze(sql);
    REQUIRE(facts);
    for (const StatementFacts& s : (*facts)->statements) {
      switch (s.kind) {
        case StatementKind::Begin: in_block = true; break;
        case StatementKind::Commit:
        case StatementKind::Rollback:
          state.end_transaction(s.kind == StatementKind::Commit);
          in_block = false;
          break;
        default:
          state.on_statement(s);
          if (!in_block) state.end_transaction(true);
      }
    }
  }
  return state.signature();
}

struct Case {
  const char* what;
  std::vector<std::string> script;
  std::string signature;
};

}  // namespace

TEST_CASE("transaction and savepoint rules for SET, as PostgreSQL applies them") {
  const std::vector<Case> cases = {
      {"SET in a committed transaction", {"BEGIN", "SET a.x = 1", "COMMIT"}, "SET a.x = 1;"},
      {"SET in a rolled back transaction", {"BEGIN", "SET a.x = 1", "ROLLBACK"}, ""},
      {"ROLLBACK TO undoes the SETs after the savepoint",
       {"BEGIN", "SET a.x = 1", "SAVEPOINT s", "SET a.x = 2", "SET a.y = 3", "ROLLBACK TO SAVEPOINT s",
        "COMMIT"},
       "SET a.x = 1;"},
      {"ROLLBACK TO keeps the savepoint: a second ROLLBACK TO it",
       {"BEGIN", "SAVEPOINT s", "SET a.x = 1", "ROLLBACK TO s", "SET a.x = 2", "ROLLBACK TO s", "COMMIT"},
       ""},
      {"RELEASE keeps the inner SETs",
       {"BEGIN", "SAVEPOINT s", "SET a.x = 1", "RELEASE SAVEPOINT s", "COMMIT"},
       "SET a.x = 1;"},
      {"RELEASE then ROLLBACK of the transaction",
       {"BEGIN", "SAVEPOINT s", "SET a.x = 1", "RELEASE s", "ROLLBACK"},
       ""},
      {"nested: ROLLBACK TO the outer undoes the inner too",
       {"BEGIN", "SAVEPOINT o", "SET a.x = 1", "SAVEPOINT i", "SET a.y = 2", "RELEASE i", "ROLLBACK TO o",
        "COMMIT"},
       ""},
      {"nested: ROLLBACK TO the inner keeps the outer's",
       {"BEGIN", "SAVEPOINT o", "SET a.x = 1", "SAVEPOINT i", "SET a.y = 2", "ROLLBACK TO i", "COMMIT"},
       "SET a.x = 1;"},
      {"the innermost savepoint of a name is meant",
       {"BEGIN", "SAVEPOINT s", "SET a.x = 1", "SAVEPOINT s", "SET a.x = 2", "ROLLBACK TO s", "COMMIT"},
       "SET a.x = 1;"},
      {"RESET inside a rolled back savepoint comes back",
       {"SET a.x = 1", "BEGIN", "SAVEPOINT s", "RESET a.x", "ROLLBACK TO s", "COMMIT"},
       "SET a.x = 1;"},
      {"SET LOCAL ends with its transaction", {"BEGIN", "SET LOCAL a.x = 1", "COMMIT"}, ""},
      {"SET LOCAL does not undo a SET",
       {"BEGIN", "SET a.x = 1", "SET LOCAL a.x = 2", "COMMIT"},
       "SET a.x = 1;"},
      {"a savepoint name in any letter case",
       {"BEGIN", "SAVEPOINT Sp", "SET a.x = 1", "ROLLBACK TO sp", "COMMIT"},
       ""},
      {"set_config(..., false) with literals is a SET",
       {"SELECT set_config('Search_Path', 'a, b', false)"},
       "SELECT pg_catalog.set_config('search_path', 'a, b', false);"},
      {"set_config(..., true) is a SET LOCAL", {"SELECT set_config('search_path', 'a', true)"}, ""},
      {"set_config with is_local spelled as text",
       {"SELECT set_config('a.x', 'v', 'off')"},
       "SELECT pg_catalog.set_config('a.x', 'v', false);"},
      {"set_config and SET of one name: the later wins",
       {"SET search_path = x", "SELECT set_config('search_path', 'y', false)"},
       "SELECT pg_catalog.set_config('search_path', 'y', false);"},
      {"set_config in a rolled back savepoint",
       {"BEGIN", "SAVEPOINT s", "SELECT set_config('a.x', 'v', false)", "ROLLBACK TO s", "COMMIT"},
       ""},
      {"set_config with a computed value is not recorded",
       {"SELECT set_config('a.x', current_user, false)"},
       ""},
      {"a DateStyle SET keeps the part it does not name: each is replayed",
       {"SET datestyle TO iso", "SET datestyle TO ymd"},
       "SET datestyle TO iso;SET datestyle TO ymd;"},
      {"RESET datestyle forgets them all",
       {"SET datestyle TO iso", "SET datestyle TO ymd", "RESET datestyle"},
       ""},
      {"SET ROLE is replayed", {"SET ROLE low"}, "SET ROLE low;"},
      {"set_config('role', ..., false) is replayed",
       {"SELECT set_config('role', 'low', false)"},
       "SELECT pg_catalog.set_config('role', 'low', false);"},
      {"RESET ALL leaves the role", {"SET ROLE low", "SET a.x = 1", "RESET ALL"}, "SET ROLE low;"},
      {"DISCARD ALL resets the role", {"SET ROLE low", "DISCARD ALL"}, ""},
      {"RESET ROLE", {"SET ROLE low", "RESET ROLE"}, ""},
      {"SET SESSION AUTHORIZATION ends SET ROLE",
       {"SET ROLE low", "SET SESSION AUTHORIZATION other"},
       "SET SESSION AUTHORIZATION other;"},
      {"RESET SESSION AUTHORIZATION ends SET ROLE", {"SET ROLE low", "RESET SESSION AUTHORIZATION"}, ""},
      {"SET ROLE after SET SESSION AUTHORIZATION is kept",
       {"SET SESSION AUTHORIZATION other", "SET ROLE low"},
       "SET SESSION AUTHORIZATION other;SET ROLE low;"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(signature_after(c.script) == c.signature);
  }
}

TEST_CASE("set_config_effect: what the model can vouch for") {
  using sw::session::set_config_effect;
  using sw::session::SetConfigEffect;
  auto effect = [](const std::string& sql) {
    auto facts = sw::parser::analyze(sql);
    REQUIRE(facts);
    return set_config_effect((*facts)->statements.at(0).set_config_calls.at(0));
  };
  CHECK(effect("SELECT set_config('a.b', 'v', false)") == SetConfigEffect::Session);
  CHECK(effect("SELECT set_config('a.b', NULL, false)") == SetConfigEffect::Session);
  CHECK(effect("SELECT set_config('a.b', 'v', 'no')") == SetConfigEffect::Session);
  CHECK(effect("SELECT set_config('a.b', 'v', true)") == SetConfigEffect::Local);
  CHECK(effect("SELECT set_config('a.b', 'v', 'on')") == SetConfigEffect::Local);
  CHECK(effect("SELECT set_config('a.b', $1, true)") == SetConfigEffect::Local);
  CHECK(effect("SELECT set_config('a.b', 'v', $1)") == SetConfigEffect::Unknown);
  CHECK(effect("SELECT set_config('a.b', $1, false)") == SetConfigEffect::Unknown);
  CHECK(effect("SELECT set_config('a.b', 'x' || 'y', false)") == SetConfigEffect::Unknown);
  CHECK(effect("SELECT set_config($1, 'v', false)") == SetConfigEffect::Unknown);
  CHECK(effect("SELECT set_config('a.b', 'v', 'maybe')") == SetConfigEffect::Unknown);
  CHECK(effect("SELECT set_config('a.b', 'v')") == SetConfigEffect::Unknown);
}
