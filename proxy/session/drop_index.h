// DROP INDEX by name with several shards: an index name does not say its table, so the default
// shard runs the client's statement (its answer is the client's) and every other shard drops each
// named index only where it exists and its table is a sharded one (that shard's catalog decides).
// Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sw::session {

struct DropIndex {
  bool concurrently = false;
  bool if_exists = false;
  std::vector<std::string> names;  // each as SQL: quoted identifiers joined by '.'
  std::string behavior;            // "CASCADE", "RESTRICT" or ""
};

// DROP INDEX [CONCURRENTLY] [IF EXISTS] name [, ...] [CASCADE | RESTRICT]; nullopt otherwise.
std::optional<DropIndex> parse_drop_index(std::string_view sql);

// A sharded table as configured: schema "" matches any schema.
struct TableName {
  std::string schema;
  std::string name;
};

// The statement for a shard other than the default one (a DO block; not for CONCURRENTLY).
std::string guarded_drop_index(const DropIndex& drop, const std::vector<TableName>& sharded_tables);

}  // namespace sw::session
