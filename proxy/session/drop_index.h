// DROP INDEX by name with several shards: an index name does not say its table, so the default
// shard runs the client's statement (its answer is the client's) and every other shard drops each
// named index only where it exists and its table is a sharded one (that shard's catalog decides).
// The statement is read by parser::parse_drop_index. Pure: no I/O.
#pragma once

#include <string>
#include <vector>

#include "parser/drop_index.h"

namespace sw::session {

using DropIndex = parser::DropIndex;

// A sharded table as configured: schema "" matches any schema.
struct TableName {
  std::string schema;
  std::string name;
};

// Whether the guarded statement can hold every name (none holds the guard's dollar-quote tag).
bool fits_guard(const DropIndex& drop);

// The statement for a shard other than the default one (a DO block; not for CONCURRENTLY).
// `drop` fits_guard.
std::string guarded_drop_index(const DropIndex& drop, const std::vector<TableName>& sharded_tables);

}  // namespace sw::session
