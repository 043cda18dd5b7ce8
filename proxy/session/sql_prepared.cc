#include "session/sql_prepared.h"

#include <atomic>

namespace sw::session {

namespace {

// Versions are unique in the process: a server may hold the statements of any client of its pool.
std::atomic<uint64_t> next_version{1};

}  // namespace

const parser::SqlPrepare* SqlStatements::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second.prepare;
}

uint64_t SqlStatements::add(parser::SqlPrepare statement, std::string sql, std::string source,
                            int64_t prepared_at) {
  std::string name = statement.name;
  const uint64_t version = next_version.fetch_add(1, std::memory_order_relaxed);
  by_name_[name] = Held{std::move(statement), std::move(sql), version, std::move(source), prepared_at};
  return version;
}

}  // namespace sw::session
