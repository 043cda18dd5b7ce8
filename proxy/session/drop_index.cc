#include "session/drop_index.h"

#include "sqltext/catalog_sql.h"

namespace sw::session {
namespace {

constexpr std::string_view kTag = "$sw_drop_index$";

std::string quote_literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

// A name's identifiers as SQL: each quoted, joined by '.'.
std::string quoted_name(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += '.';
    out += sqltext::quote_identifier(part);
  }
  return out;
}

}  // namespace

bool fits_guard(const DropIndex& drop) {
  for (const auto& name : drop.names) {
    for (const std::string& part : name) {
      if (part.find(kTag) != std::string::npos) return false;
    }
  }
  return true;
}

std::string guarded_drop_index(const DropIndex& drop, const std::vector<TableName>& sharded_tables) {
  std::string sharded;
  for (const TableName& table : sharded_tables) {
    if (!sharded.empty()) sharded += " OR ";
    sharded += "(t.relname = " + quote_literal(table.name);
    if (!table.schema.empty()) sharded += " AND n.nspname = " + quote_literal(table.schema);
    sharded += ")";
  }
  if (sharded.empty()) sharded = "false";
  std::string sql = "DO " + std::string(kTag) + " BEGIN ";
  for (const auto& parts : drop.names) {
    const std::string name = quoted_name(parts);
    std::string statement = "DROP INDEX " + name + (drop.behavior.empty() ? "" : " " + drop.behavior);
    sql +=
        "IF EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class t ON t.oid = i.indrelid "
        "JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace WHERE i.indexrelid = "
        "pg_catalog.to_regclass(" +
        quote_literal(name) + ") AND (" + sharded + ")) THEN EXECUTE " + quote_literal(statement) +
        "; END IF; ";
  }
  return sql + "END " + std::string(kTag);
}

}  // namespace sw::session
