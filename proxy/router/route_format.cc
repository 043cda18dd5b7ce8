// Route rendering for golden files, `shardwire route` and SHOW ROUTE.
#include "router/router.h"

namespace sw::router {
namespace {

std::string all_shards(const Directory& dir) {
  std::string out;
  for (const std::string& shard : dir.shards()) out += (out.empty() ? "" : ",") + shard;
  return out;
}

}  // namespace

const char* route_kind_name(RouteKind kind) {
  switch (kind) {
    case RouteKind::Shard: return "shard";
    case RouteKind::Default: return "default";
    case RouteKind::Scatter: return "scatter";
    case RouteKind::AllShards: return "all-shards";
    case RouteKind::Session: return "session";
    case RouteKind::AtBind: return "at-bind";
    case RouteKind::Split: return "split";
    case RouteKind::Error: return "error";
  }
  return "?";
}

std::string route_summary(const Route& route, const Directory& dir) {
  std::string out = route_kind_name(route.kind);
  switch (route.kind) {
    case RouteKind::Shard:
    case RouteKind::Default:
      if (route.shard >= 0 && route.shard < static_cast<int>(dir.shards().size())) {
        out += " " + dir.shard_name(static_cast<uint16_t>(route.shard));
      }
      if (route.kind == RouteKind::Shard) {
        out += " buckets ";
        for (size_t i = 0; i < route.buckets.size(); ++i) {
          if (i) out += ',';
          out += std::to_string(route.buckets[i]);
        }
        if (route.migrating) out += " migrating";
      }
      if (route.any_shard) out += " any-shard";
      break;
    case RouteKind::Scatter:
    case RouteKind::AllShards:
      if (route.scatter_write()) {
        std::string shards;
        for (int shard : route.shards)
          shards += (shards.empty() ? "" : ",") + dir.shard_name(static_cast<uint16_t>(shard));
        out += " " + shards +
               (route.insert_select   ? " insert-select"
                : route.keyless_write ? " keyless-write"
                                      : " split-write");
      } else if (route.merge && !route.merge->shard_statements.empty()) {
        std::string shards;
        for (const merge::ShardStatement& statement : route.merge->shard_statements)
          shards += (shards.empty() ? "" : ",") + dir.shard_name(static_cast<uint16_t>(statement.shard));
        out += " " + shards;
      } else {
        out += ' ';
        out += all_shards(dir);
      }
      if (route.merge) {
        out += ' ';
        out += route.merge->describe();
      }
      if (route.copy_out) out += route.copy_header ? " copy csv-header" : " copy";
      if (route.copy_in) out += " copy-in";
      if (route.migrating && route.split_write && !route.keyless_write) out += " migrating";
      if (route.migrating && (!route.split_write || route.keyless_write))
        out += " waits-for-cutover " + std::to_string(route.buckets.front());
      if (route.reference_write) out += " reference-write " + route.table;
      if (!route.fence_tables.empty()) {
        out += " fence";
        for (const std::string& table : route.fence_tables) out += " " + table;
      }
      break;
    case RouteKind::Split:
      // "split s0 rows 1,3 s1 rows 2" (rows 1-based, as in the VALUES list)
      for (const InsertSplit::Part& part : route.split->parts) {
        out += " " + dir.shard_name(static_cast<uint16_t>(part.shard)) + " rows ";
        for (size_t i = 0; i < part.rows.size(); ++i) {
          if (i) out += ',';
          out += std::to_string(part.rows[i] + 1);
        }
      }
      if (route.migrating) out += " migrating";
      break;
    case RouteKind::Error: out += " " + route.error.sqlstate + " " + route.error.message; break;
    case RouteKind::Session:
    case RouteKind::AtBind: break;
  }
  return out;
}

std::string describe_route(const Route& route, const Directory& dir) {
  std::string out = route_summary(route, dir);
  if (route.kind == RouteKind::Shard && !route.buckets.empty()) {
    out += " (";
    for (size_t i = 0; i < route.buckets.size() && i < 16; ++i) {
      const uint32_t bucket = route.buckets[i];
      out += (i ? ", " : "") + std::string("bucket ") + std::to_string(bucket) + " " +
             bucket_state_name(dir.bucket(bucket).state);
    }
    if (route.buckets.size() > 16) out += ", ...";
    out += ")";
  }
  if (route.kind != RouteKind::Error && !route.reason.empty()) out += "; " + route.reason;
  if (route.merge && route.merge->shard_statements.empty())
    out += "; each shard runs: " + route.merge->shard_sql;
  if (route.insert_select) out += "; each shard runs: " + route.shard_sql;
  if (route.merge) {
    for (const merge::ShardStatement& statement : route.merge->shard_statements)
      out += "; " + dir.shard_name(static_cast<uint16_t>(statement.shard)) + " runs: " + statement.sql;
  }
  for (const merge::ShardStatement& statement : route.shard_statements)
    out += "; " + dir.shard_name(static_cast<uint16_t>(statement.shard)) + " runs: " + statement.sql;
  if (route.split) {
    for (const InsertSplit::Part& part : route.split->parts)
      out += "; " + dir.shard_name(static_cast<uint16_t>(part.shard)) + " runs: " + part.sql;
  }
  if (route.writes) out += "; writes";
  out += "; directory version " + std::to_string(route.directory_version);
  return out;
}

}  // namespace sw::router
