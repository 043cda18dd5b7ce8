// Schema drift between a migration's source and target, found before its copy starts: the
// configured tables must have the same columns (name, type, NOT NULL) and the same indexes on
// both shards, or the copy or the stream would fail half-way (a column the target lacks) or the
// target would serve the buckets differently (a missing index). Blocking libpq.
#pragma once

#include <libpq-fe.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::mover {

// One table as the drift check compares it.
struct TableSchema {
  std::map<std::string, std::string> columns;  // name -> "type" or "type NOT NULL"
  std::set<std::string> indexes;               // definitions without the index's name
};
using SchemaByTable = std::map<std::string, TableSchema>;  // by configured table name

// The configured tables' schema on one shard (a table that does not exist is left out).
Result<SchemaByTable> read_schema(PGconn* shard, const std::vector<config::ShardedTable>& tables);

// The differences, one table per "; "-separated part, e.g. `orders: column "extra" only on s1,
// column "note" text on s0 but character varying(20) on s1, index (...) only on s0`; "" when none.
// A table missing on one side is reported too.
std::string schema_diff(const std::string& a_name, const SchemaByTable& a, const std::string& b_name,
                        const SchemaByTable& b);

// Both shards' schemas compared: 55000 (object not in prerequisite state) naming each table's
// differences and the fix; ok when they agree.
Status check_schemas(PGconn* source, const std::string& source_name, PGconn* target,
                     const std::string& target_name, const std::vector<config::ShardedTable>& tables);

}  // namespace sw::mover
