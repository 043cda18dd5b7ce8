#include "session/sql_prepared.h"

namespace sw::session {

const parser::SqlPrepare* SqlStatements::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

void SqlStatements::add(parser::SqlPrepare statement) {
  std::string name = statement.name;
  by_name_[name] = std::move(statement);
}

}  // namespace sw::session
