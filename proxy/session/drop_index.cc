#include "session/drop_index.h"

#include "session/sql_scan.h"
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

// A possibly qualified name after spaces from `*i`, as quoted SQL.
std::optional<std::string> read_qualified(std::string_view sql, size_t* i) {
  std::string out;
  while (true) {
    auto part = read_identifier(sql, i);
    if (!part) return std::nullopt;
    out += sqltext::quote_identifier(part->text);
    size_t at = skip_space(sql, *i);
    if (at >= sql.size() || sql[at] != '.') return out;
    out += '.';
    *i = at + 1;
  }
}

}  // namespace

std::optional<DropIndex> parse_drop_index(std::string_view sql) {
  size_t i = 0;
  if (!read_keyword(sql, &i, "drop") || !read_keyword(sql, &i, "index")) return std::nullopt;
  DropIndex drop;
  drop.concurrently = read_keyword(sql, &i, "concurrently");
  size_t before_if = i;
  if (read_keyword(sql, &i, "if")) {
    if (read_keyword(sql, &i, "exists"))
      drop.if_exists = true;
    else
      i = before_if;  // an index named "if"
  }
  while (true) {
    auto name = read_qualified(sql, &i);
    if (!name || name->find(kTag) != std::string::npos) return std::nullopt;
    drop.names.push_back(std::move(*name));
    size_t at = skip_space(sql, i);
    if (at >= sql.size() || sql[at] != ',') break;
    i = at + 1;
  }
  if (read_keyword(sql, &i, "cascade"))
    drop.behavior = "CASCADE";
  else if (read_keyword(sql, &i, "restrict"))
    drop.behavior = "RESTRICT";
  if (!at_end(sql, i)) return std::nullopt;
  return drop;
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
  for (const std::string& name : drop.names) {
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
