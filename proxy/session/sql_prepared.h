// SQL-level prepared statements (PREPARE name(types) AS statement, EXECUTE name(args),
// DEALLOCATE [PREPARE] name | ALL) as the proxy keeps them for one client (docs/architecture.md
// §5.7). With several shards a server's prepared statement lives on one server of one shard, so
// the proxy runs EXECUTE as the statement itself with the arguments in place of its parameters
// (parser/prepared_sql.h), routed by its key like any other statement. With one shard in
// transaction pooling the servers run them: each server the client borrows is brought to hold
// exactly the client's statements (server_state.h). Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parser/prepared_sql.h"
#include "session/prepared_statements.h"

namespace sw::session {

// SQL-level PREPARE and DEALLOCATE sent in the extended protocol as the unnamed statement (as a
// driver sends a command with parameters or with binary results), for one client.
struct ExtendedSqlCommands {
  // One run on a server, noted when its CommandComplete arrives.
  struct Executed {
    std::optional<parser::SqlPrepare> prepare;  // else DEALLOCATE of `deallocate` ("" for ALL)
    std::string deallocate;
    std::string prepare_sql;  // the PREPARE's text
    std::string source;       // the Parse's text (pg_prepared_statements shows it)
  };
  std::optional<parser::SqlPrepare> unnamed_prepare;  // the unnamed statement is this PREPARE
  std::string unnamed_prepare_sql;                    // ... whose text is this
  std::string unnamed_prepare_source;                 // ... in this Parse's text
  std::optional<std::string> unnamed_deallocate;      // ... DEALLOCATE of this name ("" for ALL)
  // The proxy answers that DEALLOCATE (transaction pooling: no server holds a statement under the
  // client's names).
  bool deallocate_answered = false;
  bool portal_runs_unnamed = false;  // the unnamed portal was bound from the unnamed statement
  std::vector<Executed> executed;
  // Transaction pooling with several shards: DEALLOCATEs the server runs after the batch's Sync.
  std::string to_forget;

  bool portal_answered() const { return portal_runs_unnamed && deallocate_answered; }
  void forget_unnamed() {
    unnamed_prepare.reset();
    unnamed_prepare_sql.clear();
    unnamed_prepare_source.clear();
    unnamed_deallocate.reset();
    deallocate_answered = false;
    portal_runs_unnamed = false;
  }
};

// One client's prepared statements by name. Each PREPARE that succeeds gets a version unique in
// the process, so a server's copy (pool::Backend::sql_prepared) is known to be this one.
class SqlStatements {
 public:
  struct Held {
    parser::SqlPrepare prepare;
    std::string sql;  // the PREPARE a server runs to hold it (its own statement text)
    uint64_t version = 0;
    // As pg_prepared_statements shows it: the whole text the client sent (a Query's, all its
    // statements; a Parse's), and when (wall_clock_micros()).
    std::string source;
    int64_t prepared_at = 0;
  };
  const parser::SqlPrepare* find(std::string_view name) const;
  // Records `statement`, whose text is `sql`, sent by the client in `source`; returns its new
  // version.
  uint64_t add(parser::SqlPrepare statement, std::string sql = {}, std::string source = {},
               int64_t prepared_at = wall_clock_micros());
  void remove(std::string_view name) { by_name_.erase(std::string(name)); }
  void clear() { by_name_.clear(); }
  size_t size() const { return by_name_.size(); }
  const std::map<std::string, Held, std::less<>>& all() const { return by_name_; }

 private:
  std::map<std::string, Held, std::less<>> by_name_;
};

}  // namespace sw::session
