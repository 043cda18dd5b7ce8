// DROP INDEX read from its text (see drop_index.h).
#include "parser/drop_index.h"

#include <utility>

#include "parser/sql_scan.h"

namespace sw::parser {
namespace {

// A possibly qualified name after spaces from `*i`: its identifiers.
std::optional<std::vector<std::string>> read_qualified(std::string_view sql, size_t* i) {
  std::vector<std::string> parts;
  while (true) {
    auto part = read_identifier(sql, i);
    if (!part) return std::nullopt;
    parts.push_back(std::move(part->text));
    size_t at = skip_space(sql, *i);
    if (at >= sql.size() || sql[at] != '.') return parts;
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
    if (!name) return std::nullopt;
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

}  // namespace sw::parser
