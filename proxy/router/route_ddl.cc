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
//  * DDL naming a reference table runs on every shard too; its TRUNCATE and COPY FROM are
//    writes, applied on every shard atomically (Route::reference_write).
//  * Mixing both in one statement, CREATE TABLE AS / SELECT INTO / CREATE VIEW over or into
//    a sharded table, LOCK of a sharded table and COPY of a sharded table are refused.
#include "router/router_internal.h"

namespace sw::router::detail {
namespace {

using parser::TableRole;

// The tables a DDL statement names, by what they mean for its route (system tables left out).
struct DdlTables {
  const parser::TableRef* sharded = nullptr;  // the first sharded table it creates, alters, ...
  const TableRule* sharded_rule = nullptr;
  const parser::TableRef* unsharded = nullptr;     // the first unsharded table it does not only read
  const parser::TableRef* sharded_read = nullptr;  // the first sharded table it only reads
  std::vector<std::string> fence;                  // configured sharded tables it creates
  const TableRule* created_by_query = nullptr;     // a sharded table CREATE TABLE AS & co. would make
  const parser::TableRef* reference = nullptr;     // the first reference table it does not only read
  const ReferenceRule* reference_rule = nullptr;
  bool reference_by_query = false;  // CREATE TABLE AS & co. would make a reference table
};

// CREATE TABLE ... PARTITION OF / INHERITS a sharded table: the new table is part of it and
// lives on every shard (PostgreSQL clones the parent's row triggers, the fence included).
bool creates_child_of_sharded(const parser::StatementFacts& statement, const RoutingRules& rules) {
  if (statement.node_type != "CreateStmt") return false;
  for (const parser::TableRef& table : statement.tables) {
    if (table.role == TableRole::Ddl && rules.find(table.schema, table.name) != nullptr) return true;
  }
  return false;
}

DdlTables classify(const parser::StatementFacts& statement, const RoutingRules& rules) {
  DdlTables out;
  const bool child_of_sharded = creates_child_of_sharded(statement, rules);
  const bool creates_by_query = statement.node_type == "CreateTableAsStmt" ||
                                statement.node_type == "SelectStmt" || statement.node_type == "ViewStmt";
  for (const parser::TableRef& table : statement.tables) {
    if (is_system_table(table)) continue;
    const TableRule* rule = rules.find(table.schema, table.name);
    const ReferenceRule* reference =
        rule == nullptr ? rules.find_reference(table.schema, table.name) : nullptr;
    if (reference != nullptr) {
      if (table.role == TableRole::Read || table.role == TableRole::CopyTo) continue;  // any shard has it
      if (table.role == TableRole::Create && creates_by_query) out.reference_by_query = true;
      if (out.reference == nullptr) {
        out.reference = &table;
        out.reference_rule = reference;
      }
      continue;
    }
    if (rule == nullptr) {
      const bool part_of_sharded = child_of_sharded && table.role == TableRole::Create;
      if (table.role != TableRole::Read && !part_of_sharded && out.unsharded == nullptr)
        out.unsharded = &table;
      continue;
    }
    if (table.role == TableRole::Read) {
      if (out.sharded_read == nullptr) out.sharded_read = &table;
      continue;
    }
    if (out.sharded == nullptr) {
      out.sharded = &table;
      out.sharded_rule = rule;
    }
    if (table.role == TableRole::Create && statement.node_type == "CreateStmt") {
      out.fence.push_back(rule->config_name);
    }
    if (table.role == TableRole::Create && creates_by_query) {
      out.created_by_query = rule;
      break;
    }
  }
  return out;
}

// A statement on sharded tables (and no unsharded one) runs on every shard, unless it is a COPY
// or a LOCK.
Route every_shard(DdlTables tables) {
  const std::string& name = tables.sharded_rule->config_name;
  const TableRole role = tables.sharded->role;
  if (role == TableRole::CopyFrom || role == TableRole::CopyTo) {
    return make_error("0A000",
                      "COPY of sharded table " + name + " is not supported yet; use INSERT by key, or SELECT",
                      name);
  }
  if (role == TableRole::Lock) {
    return make_error("0A000", "LOCK TABLE of sharded table " + name + " would lock it on one shard only",
                      name);
  }
  if (tables.unsharded != nullptr) {
    return make_error("0A000",
                      "statement names sharded table " + name + " and unsharded table " +
                          table_name(*tables.unsharded) + "; run it separately for each",
                      name);
  }
  Route route;
  route.kind = RouteKind::AllShards;
  route.table = name;
  route.fence_tables = std::move(tables.fence);
  route.reason =
      (role == TableRole::Maintenance ? "maintenance of sharded table " : "DDL on sharded table ") + name +
      ": every shard in turn (not atomic)";
  if (!route.fence_tables.empty()) route.reason += "; installs the fence trigger";
  return route;
}

// A statement that changes a reference table runs on every shard: TRUNCATE and COPY FROM are
// writes (atomic, Route::reference_write), other DDL and maintenance run in turn like a sharded
// table's.
Route reference_every_shard(const parser::StatementFacts& statement, DdlTables tables) {
  const std::string& name = tables.reference_rule->config_name;
  const TableRole role = tables.reference->role;
  if (tables.reference_by_query) {
    return make_error("0A000",
                      "cannot create reference table " + name +
                          " from a query; CREATE TABLE it, then INSERT its rows (they reach every shard)",
                      name);
  }
  if (tables.unsharded != nullptr) {
    return make_error("0A000",
                      "statement names reference table " + name + " and unsharded table " +
                          table_name(*tables.unsharded) + "; run it separately for each",
                      name);
  }
  if (role == TableRole::Lock) {
    return make_error("0A000", "LOCK TABLE of reference table " + name + " would lock it on one shard only",
                      name);
  }
  const bool writes = role == TableRole::CopyFrom || statement.node_type == "TruncateStmt";
  if (writes && tables.sharded != nullptr) {
    return make_error("0A000",
                      "statement writes reference table " + name + " and sharded table " +
                          tables.sharded_rule->config_name + "; run it separately for each",
                      name);
  }
  if (tables.sharded != nullptr) return every_shard(std::move(tables));
  Route route;
  route.kind = RouteKind::AllShards;
  route.table = name;
  route.reference_write = writes;
  route.reason = writes ? (role == TableRole::CopyFrom ? "COPY into" : "TRUNCATE of") +
                              std::string(" reference table ") + name + ": every shard, all or none"
                        : (role == TableRole::Maintenance ? "maintenance of reference table "
                                                          : "DDL on reference table ") +
                              name + ": every shard in turn (not atomic)";
  return route;
}

}  // namespace

Route route_ddl(const parser::StatementFacts& statement, const Directory& dir, const RoutingRules& rules) {
  DdlTables tables = classify(statement, rules);
  if (tables.created_by_query != nullptr) {
    const std::string& name = tables.created_by_query->config_name;
    return make_error(
        "0A000",
        "cannot create sharded table " + name + " from a query; CREATE TABLE it, then INSERT rows by key",
        name);
  }
  if (!statement.complete && (tables.sharded != nullptr || tables.sharded_read != nullptr)) {
    return make_error("0A000", "statement on a sharded table is nested too deeply to route");
  }
  if (tables.sharded_read != nullptr) {
    const TableRule* rule = rules.find(tables.sharded_read->schema, tables.sharded_read->name);
    return make_error("0A000",
                      "a query over sharded table " + rule->config_name +
                          " cannot define another object (its rows live on several shards)",
                      rule->config_name);
  }
  if (tables.reference != nullptr) return reference_every_shard(statement, std::move(tables));
  if (tables.sharded == nullptr) {
    if (statement.kind == parser::StatementKind::Copy) {
      return make_default(dir, rules, "COPY of an unsharded table");
    }
    return make_default(dir, rules, "no sharded table");
  }
  return every_shard(std::move(tables));
}

}  // namespace sw::router::detail
