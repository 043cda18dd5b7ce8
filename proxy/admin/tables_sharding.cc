#include "admin/tables.h"

namespace sw::admin {
namespace {
using T = ColumnType;
}

ResultTable shards_table(const config::Config& config, const router::Directory* directory,
                         const std::map<std::string, std::string>& superuser) {
  static constexpr Column kColumns[] = {{"name", T::Text},     {"host", T::Text},     {"port", T::Int4},
                                        {"database", T::Text}, {"buckets", T::Int4},  {"migrating", T::Int4},
                                        {"state", T::Text},    {"superuser", T::Text}};
  ResultTable table(kColumns);
  for (const auto& shard : config.shards) {
    int owned = 0;
    int migrating = 0;
    bool known = false;
    if (directory != nullptr) {
      int index = directory->shard_index(shard.name);
      known = index >= 0;
      for (uint32_t b = 0; known && b < directory->bucket_count(); ++b) {
        const auto& entry = directory->bucket(b);
        if (entry.shard != index) continue;
        ++owned;
        if (entry.state == router::BucketState::Migrating) ++migrating;
      }
    }
    // "new": configured but not in the directory yet (added to the file, not yet given buckets);
    // "empty": in the directory without buckets (added by RELOAD, or drained).
    std::string state = !known ? "new" : migrating > 0 ? "migrating" : owned > 0 ? "serving" : "empty";
    auto login = superuser.find(shard.name);
    table.add({text(shard.name), text(shard.conn.host), number(shard.conn.port), text(shard.conn.dbname),
               number(owned), number(migrating), text(state),
               login == superuser.end() ? Value() : text(login->second)});
  }
  // Shards only the catalog names: their buckets are refused until the config lists them.
  for (uint16_t i = directory != nullptr ? directory->configured_count() : 0;
       directory != nullptr && i < directory->shards().size(); ++i) {
    int migrating = 0;
    for (uint32_t b = 0; b < directory->bucket_count(); ++b) {
      const auto& entry = directory->bucket(b);
      migrating += entry.shard == i && entry.state == router::BucketState::Migrating ? 1 : 0;
    }
    table.add({text(directory->shard_name(i)), Value(), Value(), Value(),
               number(static_cast<int64_t>(directory->owned_by(i))), number(migrating),
               text("not configured"), Value()});
  }
  return table;
}

Result<ResultTable> buckets_table(const router::Directory& directory, std::string_view shard) {
  static constexpr Column kColumns[] = {
      {"bucket", T::Int4}, {"shard", T::Text}, {"state", T::Text}, {"version", T::Int8}};
  int only = -1;
  if (!shard.empty()) {
    only = directory.shard_index(shard);
    if (only < 0)
      return Status::client("42704",
                            "shard \"" + std::string(shard) + "\" is not in the directory; see SHOW SHARDS");
  }
  ResultTable table(kColumns);
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) {
    const auto& entry = directory.bucket(b);
    if (only >= 0 && entry.shard != only) continue;
    table.add({number(static_cast<int64_t>(b)), text(directory.shard_name(entry.shard)),
               text(router::bucket_state_name(entry.state)), number(entry.version)});
  }
  return table;
}

ResultTable directory_table(const DirectoryStatus& status) {
  static constexpr Column kColumns[] = {
      {"version", T::Int8}, {"source", T::Text},  {"loaded_at", T::Text}, {"age_seconds", T::Float8},
      {"lease", T::Text},   {"buckets", T::Int4}, {"shards", T::Int4}};
  ResultTable table(kColumns);
  const router::Directory* d = status.directory.get();
  double age =
      status.loaded_at_us == 0 ? 0 : static_cast<double>(stats::wall_clock_us() - status.loaded_at_us) / 1e6;
  table.add({d ? number(d->version()) : Value(), text(status.source), timestamp(status.loaded_at_us),
             decimal(age), text(status.lease_valid ? "valid" : "expired"),
             d ? number(static_cast<int64_t>(d->bucket_count())) : Value(),
             d ? number(static_cast<int64_t>(d->shards().size())) : Value()});
  return table;
}

ResultTable routers_table(const std::vector<catalog::RegisteredRouter>& routers) {
  static constexpr Column kColumns[] = {{"id", T::Text},
                                        {"host", T::Text},
                                        {"port", T::Int4},
                                        {"pid", T::Int4},
                                        {"directory_version", T::Int8},
                                        {"started_at", T::Text},
                                        {"heartbeat_at", T::Text},
                                        {"heartbeat_age_seconds", T::Float8}};
  ResultTable table(kColumns);
  for (const auto& r : routers) {
    table.add({text(r.id), text(r.host), number(r.port), number(r.pid), number(r.directory_version),
               text(r.started_at), text(r.heartbeat_at), decimal(r.heartbeat_age_seconds)});
  }
  return table;
}

ResultTable id_slots_table(const std::vector<catalog::IdSlot>& slots) {
  static constexpr Column kColumns[] = {{"shard", T::Text},         {"slot", T::Int4},
                                        {"bigint_first", T::Int8},  {"bigint_last", T::Int8},
                                        {"integer_first", T::Int8}, {"integer_last", T::Int8},
                                        {"assigned_at", T::Text}};
  ResultTable table(kColumns);
  for (const auto& s : slots) {
    auto first = [](const std::optional<sqltext::IdRange>& r) { return r ? number(r->first) : Value(); };
    auto last = [](const std::optional<sqltext::IdRange>& r) { return r ? number(r->last) : Value(); };
    table.add({text(s.shard), number(static_cast<int64_t>(s.slot)), first(s.bigint_range),
               last(s.bigint_range), first(s.integer_range), last(s.integer_range), text(s.assigned_at)});
  }
  return table;
}

ResultTable route_table(const router::Route& route, const router::Directory& directory) {
  static constexpr Column kColumns[] = {
      {"kind", T::Text},   {"shard", T::Text},  {"buckets", T::Text},           {"table", T::Text},
      {"writes", T::Bool}, {"reason", T::Text}, {"directory_version", T::Int8}, {"summary", T::Text}};
  ResultTable table(kColumns);
  std::string buckets;
  for (uint32_t b : route.buckets) {
    if (!buckets.empty()) buckets += ',';
    buckets += std::to_string(b);
  }
  bool one_shard = route.shard >= 0 && route.shard < static_cast<int>(directory.shards().size());
  std::string reason = route.kind == router::RouteKind::Error
                           ? route.error.sqlstate + " " + route.error.message
                           : route.reason;
  if (route.insert_select) reason += "; each shard runs: " + route.shard_sql;  // with its owned-rows splice
  if (route.split) {  // a split INSERT: what each shard runs
    for (const router::InsertSplit::Part& part : route.split->parts)
      reason += "; " + directory.shard_name(static_cast<uint16_t>(part.shard)) + " runs: " + part.sql;
  }
  table.add({text(router::route_kind_name(route.kind)),
             one_shard ? text(directory.shard_name(static_cast<uint16_t>(route.shard))) : Value(),
             text(buckets), text(route.table), text(route.writes ? "t" : "f"), text(reason),
             number(directory.version()), text(router::route_summary(route, directory))});
  return table;
}

ResultTable transactions_table(const std::vector<twopc::InDoubtTransaction>& rows) {
  static constexpr Column kColumns[] = {{"gid", T::Text},     {"shard", T::Text},    {"prepared", T::Text},
                                        {"age_s", T::Float8}, {"decision", T::Text}, {"owner", T::Text}};
  ResultTable table(kColumns);
  for (const auto& r : rows) {
    table.add({text(r.gid), text(r.shard), text(r.prepared), decimal(r.age_s), text(r.decision),
               r.owner.empty() ? Value() : text(r.owner)});
  }
  return table;
}

}  // namespace sw::admin
