// SQL-level prepared statements (PREPARE name(types) AS statement, EXECUTE name(args),
// DEALLOCATE [PREPARE] name | ALL) as the proxy keeps them for one client. A server's prepared
// statement lives on one server of one shard, so the proxy runs EXECUTE as the statement itself
// with the arguments in place of its parameters (parser/prepared_sql.h): it is routed by its key
// like any other statement and needs no statement prepared on whichever server runs it.
// Pure: no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/prepared_sql.h"

namespace sw::session {

// SQL-level PREPARE and DEALLOCATE sent in the extended protocol as the unnamed statement (as a
// driver sends a command with parameters or with binary results), for one client.
struct ExtendedSqlCommands {
  // One run on a server, noted when its CommandComplete arrives.
  struct Executed {
    std::optional<parser::SqlPrepare> prepare;  // else DEALLOCATE of `deallocate` ("" for ALL)
    std::string deallocate;
  };
  std::optional<parser::SqlPrepare> unnamed_prepare;  // the unnamed statement is this PREPARE
  std::optional<std::string> unnamed_deallocate;      // ... DEALLOCATE of this name ("" for ALL)
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
  const parser::SqlPrepare* find(std::string_view name) const;
  void add(parser::SqlPrepare statement);
  void remove(std::string_view name) { by_name_.erase(std::string(name)); }
  void clear() { by_name_.clear(); }
  size_t size() const { return by_name_.size(); }

 private:
  std::map<std::string, parser::SqlPrepare, std::less<>> by_name_;
};

}  // namespace sw::session
