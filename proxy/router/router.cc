// RoutingRules; route() and route_query(): dispatch on the statement kind; shared helpers.
//
// Kinds that need no shard (Session): transaction control, SET/RESET/DISCARD/SHOW, SQL-level
// PREPARE/EXECUTE/DEALLOCATE (not routed by key: the caller keeps them on the session's or the
// transaction's backend), FETCH/CLOSE/MOVE of a cursor, SET CONSTRAINTS, the empty query.
// LISTEN/UNLISTEN/NOTIFY go to the default shard, so that they meet. DO, CALL, CHECKPOINT and
// other utilities cannot be seen into: default shard.
#include <algorithm>

#include "router/router_internal.h"

namespace sw::router {

RoutingRules::RoutingRules(std::vector<TableRule> tables, std::string default_shard, std::string config_file,
                           bool owned_rows_only, std::vector<ReferenceRule> references)
    : tables_(std::move(tables)),
      references_(std::move(references)),
      default_shard_(std::move(default_shard)),
      config_file_(std::move(config_file)),
      owned_rows_only_(owned_rows_only) {}

Result<RoutingRules> RoutingRules::from_config(const config::Sharding& sharding, std::string config_file,
                                               bool owned_rows_only) {
  std::vector<TableRule> tables;
  for (size_t i = 0; i < sharding.tables.size(); ++i) {
    const config::ShardedTable& table = sharding.tables[i];
    TableRule rule;
    rule.config_name = table.name;
    const size_t dot = table.name.rfind('.');
    if (dot == std::string::npos) {
      rule.name = table.name;
    } else {
      rule.schema = table.name.substr(0, dot);
      rule.name = table.name.substr(dot + 1);
    }
    rule.key = table.key;
    Result<KeyType> type = key_type_from_name(table.type);
    if (!type.is_ok()) {
      return Status::config("sharding.tables[" + std::to_string(i) + "] (" + table.name +
                            "): " + type.status().message);
    }
    rule.key_type = type.value();
    tables.push_back(std::move(rule));
  }
  std::vector<ReferenceRule> references;
  for (const std::string& configured : sharding.reference_tables) {
    ReferenceRule reference;
    reference.config_name = configured;
    const size_t dot = configured.rfind('.');
    reference.name = dot == std::string::npos ? configured : configured.substr(dot + 1);
    if (dot != std::string::npos) reference.schema = configured.substr(0, dot);
    references.push_back(std::move(reference));
  }
  return RoutingRules(std::move(tables), sharding.default_shard, std::move(config_file), owned_rows_only,
                      std::move(references));
}

const ReferenceRule* RoutingRules::find_reference(std::string_view schema, std::string_view name) const {
  for (const ReferenceRule& reference : references_) {
    if (reference.name != name) continue;
    if (schema.empty() || reference.schema.empty() || reference.schema == schema) return &reference;
  }
  return nullptr;
}

const TableRule* RoutingRules::find(std::string_view schema, std::string_view name) const {
  for (const TableRule& rule : tables_) {
    if (rule.name != name) continue;
    if (schema.empty() || rule.schema.empty() || rule.schema == schema) return &rule;
  }
  return nullptr;
}

namespace detail {

bool is_system_table(const parser::TableRef& table) {
  if (table.schema == "pg_catalog" || table.schema == "information_schema" ||
      table.schema.rfind("pg_", 0) == 0) {
    return true;
  }
  return table.schema.empty() && table.name.rfind("pg_", 0) == 0;
}

std::string table_name(const parser::TableRef& table) {
  return table.schema.empty() ? table.name : table.schema + "." + table.name;
}

const char* statement_verb(const parser::StatementFacts& statement) {
  switch (statement.query_kind) {
    case parser::StatementKind::Select: return "SELECT";
    case parser::StatementKind::Insert: return "INSERT";
    case parser::StatementKind::Update: return "UPDATE";
    case parser::StatementKind::Delete: return "DELETE";
    case parser::StatementKind::Merge: return "MERGE";
    default: return "statement";
  }
}

Route make_error(std::string sqlstate, std::string message, std::string table) {
  Route route;
  route.kind = RouteKind::Error;
  route.error = Status::client(std::move(sqlstate), std::move(message));
  route.reason = route.error.message;
  route.table = std::move(table);
  return route;
}

// One named Route on both paths: it is built in the caller's (no move).
Route make_default(const Directory& dir, const RoutingRules& rules, std::string reason) {
  const int shard = dir.shard_index(rules.default_shard());
  Route route;
  if (shard < 0) {
    route = make_error("XX000", "default shard " + rules.default_shard() + " is not in the directory");
    route.error.fault = Fault::Proxy;
    return route;
  }
  route.kind = RouteKind::Default;
  route.shard = shard;
  route.reason = std::move(reason);
  return route;
}

std::string shard_names(const Directory& dir, const std::vector<int>& shards) {
  std::string out;
  for (int shard : shards) {
    if (!out.empty()) out += ", ";
    out += dir.shard_name(static_cast<uint16_t>(shard));
  }
  return out;
}

SpareRouteBuffers& spare_route_buffers() {
  thread_local SpareRouteBuffers spare;
  return spare;
}

}  // namespace detail

void recycle(Route& route) {
  // Most routes have neither (unkeyed, or a name in the string's inline buffer): one compare.
  if (route.buckets.capacity() == 0 && route.table.capacity() <= std::string().capacity()) return;
  detail::SpareRouteBuffers& spare = detail::spare_route_buffers();
  if (spare.buckets.capacity() == 0 && route.buckets.capacity() <= kMaxRecycledBuckets)
    spare.buckets = std::move(route.buckets);
  if (spare.table.capacity() < route.table.capacity()) spare.table = std::move(route.table);
  route.buckets.clear();
  route.table.clear();
}

namespace {

using parser::StatementKind;

Route session_route(std::string reason) {
  Route route;
  route.kind = RouteKind::Session;
  route.reason = std::move(reason);
  return route;
}

Route route_utility(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                    const RoutingRules& rules, Explain explain) {
  const std::string& node = statement.node_type;
  if (node == "VariableShowStmt" || node == "VariableSetStmt" || node == "FetchStmt" ||
      node == "ClosePortalStmt" || node == "ConstraintsSetStmt") {
    return session_route(detail::explained(explain, "session or transaction statement: no shard needed"));
  }
  if (node == "ExplainStmt" || node == "DeclareCursorStmt") {
    if (statement.query_kind == StatementKind::Utility) {
      return detail::make_default(dir, rules, "EXPLAIN of a utility statement");
    }
    Route route = detail::route_dml(statement, params, dir, rules, explain);
    if (route.kind == RouteKind::Scatter && node == "DeclareCursorStmt") {
      return detail::make_error(
          "0A000",
          "DECLARE CURSOR over several shards runs only inside a transaction block, or WITH HOLD: " +
              route.table +
              " has no key value on one shard; declare it after BEGIN or WITH HOLD, add the key, or "
              "run the SELECT itself (merged) instead",
          route.table);
    }
    return route;
  }
  if (node == "VacuumStmt" || node == "ReindexStmt" || node == "LockStmt") {
    return detail::route_ddl(statement, dir, rules);
  }
  return detail::make_default(dir, rules, "utility statement: default shard");
}

Route route_kind(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                 const RoutingRules& rules, Explain explain) {
  switch (statement.kind) {
    case StatementKind::Select:
    case StatementKind::Insert:
    case StatementKind::Update:
    case StatementKind::Delete:
    case StatementKind::Merge: return detail::route_dml(statement, params, dir, rules, explain);
    case StatementKind::Ddl: return detail::route_ddl(statement, dir, rules);
    case StatementKind::Copy: return detail::route_copy(statement, params, dir, rules);
    case StatementKind::Utility: return route_utility(statement, params, dir, rules, explain);
    case StatementKind::Listen:
    case StatementKind::Unlisten:
    case StatementKind::Notify:
      return detail::make_default(dir, rules, "notifications use the default shard");
    case StatementKind::Empty:
      return session_route(detail::explained(explain, "empty query: no shard needed"));
    default:
      return session_route(
          detail::explained(explain, "transaction control or session statement: no shard needed"));
  }
}

// The first bucket of `shard` among `buckets` (all of them when empty).
uint32_t first_bucket_on(const Directory& dir, uint16_t shard, const std::vector<uint32_t>& buckets) {
  for (uint32_t b : buckets) {
    if (dir.bucket(b).shard == shard) return b;
  }
  for (uint32_t b = 0; b < dir.bucket_count(); ++b) {
    if (dir.bucket(b).shard == shard) return b;
  }
  return 0;
}

// A route that needs a shard the directory names but the config lacks becomes an error that
// names the shard and the fix; routes on configured shards are left unchanged (in place: a
// Route is a large object, and moving it in and out cost as much as routing a keyed statement).
void refuse_unconfigured(Route& route, const Directory& dir, const RoutingRules& rules) {
  int missing = -1;
  if ((route.kind == RouteKind::Shard || route.kind == RouteKind::Default) && route.shard >= 0 &&
      !dir.configured(static_cast<uint16_t>(route.shard))) {
    missing = route.shard;
  } else if ((route.kind == RouteKind::Scatter || route.kind == RouteKind::AllShards) &&
             !dir.all_configured()) {
    missing = dir.configured_count();
  } else if (route.kind == RouteKind::Split) {
    for (const InsertSplit::Part& part : route.split->parts) {
      if (!dir.configured(static_cast<uint16_t>(part.shard))) missing = part.shard;
    }
  }
  if (missing < 0) return;
  const auto shard = static_cast<uint16_t>(missing);
  const std::string& name = dir.shard_name(shard);
  const uint32_t bucket =
      first_bucket_on(dir, shard, route.kind == RouteKind::Shard ? route.buckets : std::vector<uint32_t>{});
  Route error = detail::make_error("F0000", "", route.table);
  error.error = Status::config(
      "bucket " + std::to_string(bucket) + " is on shard \"" + name +
      "\", which is not in this instance's configuration: add shard " + name + " to shards in " +
      (rules.config_file().empty() ? "the config file" : rules.config_file()) + " and RELOAD");
  error.reason = error.error.message;
  route = std::move(error);
}

}  // namespace

namespace {

// A read of every bucket waits while one is in cutover: between the source's fence and the
// target's unfence both shards fence the bucket, so neither would return its rows.
void hold_scatter_read(Route& route, const Directory& dir) {
  if (route.kind != RouteKind::Scatter || route.writes || !route.fence_tables.empty()) return;
  if (route.merge && !route.merge->shard_statements.empty()) return;  // key lists: their own buckets
  if (dir.migrating().empty()) return;
  route.migrating = true;
  route.buckets.insert(route.buckets.end(), dir.migrating().begin(), dir.migrating().end());
}

}  // namespace

std::string owned_row_condition(const TableRule& rule, const std::string& qualifier, uint32_t bucket_count) {
  auto quoted = [](const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + '"';
  };
  return "NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets sw_fenced WHERE sw_fenced.bucket = "
         "shardwire.bucket_of(" +
         qualifier + "." + quoted(rule.key) + "::" + key_type_name(rule.key_type) + ", " +
         std::to_string(bucket_count) + ") AND sw_fenced.holds_rows)";
}

std::vector<parser::TableSplice> owned_rows_splices(const parser::StatementFacts& statement,
                                                    const RoutingRules& rules, uint32_t bucket_count) {
  std::vector<parser::TableSplice> splices;
  if (!rules.owned_rows_only()) return splices;
  for (size_t i = 0; i < statement.tables.size(); ++i) {
    const parser::TableRef& table = statement.tables[i];
    const TableRule* rule = rules.find(table.schema, table.name);
    if (rule == nullptr) continue;
    std::string text =
        "(SELECT * FROM {name} sw_owned WHERE " + owned_row_condition(*rule, "sw_owned", bucket_count) + ")";
    if (table.alias.empty()) text += " AS {last}";
    splices.push_back({static_cast<int>(i), std::move(text)});
  }
  return splices;
}

namespace {

Route out_of_memory() {
  Route out = detail::make_error("53200", "out of memory while routing");
  out.error.fault = Fault::Proxy;
  return out;
}

// route_kind() and refuse_unconfigured(), built in the caller's Route (no move of it).
Route decide(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
             const RoutingRules& rules, Explain explain) {
  try {
    Route out = route_kind(statement, params, dir, rules, explain);
    refuse_unconfigured(out, dir, rules);
    return out;
  } catch (...) {  // allocation failure: the router itself never throws
    return out_of_memory();
  }
}

}  // namespace

Route route(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
            const RoutingRules& rules, Explain explain) {
  Route out = decide(statement, params, dir, rules, explain);
  out.writes = statement.writes;
  out.directory_version = dir.version();
  hold_scatter_read(out, dir);
  return out;
}

namespace {

Route combine_statements(const parser::QueryFacts& query, const BindValues* params, const Directory& dir,
                         const RoutingRules& rules, Explain explain) {
  Route combined = session_route(detail::explained(explain, "only session statements: no shard needed"));
  combined.directory_version = dir.version();
  size_t decided_by = 0;  // 1-based statement number that fixed the shard
  for (size_t i = 0; i < query.statements.size(); ++i) {
    Route next = route(query.statements[i], params, dir, rules, explain);
    const std::string number = "statement " + std::to_string(i + 1);
    if (next.kind == RouteKind::Error || next.kind == RouteKind::AtBind) {
      if (next.kind == RouteKind::Error) next.error.message = number + ": " + next.error.message;
      next.reason = next.error.message;
      return next;
    }
    if (next.kind == RouteKind::Session) continue;
    if (next.kind == RouteKind::Scatter || next.kind == RouteKind::AllShards ||
        next.kind == RouteKind::Split) {
      Route error = detail::make_error("0A000",
                                       "multi-statement query: " + number + " runs on every shard (" +
                                           next.reason + "); send it as a query of its own",
                                       next.table);
      error.directory_version = dir.version();
      return error;
    }
    if (combined.kind == RouteKind::Session) {
      combined = std::move(next);
      decided_by = i + 1;
      continue;
    }
    if (next.shard != combined.shard) {
      Route error = detail::make_error(
          "0A000",
          "multi-statement query spans shards: statement " + std::to_string(decided_by) + " goes to " +
              dir.shard_name(static_cast<uint16_t>(combined.shard)) + ", " + number + " to " +
              dir.shard_name(static_cast<uint16_t>(next.shard)) + "; send them separately",
          next.table.empty() ? combined.table : next.table);
      error.directory_version = dir.version();
      return error;
    }
    // Same shard: one Shard route covering every statement's buckets.
    if (next.kind == RouteKind::Shard) {
      combined.kind = RouteKind::Shard;
      combined.buckets.insert(combined.buckets.end(), next.buckets.begin(), next.buckets.end());
      std::sort(combined.buckets.begin(), combined.buckets.end());
      combined.buckets.erase(std::unique(combined.buckets.begin(), combined.buckets.end()),
                             combined.buckets.end());
      if (combined.table.empty()) combined.table = next.table;
      combined.reason = next.reason;
    }
    combined.writes = combined.writes || next.writes;
    combined.migrating = combined.migrating || next.migrating;
  }
  return combined;
}

}  // namespace

Route route_query(const parser::QueryFacts& query, const BindValues* params, const Directory& dir,
                  const RoutingRules& rules, Explain explain) {
  if (query.statements.size() == 1) return route(query.statements[0], params, dir, rules, explain);
  try {
    return combine_statements(query, params, dir, rules, explain);
  } catch (...) {  // allocation failure
    return out_of_memory();
  }
}

}  // namespace sw::router
