// SQL-level prepared statements (PREPARE name(types) AS statement, EXECUTE name(args),
// DEALLOCATE [PREPARE] name | ALL) as the proxy keeps them for one client. A server's prepared
// statement lives on one server of one shard, so the proxy runs EXECUTE as the statement itself
// with the arguments in place of its parameters ($n -> (arg)::type): it is routed by its key like
// any other statement and needs no statement prepared on whichever server runs it.
// Pure: no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::session {

struct SqlPrepare {
  std::string name;                // as PostgreSQL folds it (unquoted: lower case)
  std::vector<std::string> types;  // the declared parameter types, as written
  std::string query;               // the statement after AS
};

struct SqlExecute {
  std::string name;
  std::vector<std::string> args;  // each argument expression, as written
};

// Splits the text of one PREPARE / EXECUTE statement; nullopt when it is not of that form (the
// server then reports what is wrong).
std::optional<SqlPrepare> parse_sql_prepare(std::string_view sql);
std::optional<SqlExecute> parse_sql_execute(std::string_view sql);
// DEALLOCATE [PREPARE] name: the name; "" for ALL; nullopt when not of that form.
std::optional<std::string> parse_sql_deallocate(std::string_view sql);

// `query` with every $n outside literals, quoted identifiers and comments replaced by
// (args[n-1])::types[n-1] (just (args[n-1]) when no type was declared for it). nullopt when a $n
// has no argument or an argument is missing for a declared type (the server reports it).
std::optional<std::string> substitute_parameters(std::string_view query, const std::vector<std::string>& args,
                                                 const std::vector<std::string>& types);

// SQL-level PREPARE and DEALLOCATE sent in the extended protocol as the unnamed statement (as a
// driver sends a command with parameters or with binary results), for one client.
struct ExtendedSqlCommands {
  // One run on a server, noted when its CommandComplete arrives.
  struct Executed {
    std::optional<SqlPrepare> prepare;  // else DEALLOCATE of `deallocate` ("" for ALL)
    std::string deallocate;
  };
  std::optional<SqlPrepare> unnamed_prepare;      // the unnamed statement is this PREPARE
  std::optional<std::string> unnamed_deallocate;  // ... DEALLOCATE of this name ("" for ALL)
  // The proxy answers that DEALLOCATE (transaction pooling: no server holds a statement under the
  // client's names).
  bool deallocate_answered = false;
  bool portal_runs_unnamed = false;  // the unnamed portal was bound from the unnamed statement
  std::vector<Executed> executed;
  std::string to_forget;  // transaction pooling: DEALLOCATEs the server runs after the batch's Sync

  bool portal_answered() const { return portal_runs_unnamed && deallocate_answered; }
  void forget_unnamed() {
    unnamed_prepare.reset();
    unnamed_deallocate.reset();
    deallocate_answered = false;
    portal_runs_unnamed = false;
  }
};

// One client's prepared statements by name.
class SqlStatements {
 public:
  const SqlPrepare* find(std::string_view name) const;
  void add(SqlPrepare statement);
  void remove(std::string_view name) { by_name_.erase(std::string(name)); }
  void clear() { by_name_.clear(); }
  size_t size() const { return by_name_.size(); }

  // The statement to run for EXECUTE `sql` of a statement this client prepared; nullopt when
  // `sql` is not such an EXECUTE.
  std::optional<std::string> expand_execute(std::string_view sql) const;

 private:
  std::map<std::string, SqlPrepare, std::less<>> by_name_;
};

}  // namespace sw::session
