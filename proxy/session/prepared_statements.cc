#include "session/prepared_statements.h"

namespace sw::session {
namespace {

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

}  // namespace

bool same_parse(const PreparedStatement& a, const PreparedStatement& b) {
  return a.id == b.id ||
         (a.query == b.query && a.param_types == b.param_types && a.search_path == b.search_path);
}

std::shared_ptr<const PreparedStatement> StatementRegistry::intern(std::string_view query,
                                                                   const std::vector<uint32_t>& param_types,
                                                                   std::string_view search_path) {
  std::string key = registry_key(query, param_types, search_path);
  auto it = by_key_.find(key);
  if (it != by_key_.end()) return it->second;
  auto statement = std::make_shared<PreparedStatement>();
  statement->id = next_id_++;
  statement->server_name = "sw_" + std::to_string(statement->id);
  statement->query = std::string(query);
  statement->param_types = param_types;
  statement->search_path = std::string(search_path);
  if (auto facts = parser::analyze(query)) statement->facts = *facts;
  by_id_.emplace(statement->id, statement.get());
  by_key_.emplace(std::move(key), statement);
  return statement;
}

void StatementRegistry::mark_validated(uint64_t id) {
  auto it = by_id_.find(id);
  if (it != by_id_.end()) it->second->validated = true;
}

void StatementRegistry::retire(uint64_t id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const std::string key = registry_key(it->second->query, it->second->param_types, it->second->search_path);
  by_id_.erase(it);
  by_key_.erase(key);  // last: it may hold the statement's only reference
}

const PreparedStatement* ClientStatements::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const PreparedStatement> ClientStatements::shared(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void ClientStatements::add(std::string_view name, std::shared_ptr<const PreparedStatement> statement) {
  by_name_[std::string(name)] = std::move(statement);
}

void ClientStatements::remove(std::string_view name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) by_name_.erase(it);
}

}  // namespace sw::session
