// DROP INDEX by name, read from its text (the statement the session runs on every shard with
// several shards, docs/architecture.md §5). Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::parser {

struct DropIndex {
  bool concurrently = false;
  bool if_exists = false;
  // Each index name's identifiers ({"schema", "index"} or {"index"}), folded to lower case unless
  // quoted, as PostgreSQL reads them.
  std::vector<std::vector<std::string>> names;
  std::string behavior;  // "CASCADE", "RESTRICT" or ""
};

// DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, ...] [CASCADE | RESTRICT]; nullopt otherwise.
std::optional<DropIndex> parse_drop_index(std::string_view sql);

}  // namespace sw::parser
