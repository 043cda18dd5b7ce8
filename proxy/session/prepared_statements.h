// Prepared statements in transaction pooling: a client's statement names map to server-side
// statements named by the proxy ("sw_<id>"), shared by every client of the worker that prepares
// the same text with the same parameter types, and prepared lazily on each server that needs one.
// A Parse that leaves a parameter's type to the server (0, or fewer types than parameters) is not
// shared: the server resolves the type from the tables as they are when it parses, so a statement
// parsed for another client before a table changed could run with other types than this client's
// Parse gets from PostgreSQL, silently (a date where the column is now a timestamptz). Such a
// Parse still needs no server once a server accepted the same text (docs/architecture.md §5.3):
// a client that prepares synchronously while its other connections hold servers (pgbench -M
// prepared) would otherwise wait for one of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "parser/analyze.h"

namespace sw::session {

struct PreparedStatement {
  uint64_t id = 0;
  std::string server_name;
  std::string query;
  std::vector<uint32_t> param_types;
  std::string search_path;  // what set the search_path it was parsed for (its registry key's part)
  // Some server accepted its Parse (an own statement's: the same text's): a Parse of it can be
  // answered at once.
  bool validated = false;
  // Not shared (resolves_parameter_types): the server resolves some parameter's type, which the
  // proxy learns from a Describe of its own after the statement's first Parse (§5.3).
  bool own = false;
  // An own statement of a text a server accepted before: the types the server resolved for it
  // then, when known (StatementRegistry::note_resolved_types).
  std::optional<std::vector<uint32_t>> resolved_types;
  // Its facts, analyzed once when interned (parsing does not depend on the session or config), so
  // a Bind reuses them; null when the text does not analyze (the server reports the error).
  std::shared_ptr<const parser::QueryFacts> facts;
  // The protocol-level statement its SQL EXECUTEs by that one's server name (§5.3): parsed first
  // on every server this one is parsed on. Null for any other statement.
  std::shared_ptr<const PreparedStatement> runs;
};

// The schema epoch: counts the schema changes (DDL) clients sent through this process, so every
// worker's registry forgets the statements it shares once one may be stale (docs/architecture.md
// §5.3). Process-wide: workers are threads, and a change by a client of one worker concerns the
// statements of all.
uint64_t schema_epoch();
void advance_schema_epoch();

// True when `facts` hold a statement that can change what a prepared statement's plan depends on
// (CREATE/ALTER/DROP of a table, type, view, function, ...): StatementKind::Ddl but TRUNCATE.
bool changes_schema(const parser::QueryFacts& facts);

// One per client: advances the schema epoch when the client sends DDL (its own later Parses
// in the same transaction see the change), and again when that transaction ends (other
// clients see the change only then; a statement shared between the two may have been planned
// against the old schema).
class SchemaChanges {
 public:
  void note_sent(const parser::QueryFacts& facts);
  void end_transaction();

 private:
  bool pending_ = false;  // DDL sent in the transaction in progress
};

// One per worker: interns (query, parameter types) -> statement. Not thread-safe by design.
class StatementRegistry {
 public:
  // The shared statement of (query, param_types, search_path); a statement of its own, not shared,
  // when the server resolves some parameter's type (resolves_parameter_types). The server resolves
  // the names of a Parse by the search_path in effect: clients whose search_path was set by other
  // statements (SessionState::current) share none (pgjdbc's SET search_path, then the same text
  // prepared again, reads the other schema's table). Once the schema epoch advanced, the registry
  // first forgets every statement it shared and every text servers accepted (clients holding old
  // statements keep them, as after retire()).
  // `runs`: the statement `query` EXECUTEs by its server name (the same for every Parse of that
  // text: a server name names one statement of this registry).
  std::shared_ptr<const PreparedStatement> intern(std::string_view query,
                                                  const std::vector<uint32_t>& param_types,
                                                  std::string_view search_path = {},
                                                  std::shared_ptr<const PreparedStatement> runs = nullptr);
  // A server accepted the Parse of statement `id`: later Parses of its text are answered at once
  // (an own statement's: later own statements of the same text, search_path and types).
  void mark_validated(uint64_t id);
  // A server failed or skipped the Parse of statement `id`.
  void forget_failed(uint64_t id);
  // A server resolved `types` for own statement `statement`'s parameters: later own statements of
  // its text (answered without a server) carry them.
  void note_resolved_types(const PreparedStatement& statement, const std::vector<uint32_t>& types);
  // A statement a server can no longer run as prepared (its result type changed): later interns
  // of its text make a new one. Clients holding it keep it.
  void retire(uint64_t id);
  size_t size() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, std::shared_ptr<PreparedStatement>> by_key_;
  std::unordered_map<uint64_t, PreparedStatement*> by_id_;
  // Own statements (not shared) whose first Parse is on its way to a server: their keys.
  static constexpr size_t kOwnAwaitingLimit = 4096;
  std::unordered_map<uint64_t, std::string> own_awaiting_;
  // Keys of own statements some server accepted, and the parameter types it resolved when known.
  std::unordered_map<std::string, std::optional<std::vector<uint32_t>>> parsed_texts_;
  uint64_t next_id_ = 1;
  uint64_t epoch_ = 0;  // the schema epoch its statements were interned in

  void forget_older_schema();
  void remember_own(uint64_t id, std::string key);
};

// Statements the proxy leaves prepared on one server in transaction pooling: a server that holds
// more (those of clients gone, and statements of their own included) drops them all when a client
// next borrows it (DEALLOCATE ALL), and each is parsed again where a client runs it.
inline constexpr size_t kServerStatementLimit = 1000;

// True when a Parse of `query` with `param_types` leaves some parameter's type to the server: a
// type 0, or a $n beyond the types given (found by a scan of the text that may also count a $n in
// a string or comment: that errs on the side of not sharing).
bool resolves_parameter_types(std::string_view query, const std::vector<uint32_t>& param_types);

// Two statements the same Parse defines (a fence retry's replay of a Parse is no duplicate).
bool same_parse(const PreparedStatement& a, const PreparedStatement& b);

// Microseconds since the Unix epoch, now: when a client prepared a statement
// (pg_prepared_statements.prepare_time).
int64_t wall_clock_micros();

// Looked up by a Bind's name as a view (no string built per lookup).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};

// One per client: the names it has prepared, and when.
class ClientStatements {
 public:
  struct Entry {
    std::shared_ptr<const PreparedStatement> statement;
    int64_t prepared_at = 0;  // wall_clock_micros() of the client's Parse
  };
  using Names = std::unordered_map<std::string, Entry, NameHash, std::equal_to<>>;

  const PreparedStatement* find(std::string_view name) const;
  std::shared_ptr<const PreparedStatement> shared(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  void add(std::string_view name, std::shared_ptr<const PreparedStatement> statement,
           int64_t prepared_at = wall_clock_micros());
  void remove(std::string_view name);
  void clear() {
    by_name_.clear();
    resolved_types_.clear();
  }
  bool empty() const { return by_name_.empty(); }
  const Names& all() const { return by_name_; }
  // The parameter types a server resolved for own statement `id` (its ParameterDescription).
  void note_resolved_types(uint64_t id, std::vector<uint32_t> types) {
    resolved_types_[id] = std::move(types);
  }
  // Those types; null until a server described the statement.
  const std::vector<uint32_t>* resolved_types(uint64_t id) const;

 private:
  Names by_name_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> resolved_types_;  // own statements only
};

}  // namespace sw::session
