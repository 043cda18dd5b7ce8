// The deferred BEGIN, driven by tables of statement sequences.
#include "session/transaction_control.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::parser::StatementFacts;
using sw::parser::StatementKind;
using sw::session::TransactionControl;
using Answer = TransactionControl::Answer;

namespace {

struct Step {
  StatementKind kind;
  const char* sql;
  Answer answer;  // what the proxy does with it
  char status;    // the transaction status the client sees afterwards
};

struct Case {
  const char* name;
  std::vector<Step> steps;
  std::string begin;  // what take_begin() returns at the end
};

}  // namespace

TEST_CASE("transaction control: answers and status for statement sequences") {
  const std::vector<Case> cases = {
      {"BEGIN waits for a shard", {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'}}, "BEGIN"},
      {"settings ride with the BEGIN",
       {{StatementKind::Begin, "begin isolation level serializable", Answer::Begin, 'T'},
        {StatementKind::Set, "SET search_path = a", Answer::Set, 'T'},
        {StatementKind::SetLocal, "SET LOCAL statement_timeout = 5", Answer::Set, 'T'}},
       "begin isolation level serializable;SET search_path = a;SET LOCAL statement_timeout = 5"},
      {"COMMIT of a transaction that never ran",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Commit, "COMMIT", Answer::Commit, 'I'}},
       ""},
      {"ROLLBACK of a transaction that never ran",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Rollback, "ROLLBACK", Answer::Rollback, 'I'}},
       ""},
      {"a statement that needs a shard is forwarded; the BEGIN stays deferred",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Insert, "INSERT INTO orders VALUES (5)", Answer::Forward, 'T'}},
       "BEGIN"},
      {"outside a transaction nothing is answered but BEGIN",
       {{StatementKind::Set, "SET a = 1", Answer::Forward, 'I'},
        {StatementKind::Commit, "COMMIT", Answer::Forward, 'I'},
        {StatementKind::Rollback, "ROLLBACK", Answer::Forward, 'I'},
        {StatementKind::Savepoint, "SAVEPOINT a", Answer::Forward, 'I'}},
       ""},
      {"savepoints ride with the BEGIN",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Savepoint, "SAVEPOINT a", Answer::Savepoint, 'T'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO a", Answer::RollbackToSavepoint, 'T'},
        {StatementKind::ReleaseSavepoint, "RELEASE a", Answer::ReleaseSavepoint, 'T'}},
       "BEGIN;SAVEPOINT a;ROLLBACK TO a;RELEASE a"},
      {"RELEASE or ROLLBACK TO a name no SAVEPOINT made: 3B001, the transaction is aborted",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Savepoint, "SAVEPOINT a", Answer::Savepoint, 'T'},
        {StatementKind::ReleaseSavepoint, "RELEASE SAVEPOINT \"A\"", Answer::NoSuchSavepoint, 'E'},
        {StatementKind::Set, "SET x = 1", Answer::Forward, 'E'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO SAVEPOINT A;", Answer::RollbackToSavepoint, 'T'},
        {StatementKind::RollbackToSavepoint, "rollback to b", Answer::NoSuchSavepoint, 'E'}},
       "BEGIN;SAVEPOINT a;ROLLBACK TO SAVEPOINT A;"},
      {"RELEASE drops the savepoint and the later ones; ROLLBACK TO keeps it",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Savepoint, "SAVEPOINT a", Answer::Savepoint, 'T'},
        {StatementKind::Savepoint, "SAVEPOINT b", Answer::Savepoint, 'T'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO a", Answer::RollbackToSavepoint, 'T'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO a", Answer::RollbackToSavepoint, 'T'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO b", Answer::NoSuchSavepoint, 'E'},
        {StatementKind::RollbackToSavepoint, "ROLLBACK TO a", Answer::RollbackToSavepoint, 'T'},
        {StatementKind::ReleaseSavepoint, "RELEASE a", Answer::ReleaseSavepoint, 'T'},
        {StatementKind::ReleaseSavepoint, "RELEASE a", Answer::NoSuchSavepoint, 'E'}},
       "BEGIN;SAVEPOINT a;SAVEPOINT b;ROLLBACK TO a;ROLLBACK TO a;ROLLBACK TO a;RELEASE a"},
      {"outside a transaction nothing rides",
       {{StatementKind::Savepoint, "SAVEPOINT a", Answer::Forward, 'I'}},
       ""},
      {"a second BEGIN goes to a server (which warns)",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Begin, "BEGIN", Answer::Forward, 'T'}},
       "BEGIN"},
  };
  for (const Case& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    TransactionControl control;
    for (const Step& step : c.steps) {
      std::string sql = step.sql;
      CAPTURE(sql);
      CHECK(control.on_statement(step.kind, step.sql) == step.answer);
      CHECK(control.status() == step.status);
    }
    CHECK(control.take_begin(false) == c.begin);
    CHECK_FALSE(control.deferred());
  }
  TransactionControl control;
  control.on_statement(StatementKind::Begin, "BEGIN");
  CHECK(control.on_statement(StatementKind::ReleaseSavepoint, "RELEASE \"My \"\"sp\"\"\"") ==
        Answer::NoSuchSavepoint);
  CHECK(control.no_such_savepoint().sqlstate == "3B001");
  CHECK(control.no_such_savepoint().message == "savepoint \"My \"sp\"\" does not exist");
}

TEST_CASE("transaction control: a refused statement aborts the deferred transaction") {
  TransactionControl control;
  control.abort_if_deferred();  // no transaction: nothing to abort
  CHECK(control.status() == 'I');
  CHECK_FALSE(control.aborted());

  CHECK(control.on_statement(StatementKind::Begin, "BEGIN") == Answer::Begin);
  control.abort_if_deferred();
  CHECK(control.aborted());
  CHECK(control.status() == 'E');
  // Settings no longer ride along; COMMIT ends it as a rollback.
  CHECK(control.on_statement(StatementKind::Set, "SET a = 1") == Answer::Forward);
  CHECK(control.on_statement(StatementKind::Commit, "COMMIT") == Answer::Rollback);
  CHECK(control.status() == 'I');
  CHECK_FALSE(control.aborted());
  CHECK(std::string(TransactionControl::tag(Answer::Rollback)) == "ROLLBACK");
}

TEST_CASE("transaction control: a server carries the transaction once it has a shard") {
  TransactionControl control;
  control.on_statement(StatementKind::Begin, "BEGIN");
  CHECK(control.take_begin(false) == "BEGIN");
  control.on_server_status('T');
  CHECK(control.status() == 'T');
  // COMMIT now goes to the server.
  CHECK(control.on_statement(StatementKind::Commit, "COMMIT") == Answer::Forward);
  control.on_server_status('E');
  control.on_server_dropped();
  CHECK(control.status() == 'I');
}

TEST_CASE("transaction control: a fence retry defers the BEGIN again") {
  TransactionControl control;
  control.restore_begin("BEGIN;SET LOCAL a = 1");
  CHECK(control.deferred());
  CHECK(control.status() == 'T');
  control.on_server_dropped();  // the BEGIN is still the proxy's: the client stays in it
  CHECK(control.status() == 'T');
  CHECK(control.take_begin(false) == "BEGIN;SET LOCAL a = 1");
  control.restore_begin("");
  CHECK(control.status() == 'I');
}

namespace {

StatementFacts statement(StatementKind kind, std::string text, bool names_table = false) {
  StatementFacts facts;
  facts.kind = kind;
  facts.text = std::move(text);
  if (names_table) facts.tables.push_back({});
  return facts;
}

}  // namespace

TEST_CASE("transaction control: riders on the server keep the transaction movable") {
  struct Case {
    const char* name;
    std::vector<StatementFacts> sent;  // after the BEGIN went to the server
    bool movable;
    std::string moved;  // what runs again on the next shard
  };
  const std::vector<Case> cases = {
      {"SELECT now()", {statement(StatementKind::Select, "SELECT now()")}, true, "BEGIN;SELECT now()"},
      {"set_config and a savepoint",
       {statement(StatementKind::Select, "SELECT set_config('app.tenant', '5', true)"),
        statement(StatementKind::Savepoint, "SAVEPOINT a"),
        statement(StatementKind::SetLocal, "SET LOCAL x = 1")},
       true,
       "BEGIN;SELECT set_config('app.tenant', '5', true);SAVEPOINT a;SET LOCAL x = 1"},
      {"a SELECT that names a table pins it",
       {statement(StatementKind::Select, "SELECT now()"),
        statement(StatementKind::Select, "SELECT * FROM t", true)},
       false,
       ""},
      {"a write pins it", {statement(StatementKind::Insert, "INSERT INTO t VALUES (1)", true)}, false, ""},
      {"DDL pins it", {statement(StatementKind::Ddl, "CREATE TEMP TABLE x (a int)", true)}, false, ""},
      {"COMMIT pins it", {statement(StatementKind::Commit, "COMMIT")}, false, ""},
  };
  for (const Case& c : cases) {
    std::string name = c.name;
    CAPTURE(name);
    TransactionControl control;
    control.on_statement(StatementKind::Begin, "BEGIN");
    CHECK(control.take_begin(/*may_move=*/true) == "BEGIN");
    for (const StatementFacts& facts : c.sent) control.on_statement_sent(&facts);
    REQUIRE(control.movable() == c.movable);
    if (!c.movable) continue;
    control.start_move();
    CHECK(control.moving());
    CHECK_FALSE(control.movable());
    CHECK(control.status() == 'T');
    control.finish_move();
    CHECK_FALSE(control.moving());
    CHECK(control.deferred());
    CHECK(control.status() == 'T');
    CHECK(control.take_begin(true) == c.moved);
  }
}

TEST_CASE("transaction control: when a transaction cannot move") {
  StatementFacts now = statement(StatementKind::Select, "SELECT now()");
  SUBCASE("no deferred BEGIN: an autocommit statement") {
    TransactionControl control;
    CHECK(control.take_begin(true).empty());
    control.on_statement_sent(&now);
    CHECK_FALSE(control.movable());
  }
  SUBCASE("session pooling: the server stays with the client") {
    TransactionControl control;
    control.on_statement(StatementKind::Begin, "BEGIN");
    control.take_begin(/*may_move=*/false);
    control.on_statement_sent(&now);
    CHECK_FALSE(control.movable());
  }
  SUBCASE("an extended-protocol message, an error or the end of the transaction") {
    for (int how = 0; how < 2; ++how) {
      TransactionControl control;
      control.on_statement(StatementKind::Begin, "BEGIN");
      control.take_begin(true);
      control.on_statement_sent(&now);
      REQUIRE(control.movable());
      if (how == 0)
        control.on_statement_sent(nullptr);
      else
        control.pin();
      CHECK_FALSE(control.movable());
    }
  }
}

// A setting the server reports with ParameterStatus (client_encoding, TimeZone, ...) is run by a
// server, not answered with the BEGIN: the client must get the ParameterStatus that server sends.
TEST_CASE("transaction control: a SET of a reported setting is no rider") {
  TransactionControl control;
  CHECK(control.on_statement(StatementKind::Begin, "BEGIN") == Answer::Begin);
  CHECK(control.on_statement(StatementKind::Set, "SET work_mem = '1MB'", "work_mem") == Answer::Set);
  for (const char* reported :
       {"client_encoding", "timezone", "datestyle", "intervalstyle", "application_name",
        "standard_conforming_strings", "session_characteristics"}) {
    CAPTURE(reported);
    CHECK(control.on_statement(StatementKind::Set, "SET x = y", reported) == Answer::Forward);
    CHECK(control.on_statement(StatementKind::SetLocal, "SET LOCAL x = y", reported) == Answer::Forward);
  }
  CHECK(control.take_begin(false) == "BEGIN;SET work_mem = '1MB'");
  CHECK(sw::session::reports_parameter_status("timezone"));
  CHECK_FALSE(sw::session::reports_parameter_status("search_path"));
}
