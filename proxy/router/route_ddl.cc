// Routing of DDL, maintenance (VACUUM/ANALYZE/CLUSTER/REINDEX), LOCK and COPY of a table.
//
//  * DDL naming a sharded table runs on every shard in turn (AllShards; not atomic, the
//    executor reports which shards applied it). CREATE TABLE of a configured sharded table
//    also lists it in fence_tables: install its fence trigger (docs/architecture.md §7.4).
//  * CREATE TABLE ... PARTITION OF / INHERITS a sharded table also runs on every shard.
//  * DDL naming only unsharded objects (or none) goes to the default shard. That includes
//    DROP INDEX / ALTER INDEX by name: an index name does not say its table. With several shards
//    the session runs DROP INDEX on every shard itself (session/drop_index.h), each shard's
//    catalog saying whether the index is a sharded table's.
//  * Mixing both in one statement, CREATE TABLE AS / SELECT INTO / CREATE VIEW over or into
//    a sharded table, LOCK of a sharded table and COPY of a sharded table are refused.
#include "router/router_internal.h"

namespace sw::router::detail {

Route route_ddl(const parser::StatementFacts& statement, const Directory& dir, const RoutingRules& rules) {
  using parser::TableRole;
  const parser::TableRef* sharded = nullptr;
  const TableRule* sharded_rule = nullptr;
  const parser::TableRef* unsharded = nullptr;
  const parser::TableRef* sharded_read = nullptr;
  std::vector<std::string> fence;
  // CREATE TABLE ... PARTITION OF / INHERITS a sharded table: the new table is part of it and
  // lives on every shard (PostgreSQL clones the parent's row triggers, the fence included).
  bool child_of_sharded = false;
  if (statement.node_type == "CreateStmt") {
    for (const parser::TableRef& table : statement.tables) {
      if (table.role == TableRole::Ddl && rules.find(table.schema, table.name) != nullptr) {
        child_of_sharded = true;
      }
    }
  }
  const bool creates_by_query = statement.node_type == "CreateTableAsStmt" ||
                                statement.node_type == "SelectStmt" || statement.node_type == "ViewStmt";
  for (const parser::TableRef& table : statement.tables) {
    if (is_system_table(table)) continue;
    const TableRule* rule = rules.find(table.schema, table.name);
    if (rule == nullptr) {
      const bool part_of_sharded = child_of_sharded && table.role == TableRole::Create;
      if (table.role != TableRole::Read && !part_of_sharded && unsharded == nullptr) {
        unsharded = &table;
      }
      continue;
    }
    if (table.role == TableRole::Read) {
      if (sharded_read == nullptr) sharded_read = &table;
      continue;
    }
    if (sharded == nullptr) {
      sharded = &table;
      sharded_rule = rule;
    }
    if (table.role == TableRole::Create && statement.node_type == "CreateStmt") {
      fence.push_back(rule->config_name);
    }
    if (table.role == TableRole::Create && creates_by_query) {
      return make_error("0A000",
                        "cannot create sharded table " + rule->config_name +
                            " from a query; CREATE TABLE it, then INSERT rows by key",
                        rule->config_name);
    }
  }
  if (!statement.complete && (sharded != nullptr || sharded_read != nullptr)) {
    return make_error("0A000", "statement on a sharded table is nested too deeply to route");
  }
  if (sharded_read != nullptr) {
    const TableRule* rule = rules.find(sharded_read->schema, sharded_read->name);
    return make_error("0A000",
                      "a query over sharded table " + rule->config_name +
                          " cannot define another object (its rows live on several "
                          "shards)",
                      rule->config_name);
  }
  if (sharded == nullptr) {
    if (statement.kind == parser::StatementKind::Copy) {
      return make_default(dir, rules, "COPY of an unsharded table");
    }
    return make_default(dir, rules, "no sharded table");
  }
  const std::string& name = sharded_rule->config_name;
  if (sharded->role == TableRole::CopyFrom || sharded->role == TableRole::CopyTo) {
    return make_error("0A000",
                      "COPY of sharded table " + name + " is not supported yet; use INSERT by key, or SELECT",
                      name);
  }
  if (sharded->role == TableRole::Lock) {
    return make_error("0A000", "LOCK TABLE of sharded table " + name + " would lock it on one shard only",
                      name);
  }
  if (unsharded != nullptr) {
    return make_error("0A000",
                      "statement names sharded table " + name + " and unsharded table " +
                          table_name(*unsharded) + "; run it separately for each",
                      name);
  }
  Route route;
  route.kind = RouteKind::AllShards;
  route.table = name;
  route.fence_tables = std::move(fence);
  route.reason =
      (sharded->role == TableRole::Maintenance ? "maintenance of sharded table " : "DDL on sharded table ") +
      name + ": every shard in turn (not atomic)";
  if (!route.fence_tables.empty()) route.reason += "; installs the fence trigger";
  return route;
}

}  // namespace sw::router::detail
