#include "session/transaction_control.h"

namespace sw::session {

using parser::StatementKind;

bool rides_with_begin(const parser::StatementFacts& statement) {
  switch (statement.kind) {
    case StatementKind::Set:
    case StatementKind::SetLocal:
    case StatementKind::Savepoint:
    case StatementKind::ReleaseSavepoint:
    case StatementKind::RollbackToSavepoint: return true;
    case StatementKind::Select: return statement.tables.empty();
    default: return false;
  }
}

bool reports_parameter_status(std::string_view set_name) {
  static constexpr std::string_view kReported[] = {"application_name",
                                                   "client_encoding",
                                                   "datestyle",
                                                   "default_transaction_read_only",
                                                   "in_hot_standby",
                                                   "integer_datetimes",
                                                   "intervalstyle",
                                                   "is_superuser",
                                                   "server_encoding",
                                                   "server_version",
                                                   "timezone",
                                                   "session_authorization",
                                                   "standard_conforming_strings",
                                                   "session_characteristics"};
  for (std::string_view name : kReported)
    if (name == set_name) return true;
  return false;
}

TransactionControl::Answer TransactionControl::on_statement(StatementKind kind, std::string_view sql,
                                                            std::string_view set_name) {
  bool in_deferred = deferred();
  if (kind == StatementKind::Begin && !in_deferred && status_ == 'I') {
    begin_ = std::string(sql);
    status_ = 'T';
    return Answer::Begin;
  }
  const bool set = kind == StatementKind::Set || kind == StatementKind::SetLocal;
  Answer rider = set && reports_parameter_status(set_name)    ? Answer::Forward
                 : set                                        ? Answer::Set
                 : kind == StatementKind::Savepoint           ? Answer::Savepoint
                 : kind == StatementKind::ReleaseSavepoint    ? Answer::ReleaseSavepoint
                 : kind == StatementKind::RollbackToSavepoint ? Answer::RollbackToSavepoint
                                                              : Answer::Forward;
  if (rider != Answer::Forward && in_deferred && !aborted_) {
    // It picks no shard: it runs with the BEGIN, on the shard the transaction gets.
    begin_ += ";";
    begin_ += sql;
    return rider;
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
    case Answer::Savepoint: return "SAVEPOINT";
    case Answer::ReleaseSavepoint: return "RELEASE";
    case Answer::RollbackToSavepoint: return "ROLLBACK";
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

std::string TransactionControl::take_begin(bool may_move) {
  movable_ = may_move && deferred();
  if (movable_) started_ = begin_;
  std::string begin = std::move(begin_);
  begin_.clear();
  return begin;
}

void TransactionControl::restore_begin(std::string begin) {
  begin_ = std::move(begin);
  status_ = begin_.empty() ? 'I' : 'T';
}

void TransactionControl::on_statement_sent(const parser::StatementFacts* statement) {
  if (!movable_ || moving_) return;
  if (statement == nullptr || !rides_with_begin(*statement)) {
    movable_ = false;
    return;
  }
  started_ += ";";
  started_ += statement->text;
}

void TransactionControl::start_move() {
  movable_ = false;
  moving_ = true;
}

void TransactionControl::finish_move() {
  moving_ = false;
  restore_begin(std::move(started_));
  started_.clear();
}

}  // namespace sw::session
