// COPY routing: a sharded table's rows out to the client (every shard's copy, joined by the
// session), a keyless COPY (query) TO STDOUT, and COPY FROM STDIN into a sharded table (split by
// key in the session). docs/architecture.md §6.3.
#include <cctype>

#include "router/router_internal.h"

namespace sw::router {
namespace {

using parser::StatementKind;

// COPY ... TO STDOUT of a sharded table, or of a query that reads one without a key: every
// shard's copy, joined by the session into one (one header and trailer, `COPY n` with the total).
// To a file or program it would write one on every shard's server: refused.
Route copy_out(Route route, const parser::StatementFacts& statement) {
  if (!statement.copy_to_client) {
    return detail::make_error(
        "0A000",
        "COPY of sharded table " + route.table +
            " to a file or program would write one on every shard; use COPY ... TO STDOUT",
        route.table);
  }
  route.kind = RouteKind::Scatter;
  route.merge = nullptr;
  route.copy_out = true;
  route.copy_header = statement.copy_header;
  route.reason = "COPY of sharded table " + route.table + " to the client: every shard's rows in one copy";
  return route;
}

// The COPY every shard runs: its sharded tables read through owned_rows_splices. `COPY t [(cols)]
// TO STDOUT ...` becomes `COPY (SELECT cols|* FROM <owned t>) TO STDOUT ...`.
Route owned_copy(Route route, const parser::StatementFacts& statement, const RoutingRules& rules,
                 const Directory& dir, bool whole_table) {
  auto refuse = [&](const Status& why) {
    return detail::make_error("0A000", "COPY of sharded table " + route.table + ": " + why.message,
                              route.table);
  };
  std::vector<parser::TableSplice> splices = owned_rows_splices(statement, rules, dir.bucket_count());
  if (!whole_table) {
    auto sql = parser::splice_tables(statement, splices);
    if (!sql) return refuse(sql.status());
    route.shard_sql = std::move(sql.value());
    return route;
  }
  // The table's name span is replaced by a marker, then the marker and a column list after it
  // by the SELECT.
  const std::string marker = "\x01sw_owned_table\x01";
  for (parser::TableSplice& splice : splices) {
    splice.text.insert(0, marker);
    splice.text += marker;
  }
  auto sql = parser::splice_tables(statement, splices);
  if (!sql || splices.size() != 1)
    return refuse(sql ? Status::client("0A000", "not one table") : sql.status());
  std::string text = std::move(sql.value());
  const size_t open = text.find(marker);
  const size_t close = text.find(marker, open + marker.size());
  if (open == std::string::npos || close == std::string::npos)
    return refuse(Status::client("0A000", "no table"));
  const std::string from = text.substr(open + marker.size(), close - open - marker.size());
  size_t rest = close + marker.size();
  while (rest < text.size() && std::isspace(static_cast<unsigned char>(text[rest]))) ++rest;
  std::string columns = "*";
  if (rest < text.size() && text[rest] == '(') {
    const size_t end = text.find(')', rest);
    if (end == std::string::npos || text.find('"', rest) < end)
      return refuse(
          Status::client("0A000", "its column list could not be read; COPY (SELECT ...) TO STDOUT instead"));
    columns = text.substr(rest + 1, end - rest - 1);
    rest = end + 1;
    while (rest < text.size() && std::isspace(static_cast<unsigned char>(text[rest]))) ++rest;
  }
  route.shard_sql = text.substr(0, open) + "(SELECT " + columns + " FROM " + from + ") " + text.substr(rest);
  return route;
}

// COPY sharded_table FROM STDIN: every shard may get rows; the session splits them by key. From a
// file or program the server would read it on every shard: refused. Waits while a bucket is in
// cutover, like a scatter read (its rows may be among the client's).
Route copy_in(const TableRule& rule, const parser::StatementFacts& statement, const Directory& dir) {
  if (!statement.copy_from_client) {
    return detail::make_error("0A000",
                              "COPY of sharded table " + rule.config_name +
                                  " from a file or program would read it on every shard's server; use COPY "
                                  "... FROM STDIN (psql: \\copy)",
                              rule.config_name);
  }
  Route route;
  route.kind = RouteKind::Scatter;
  route.writes = true;
  route.copy_in = true;
  route.copy_rule = &rule;
  route.table = rule.config_name;
  route.reason = "COPY FROM STDIN into sharded table " + rule.config_name +
                 ": each row goes to the shard of its key " + rule.key;
  route.migrating = !dir.migrating().empty();
  route.buckets = dir.migrating();
  return route;
}

}  // namespace

namespace detail {

Route route_copy(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                 const RoutingRules& rules) {
  if (statement.query_kind == StatementKind::Copy) {
    const parser::TableRef* from = statement.tables.empty() ? nullptr : &statement.tables.front();
    if (from != nullptr && from->role == parser::TableRole::CopyFrom) {
      if (const TableRule* rule = rules.find(from->schema, from->name)) return copy_in(*rule, statement, dir);
    }
    const parser::TableRef* table = statement.tables.empty() ? nullptr : &statement.tables.front();
    const TableRule* rule = table != nullptr && table->role == parser::TableRole::CopyTo
                                ? rules.find(table->schema, table->name)
                                : nullptr;
    if (rule == nullptr) return detail::route_ddl(statement, dir, rules);
    Route route;
    route.table = rule->config_name;
    route = copy_out(std::move(route), statement);
    if (route.kind == RouteKind::Scatter && rules.owned_rows_only())
      route = owned_copy(std::move(route), statement, rules, dir, true);
    return route;
  }
  Route route = detail::route_dml(statement, params, dir, rules, Explain::Yes);  // COPY: off the data path
  if (route.kind == RouteKind::Scatter && (route.merge == nullptr || route.merge->relays_rows())) {
    route = copy_out(std::move(route), statement);
    if (route.kind == RouteKind::Scatter && rules.owned_rows_only())
      route = owned_copy(std::move(route), statement, rules, dir, false);
    return route;
  }
  if (route.kind == RouteKind::Scatter) {
    return detail::make_error("0A000",
                              "COPY (query) over sharded table " + route.table +
                                  " without a key needs its rows merged (" + route.merge->kind_name() +
                                  "), which COPY does not do; SELECT it instead",
                              route.table);
  }
  return route;
}

}  // namespace detail
}  // namespace sw::router
