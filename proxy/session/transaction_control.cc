#include "session/transaction_control.h"

#include <algorithm>
#include <cctype>

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
    savepoints_.clear();
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
  if (rider == Answer::RollbackToSavepoint && in_deferred && aborted_) {
    // Back to a savepoint made before the refused statement: the transaction runs again.
    const Answer answer = savepoint_rider(rider, sql);
    if (answer != Answer::NoSuchSavepoint) {
      aborted_ = false;
      status_ = 'T';
    }
    return answer;
  }
  if (rider != Answer::Forward && in_deferred && !aborted_) {
    // It picks no shard: it runs with the BEGIN, on the shard the transaction gets.
    if (rider == Answer::Savepoint || rider == Answer::ReleaseSavepoint ||
        rider == Answer::RollbackToSavepoint)
      return savepoint_rider(rider, sql);
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

// A savepoint command of the deferred transaction: kept with the BEGIN, or 3B001 (the transaction
// is then aborted, as PostgreSQL's) when it names no savepoint made.
TransactionControl::Answer TransactionControl::savepoint_rider(Answer rider, std::string_view sql) {
  std::string name = savepoint_name(sql);
  if (rider == Answer::Savepoint) {
    savepoints_.push_back(std::move(name));
  } else {
    auto found = std::find(savepoints_.rbegin(), savepoints_.rend(), name);
    if (found == savepoints_.rend()) {
      missing_ = std::move(name);
      abort_if_deferred();
      return Answer::NoSuchSavepoint;
    }
    // RELEASE drops the savepoint and every later one; ROLLBACK TO keeps it.
    const auto kept = savepoints_.size() - static_cast<size_t>(found - savepoints_.rbegin()) -
                      (rider == Answer::ReleaseSavepoint ? 1 : 0);
    savepoints_.resize(kept);
  }
  begin_ += ";";
  begin_ += sql;
  return rider;
}

Status TransactionControl::no_such_savepoint() const {
  return Status::client("3B001", "savepoint \"" + missing_ + "\" does not exist");
}

std::string savepoint_name(std::string_view sql) {
  while (!sql.empty() && (std::isspace(static_cast<unsigned char>(sql.back())) || sql.back() == ';'))
    sql.remove_suffix(1);
  if (!sql.empty() && sql.back() == '"') {
    std::string name;
    size_t at = sql.size() - 1;  // the closing quote
    while (at > 0) {
      --at;
      if (sql[at] != '"') {
        name.insert(name.begin(), sql[at]);
      } else if (at > 0 && sql[at - 1] == '"') {
        name.insert(name.begin(), '"');
        --at;
      } else {
        break;
      }
    }
    return name;
  }
  size_t begin = sql.size();
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(sql[begin - 1])) || sql[begin - 1] == '_' ||
                       sql[begin - 1] == '$' || (sql[begin - 1] & 0x80) != 0))
    --begin;
  std::string name(sql.substr(begin));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
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
    case Answer::NoSuchSavepoint:
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
  if (statement->kind == StatementKind::Savepoint) savepoints_.push_back(savepoint_name(statement->text));
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
