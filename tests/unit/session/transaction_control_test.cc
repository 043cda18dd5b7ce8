// The deferred BEGIN, driven by tables of statement sequences.
#include "session/transaction_control.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

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
        {StatementKind::Select, "SELECT 1", Answer::Forward, 'T'}},
       "BEGIN"},
      {"outside a transaction nothing is answered but BEGIN",
       {{StatementKind::Set, "SET a = 1", Answer::Forward, 'I'},
        {StatementKind::Commit, "COMMIT", Answer::Forward, 'I'},
        {StatementKind::Rollback, "ROLLBACK", Answer::Forward, 'I'},
        {StatementKind::Savepoint, "SAVEPOINT a", Answer::Forward, 'I'}},
       ""},
      {"a second BEGIN goes to a server (which warns)",
       {{StatementKind::Begin, "BEGIN", Answer::Begin, 'T'},
        {StatementKind::Begin, "BEGIN", Answer::Forward, 'T'}},
       "BEGIN"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TransactionControl control;
    for (const Step& step : c.steps) {
      CAPTURE(step.sql);
      CHECK(control.on_statement(step.kind, step.sql) == step.answer);
      CHECK(control.status() == step.status);
    }
    CHECK(control.take_begin() == c.begin);
    CHECK_FALSE(control.deferred());
  }
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
  CHECK(control.take_begin() == "BEGIN");
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
  CHECK(control.take_begin() == "BEGIN;SET LOCAL a = 1");
  control.restore_begin("");
  CHECK(control.status() == 'I');
}
