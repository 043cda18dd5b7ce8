#include "mover/schema_check.h"

#include <initializer_list>
#include <string_view>

#include "catalog/pq.h"
#include "mover/copier.h"

namespace sw::mover {

Result<SchemaByTable> read_schema(PGconn* shard, const std::vector<config::ShardedTable>& tables) {
  SchemaByTable out;
  for (const auto& table : tables) {
    auto name = resolve_table(shard, table.name);
    if (!name) continue;  // reported by schema_diff as missing
    TableSchema& schema = out[table.name];
    auto columns = catalog::query(shard,
                                  "SELECT attname, format_type(atttypid, atttypmod) || "
                                  "CASE WHEN attnotnull THEN ' NOT NULL' ELSE '' END "
                                  "FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 "
                                  "AND NOT attisdropped",
                                  {*name});
    if (!columns) return columns.status();
    for (int row = 0; row < PQntuples(columns->get()); ++row)
      schema.columns[catalog::text_value(columns->get(), row, 0)] =
          catalog::text_value(columns->get(), row, 1);
    // The definition without the index's own name (names may differ between shards harmlessly).
    auto indexes = catalog::query(shard,
                                  "SELECT regexp_replace(pg_get_indexdef(indexrelid), "
                                  "'^CREATE (UNIQUE )?INDEX \\S+ ON ', 'CREATE \\1INDEX ON ') "
                                  "FROM pg_index WHERE indrelid = $1::regclass",
                                  {*name});
    if (!indexes) return indexes.status();
    for (int row = 0; row < PQntuples(indexes->get()); ++row)
      schema.indexes.insert(catalog::text_value(indexes->get(), row, 0));
  }
  return out;
}

namespace {

std::string table_diff(const std::string& a_name, const TableSchema& a, const std::string& b_name,
                       const TableSchema& b) {
  std::string out;
  // One difference, its pieces appended in place.
  auto add = [&](std::initializer_list<std::string_view> pieces) {
    if (!out.empty()) out += ", ";
    for (std::string_view piece : pieces) out += piece;
  };
  for (const auto& [column, type] : a.columns) {
    auto other = b.columns.find(column);
    if (other == b.columns.end())
      add({"column \"", column, "\" only on ", a_name});
    else if (other->second != type)
      add({"column \"", column, "\" ", type, " on ", a_name, " but ", other->second, " on ", b_name});
  }
  for (const auto& [column, type] : b.columns)
    if (a.columns.count(column) == 0) add({"column \"", column, "\" only on ", b_name});
  for (const auto& index : a.indexes)
    if (b.indexes.count(index) == 0) add({"index (", index, ") only on ", a_name});
  for (const auto& index : b.indexes)
    if (a.indexes.count(index) == 0) add({"index (", index, ") only on ", b_name});
  return out;
}

}  // namespace

std::string schema_diff(const std::string& a_name, const SchemaByTable& a, const std::string& b_name,
                        const SchemaByTable& b) {
  std::string out;
  auto add = [&](const std::string& table, const std::string& diff) {
    if (!diff.empty()) out += (out.empty() ? "" : "; ") + table + ": " + diff;
  };
  for (const auto& [table, schema] : a) {
    auto other = b.find(table);
    add(table, other == b.end() ? "missing on " + b_name : table_diff(a_name, schema, b_name, other->second));
  }
  for (const auto& [table, schema] : b)
    if (a.count(table) == 0) add(table, "missing on " + a_name);
  return out;
}

Status check_schemas(PGconn* source, const std::string& source_name, PGconn* target,
                     const std::string& target_name, const std::vector<config::ShardedTable>& tables) {
  auto a = read_schema(source, tables);
  if (!a) return a.status();
  auto b = read_schema(target, tables);
  if (!b) return b.status();
  std::string diff = schema_diff(source_name, *a, target_name, *b);
  if (diff.empty()) return Status::ok();
  return Status::server("55000", "schema drift between " + source_name + " and " + target_name + ": " + diff +
                                     " (make the tables the same on both shards, e.g. by running the DDL "
                                     "through shardwire; the move starts once they agree)");
}

}  // namespace sw::mover
