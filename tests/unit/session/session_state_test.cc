#include "session/session_state.h"

#include <doctest/doctest.h>

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
