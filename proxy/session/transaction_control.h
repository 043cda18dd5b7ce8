// The deferred BEGIN and the transaction status the client sees. BEGIN is answered by the proxy
// and sent to a server only with the first statement that picks a shard; a SET or SET LOCAL in
// between rides along with it; COMMIT or ROLLBACK of a transaction that never picked a shard is
// answered by the proxy too. Pure: no I/O.
#pragma once

#include <string>
#include <string_view>

#include "parser/analyze.h"

namespace sw::session {

class TransactionControl {
 public:
  // What the proxy does with a statement that arrives while no server is attached.
  enum class Answer {
    Forward,   // not transaction control the proxy can answer: a server must run it
    Begin,     // answered "BEGIN"; the transaction waits for a shard
    Set,       // answered "SET"; the setting runs with the BEGIN
    Commit,    // answered "COMMIT": the transaction never ran anywhere
    Rollback,  // answered "ROLLBACK" (also for a COMMIT of an aborted transaction)
  };

  // Classifies one statement (kind and text) and applies its effect.
  Answer on_statement(parser::StatementKind kind, std::string_view sql);
  static const char* tag(Answer answer);

  // A request was refused before the transaction had a shard: it is aborted, as a server would.
  void abort_if_deferred();

  // A server is attached for the transaction: returns the SQL that starts it there ("" when no
  // BEGIN is deferred) and forgets it.
  std::string take_begin();
  // A fence retry runs the first request again: `begin` is deferred once more.
  void restore_begin(std::string begin);

  // The server's ReadyForQuery reports its status; the client sees it from now on.
  void on_server_status(char status) { status_ = status; }
  // The server was dropped mid-transaction: the client's transaction is gone with it, unless
  // the proxy still holds its BEGIN.
  void on_server_dropped() {
    if (begin_.empty()) status_ = 'I';
  }

  bool deferred() const { return !begin_.empty(); }
  bool aborted() const { return aborted_; }
  char status() const { return status_; }  // 'I', 'T' or 'E', as the client sees it

 private:
  std::string begin_;     // the BEGIN (and settings) answered by the proxy, not yet sent
  bool aborted_ = false;  // a statement failed before the transaction had a shard
  char status_ = 'I';
};

}  // namespace sw::session
