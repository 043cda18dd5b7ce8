#include "session/transaction_control.h"

namespace sw::session {

using parser::StatementKind;

TransactionControl::Answer TransactionControl::on_statement(StatementKind kind, std::string_view sql) {
  bool in_deferred = deferred();
  if (kind == StatementKind::Begin && !in_deferred && status_ == 'I') {
    begin_ = std::string(sql);
    status_ = 'T';
    return Answer::Begin;
  }
  if ((kind == StatementKind::Set || kind == StatementKind::SetLocal) && in_deferred && !aborted_) {
    // A setting picks no shard: it runs with the BEGIN, on the shard the transaction gets.
    begin_ += ";";
    begin_ += sql;
    return Answer::Set;
  }
  if ((kind == StatementKind::Commit || kind == StatementKind::Rollback) && in_deferred) {
    Answer answer = aborted_ || kind == StatementKind::Rollback ? Answer::Rollback : Answer::Commit;
    begin_.clear();
    aborted_ = false;
    status_ = 'I';
    return answer;
  }
  return Answer::Forward;
}

const char* TransactionControl::tag(Answer answer) {
  switch (answer) {
    case Answer::Begin: return "BEGIN";
    case Answer::Set: return "SET";
    case Answer::Commit: return "COMMIT";
    case Answer::Rollback: return "ROLLBACK";
    case Answer::Forward: break;
  }
  return "";
}

void TransactionControl::abort_if_deferred() {
  if (!deferred()) return;
  aborted_ = true;
  status_ = 'E';
}

std::string TransactionControl::take_begin() {
  std::string begin = std::move(begin_);
  begin_.clear();
  return begin;
}

void TransactionControl::restore_begin(std::string begin) {
  begin_ = std::move(begin);
  status_ = begin_.empty() ? 'I' : 'T';
}

}  // namespace sw::session
