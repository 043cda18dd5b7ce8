// The deferred BEGIN and the transaction status the client sees. BEGIN is answered by the proxy
// and sent to a server only with the first statement that picks a shard. Statements that pick
// no shard ride along with the BEGIN, to run first on the shard the transaction gets:
//  * with no server yet, SET, SET LOCAL and savepoints are answered by the proxy (not a SET of a
//    setting the server reports with ParameterStatus: that one runs like the next item);
//  * a statement that needs a server but names no table (SELECT now(),
//    SELECT set_config('app.tenant', '5', true)) runs in the transaction on the default shard;
//    while only such riders ran there, the transaction stays movable: when a later statement
//    needs another shard, the default shard's server is rolled back and the BEGIN and the
//    riders run again, answers swallowed, on the shard that statement needs.
// COMMIT or ROLLBACK of a transaction that never picked a shard is answered by the proxy too.
// Pure: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "parser/analyze.h"

namespace sw::session {

class TransactionControl {
 public:
  // What the proxy does with a statement that arrives while no server is attached.
  enum class Answer {
    Forward,              // not transaction control the proxy can answer: a server must run it
    Begin,                // answered "BEGIN"; the transaction waits for a shard
    Set,                  // answered "SET"; the setting runs with the BEGIN
    Savepoint,            // answered "SAVEPOINT"; runs with the BEGIN
    ReleaseSavepoint,     // answered "RELEASE"; runs with the BEGIN
    RollbackToSavepoint,  // answered "ROLLBACK"; runs with the BEGIN
    Commit,               // answered "COMMIT": the transaction never ran anywhere
    Rollback,             // answered "ROLLBACK" (also for a COMMIT of an aborted transaction)
    NoSuchSavepoint,      // RELEASE / ROLLBACK TO a name no deferred SAVEPOINT made: 3B001
  };

  // Classifies one statement (kind, text and, for a SET, the setting's lower-cased name) and
  // applies its effect. A SET of a setting the server reports (reports_parameter_status) is no
  // rider: a server runs it, so the client gets the ParameterStatus that server sends.
  Answer on_statement(parser::StatementKind kind, std::string_view sql, std::string_view set_name = {});
  static const char* tag(Answer answer);
  // The error of Answer::NoSuchSavepoint, as PostgreSQL words it.
  Status no_such_savepoint() const;

  // A request was refused before the transaction had a shard: it is aborted, as a server would.
  void abort_if_deferred();

  // A server is attached for the transaction: returns the SQL that starts it there ("" when no
  // BEGIN is deferred) and forgets it. `may_move`: the transaction may still move to another
  // shard while only riders run on this server.
  std::string take_begin(bool may_move);
  // A fence retry runs the first request again: `begin` is deferred once more.
  void restore_begin(std::string begin);

  // A statement sent to the transaction's server (null: anything but a one-statement Query): a
  // rider keeps the transaction movable, anything else pins it to the server's shard.
  void on_statement_sent(const parser::StatementFacts* statement);
  // The server answered with an error, or the transaction ended: it stays where it is.
  void pin() { movable_ = false; }
  bool movable() const { return movable_; }
  // A statement needs another shard: the server is rolled back and given back (its answers are
  // not the client's). Once it is gone, finish_move() defers the BEGIN and the riders again.
  void start_move();
  void finish_move();
  bool moving() const { return moving_; }

  // The server's ReadyForQuery reports its status; the client sees it from now on.
  void on_server_status(char status) { status_ = status; }
  // The server was dropped mid-transaction: the client's transaction is gone with it, unless
  // the proxy still holds its BEGIN.
  void on_server_dropped() {
    if (begin_.empty()) status_ = 'I';
  }

  bool deferred() const { return !begin_.empty(); }
  // The deferred BEGIN and riders, left deferred (a runner starts the transaction with them on
  // every shard before take_begin, docs/architecture.md §5.10).
  const std::string& deferred_begin() const { return begin_; }
  bool aborted() const { return aborted_; }
  char status() const { return status_; }  // 'I', 'T' or 'E', as the client sees it

 private:
  Answer savepoint_rider(Answer rider, std::string_view sql);

  std::string begin_;  // the BEGIN (and riders) answered by the proxy, not yet sent
  // The deferred transaction's savepoints, oldest first (with the riders a movable server ran).
  std::vector<std::string> savepoints_;
  std::string missing_;   // the name of the last NoSuchSavepoint
  std::string started_;   // movable: the BEGIN and riders the server ran, to run elsewhere
  bool aborted_ = false;  // a statement failed before the transaction had a shard
  bool movable_ = false;
  bool moving_ = false;
  char status_ = 'I';
};

// True for a statement that picks no shard and may run first on whichever shard the transaction
// gets: SET, SET LOCAL, savepoints, and a SELECT that names no table.
bool rides_with_begin(const parser::StatementFacts& statement);

// The savepoint a SAVEPOINT, RELEASE or ROLLBACK TO statement names: its last word, folded to
// lower case unless quoted.
std::string savepoint_name(std::string_view sql);

// True for a setting (lower-cased name, as StatementFacts::set_name) whose every change a server
// reports to its client with ParameterStatus (GUC_REPORT; "session_characteristics" sets
// default_transaction_read_only).
bool reports_parameter_status(std::string_view set_name);

}  // namespace sw::session
