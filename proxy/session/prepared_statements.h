// Prepared statements in transaction pooling: a client's statement names map to server-side
// statements named by the proxy ("sw_<id>"), shared by every client of the worker that prepares
// the same text with the same parameter types, and prepared lazily on each server that needs one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parser/analyze.h"

namespace sw::session {

struct PreparedStatement {
  uint64_t id = 0;
  std::string server_name;
  std::string query;
  std::vector<uint32_t> param_types;
  std::string search_path;  // what set the search_path it was parsed for (its registry key's part)
  bool validated = false;   // some server accepted its Parse: later Parses can be answered at once
  // Its facts, analyzed once when interned (parsing does not depend on the session or config), so
  // a Bind reuses them; null when the text does not analyze (the server reports the error).
  std::shared_ptr<const parser::QueryFacts> facts;
};

// One per worker: interns (query, parameter types) -> statement. Not thread-safe by design.
class StatementRegistry {
 public:
  // The shared statement of (query, param_types, search_path); a statement of its own, not shared,
  // when the server resolves some parameter's type (resolves_parameter_types). The server resolves
  // the names of a Parse by the search_path in effect: clients whose search_path was set by other
  // statements (SessionState::current) share none (pgjdbc's SET search_path, then the same text
  // prepared again, reads the other schema's table).
  std::shared_ptr<const PreparedStatement> intern(std::string_view query,
                                                  const std::vector<uint32_t>& param_types,
                                                  std::string_view search_path = {});
  void mark_validated(uint64_t id);
  // A statement a server can no longer run as prepared (its result type changed): later interns
  // of its text make a new one. Clients holding it keep it.
  void retire(uint64_t id);
  size_t size() const { return by_key_.size(); }

 private:
  std::unordered_map<std::string, std::shared_ptr<PreparedStatement>> by_key_;
  std::unordered_map<uint64_t, PreparedStatement*> by_id_;
  uint64_t next_id_ = 1;
};

// Statements the proxy leaves prepared on one server in transaction pooling: a server that holds
// more (those of clients gone, and statements of their own included) drops them all when a client
// next borrows it (DEALLOCATE ALL), and each is parsed again where a client runs it.
inline constexpr size_t kServerStatementLimit = 1000;

// Two statements the same Parse defines (a fence retry's replay of a Parse is no duplicate).
bool same_parse(const PreparedStatement& a, const PreparedStatement& b);

// One per client: the names it has prepared.
class ClientStatements {
 public:
  const PreparedStatement* find(std::string_view name) const;
  std::shared_ptr<const PreparedStatement> shared(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  void add(std::string_view name, std::shared_ptr<const PreparedStatement> statement);
  void remove(std::string_view name);
  void clear() { by_name_.clear(); }

 private:
  // Looked up by a Bind's name as a view (no string built per lookup).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, std::shared_ptr<const PreparedStatement>, NameHash, std::equal_to<>>
      by_name_;
};

}  // namespace sw::session
