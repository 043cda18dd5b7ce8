#include "session/prepared_statements.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

namespace sw::session {
namespace {

std::atomic<uint64_t> g_schema_epoch{0};

std::string registry_key(std::string_view query, const std::vector<uint32_t>& param_types,
                         std::string_view search_path) {
  std::string key;
  key.reserve(query.size() + 4 * param_types.size() + search_path.size() + 8);
  // The counts, then the types, in this process's byte order: a map key, never sent anywhere.
  const auto count = static_cast<uint32_t>(param_types.size());
  const auto path_size = static_cast<uint32_t>(search_path.size());
  key.append(reinterpret_cast<const char*>(&count), sizeof count);
  key.append(reinterpret_cast<const char*>(param_types.data()), sizeof(uint32_t) * param_types.size());
  key.append(reinterpret_cast<const char*>(&path_size), sizeof path_size);
  key.append(search_path);
  key.append(query);
  return key;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

constexpr uint64_t kMaxParameterNumber = 0xffffffff;  // stops the count before it overflows

// The highest $n of `query`, n > 0 (a $ inside an identifier, as in a$1, is none).
uint64_t highest_parameter(std::string_view query) {
  uint64_t highest = 0;
  for (size_t i = 0; i + 1 < query.size(); ++i) {
    if (query[i] != '$' || !is_digit(query[i + 1]) || (i > 0 && is_identifier_char(query[i - 1]))) continue;
    uint64_t n = 0;
    size_t j = i + 1;
    for (; j < query.size() && is_digit(query[j]) && n <= kMaxParameterNumber; ++j)
      n = n * 10 + (query[j] - '0');
    highest = std::max(highest, n);
    i = j - 1;
  }
  return highest;
}

}  // namespace

bool resolves_parameter_types(std::string_view query, const std::vector<uint32_t>& param_types) {
  if (std::find(param_types.begin(), param_types.end(), 0u) != param_types.end()) return true;
  return highest_parameter(query) > param_types.size();
}

bool same_parse(const PreparedStatement& a, const PreparedStatement& b) {
  return a.id == b.id ||
         (a.query == b.query && a.param_types == b.param_types && a.search_path == b.search_path);
}

uint64_t schema_epoch() { return g_schema_epoch.load(std::memory_order_acquire); }

void advance_schema_epoch() { g_schema_epoch.fetch_add(1, std::memory_order_acq_rel); }

bool changes_schema(const parser::QueryFacts& facts) {
  return std::any_of(facts.statements.begin(), facts.statements.end(), [](const parser::StatementFacts& s) {
    // TRUNCATE (DDL to the parser) changes no table's row type.
    return s.kind == parser::StatementKind::Ddl && s.node_type != "TruncateStmt";
  });
}

void SchemaChanges::note_sent(const parser::QueryFacts& facts) {
  if (!changes_schema(facts)) return;
  advance_schema_epoch();
  pending_ = true;
}

void SchemaChanges::end_transaction() {
  if (std::exchange(pending_, false)) advance_schema_epoch();
}

void StatementRegistry::forget_older_schema() {
  epoch_ = schema_epoch();
  by_id_.clear();
  by_key_.clear();
  own_awaiting_.clear();
  parsed_texts_.clear();
}

std::shared_ptr<const PreparedStatement> StatementRegistry::intern(
    std::string_view query, const std::vector<uint32_t>& param_types, std::string_view search_path,
    std::shared_ptr<const PreparedStatement> runs) {
  if (schema_epoch() != epoch_) forget_older_schema();
  const bool shared = !resolves_parameter_types(query, param_types);
  std::string key = registry_key(query, param_types, search_path);
  if (shared) {
    auto it = by_key_.find(key);
    if (it != by_key_.end()) return it->second;
  }
  auto statement = std::make_shared<PreparedStatement>();
  statement->id = next_id_++;
  statement->server_name = "sw_" + std::to_string(statement->id);
  statement->query = std::string(query);
  statement->param_types = param_types;
  statement->search_path = std::string(search_path);
  statement->runs = std::move(runs);
  if (auto facts = parser::analyze(query)) statement->facts = *facts;
  if (!shared) {
    statement->own = true;
    // Its client's alone, never looked up or retired; answered without a server when a server
    // accepted a Parse of the same text before.
    auto parsed = parsed_texts_.find(key);
    statement->validated = parsed != parsed_texts_.end();
    if (statement->validated) statement->resolved_types = parsed->second;
    if (!statement->validated) remember_own(statement->id, std::move(key));
    return statement;
  }
  by_id_.emplace(statement->id, statement.get());
  by_key_.emplace(std::move(key), statement);
  return statement;
}

void StatementRegistry::remember_own(uint64_t id, std::string key) {
  // Bounded: an entry whose Parse never got an answer (its server lost) is dropped with the rest
  // when full, which only costs a later Parse of that text a server round trip.
  if (own_awaiting_.size() >= kOwnAwaitingLimit) own_awaiting_.clear();
  own_awaiting_.emplace(id, std::move(key));
}

void StatementRegistry::mark_validated(uint64_t id) {
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    it->second->validated = true;
    return;
  }
  if (auto own = own_awaiting_.find(id); own != own_awaiting_.end()) {
    parsed_texts_.emplace(std::move(own->second), std::nullopt);
    own_awaiting_.erase(own);
  }
}

void StatementRegistry::forget_failed(uint64_t id) { own_awaiting_.erase(id); }

void StatementRegistry::note_resolved_types(const PreparedStatement& statement,
                                            const std::vector<uint32_t>& types) {
  auto parsed =
      parsed_texts_.find(registry_key(statement.query, statement.param_types, statement.search_path));
  if (parsed != parsed_texts_.end()) parsed->second = types;
}

void StatementRegistry::retire(uint64_t id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const std::string key = registry_key(it->second->query, it->second->param_types, it->second->search_path);
  by_id_.erase(it);
  by_key_.erase(key);  // last: it may hold the statement's only reference
}

int64_t wall_clock_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const PreparedStatement* ClientStatements::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.statement.get();
}

std::shared_ptr<const PreparedStatement> ClientStatements::shared(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.statement;
}

void ClientStatements::add(std::string_view name, std::shared_ptr<const PreparedStatement> statement,
                           int64_t prepared_at) {
  by_name_[std::string(name)] = Entry{std::move(statement), prepared_at};
}

void ClientStatements::remove(std::string_view name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return;
  if (it->second.statement->own) resolved_types_.erase(it->second.statement->id);  // its name's alone
  by_name_.erase(it);
}

const std::vector<uint32_t>* ClientStatements::resolved_types(uint64_t id) const {
  auto it = resolved_types_.find(id);
  return it == resolved_types_.end() ? nullptr : &it->second;
}

}  // namespace sw::session
