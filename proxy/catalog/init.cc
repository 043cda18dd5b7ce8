#include "catalog/init.h"

#include <cstdio>

#include "catalog/directory_loader.h"
#include "catalog/init_ids.h"
#include "catalog/pq.h"
#include "catalog/reference_tables.h"
#include "common/log.h"
#include "sqltext/catalog_sql.h"

namespace sw::catalog {
namespace {

Status with_context(const Status& s, const std::string& context) {
  return Status{s.fault, s.sqlstate, context + ": " + s.message};
}

// BEGIN + advisory lock + a bound on lock waits (a trigger creation waits for open transactions).
Status begin_locked(PGconn* conn) {
  Status s = exec(conn, "BEGIN");
  if (s) s = exec(conn, sqltext::kInitLockSql);
  if (s) s = exec(conn, "SET LOCAL lock_timeout = '30s'");
  return s;
}

Result<bool> relation_exists(PGconn* conn, const std::string& name) {
  auto res = query(conn, "SELECT to_regclass($1) IS NOT NULL", {name});
  if (!res) return res.status();
  return text_value(res->get(), 0, 0) == "t";
}

Status init_catalog_schema(PGconn* conn, InitReport& report) {
  Status s = begin_locked(conn);
  if (!s) return s;
  auto existed = relation_exists(conn, "shardwire.buckets");
  if (!existed) return existed.status();
  report.catalog_created = !*existed;
  if (!(s = exec(conn, sqltext::catalog_schema_sql()))) return s;
  return exec(conn, "COMMIT");
}

Result<std::shared_ptr<const router::Directory>> init_directory(PGconn* conn, const config::Config& config,
                                                                InitReport& report) {
  Status s = begin_locked(conn);
  if (!s) return s;
  auto before = query(conn, "SELECT count(*) FROM shardwire.buckets");
  if (!before) return before.status();
  if (text_value(before->get(), 0, 0) == "0") {
    auto ins = query(conn, sqltext::kInitialDirectorySql,
                     {std::to_string(config.sharding.buckets), text_array_literal(config.shard_names())});
    if (!ins) return ins.status();
    report.directory_created = true;
  }
  auto slots = assign_id_slots(conn, config.shard_names());
  if (!slots) return slots.status();
  report.id_slots = std::move(*slots);
  auto dir = load_directory(conn, config);
  if (!dir) return dir.status();
  // Initializing shards for a config that lacks one the directory uses would leave that shard's
  // buckets unserved: the config is wrong.
  for (const std::string& missing : unconfigured_shards(**dir)) {
    for (uint32_t b = 0; b < (*dir)->bucket_count(); ++b) {
      if ((*dir)->shard_name((*dir)->bucket(b).shard) != missing) continue;
      return Status::config("the catalog directory puts bucket " + std::to_string(b) + " on shard \"" +
                            missing + "\", which is not in the config's shards");
    }
  }
  if (!(s = exec(conn, "COMMIT"))) return s;
  return dir;
}

// Bounds the sequences of every configured sharded table that exists on the shard to its id range
// before the fence is installed (install_fence would do it too, without telling what it did).
Status init_id_ranges(PGconn* c, const config::Config& config, uint32_t slot, ShardInitReport& out) {
  const std::string what = "shard " + out.name;
  if (Status s = record_id_slot(c, out.name, slot); !s) return with_context(s, what);
  out.id_slot = slot;
  for (const config::ShardedTable& table : config.sharding.tables) {
    auto exists = relation_exists(c, table.name);
    if (!exists) return with_context(exists.status(), what + ": looking up table " + table.name);
    if (!*exists) continue;
    auto ranges = assign_id_ranges(c, table.name);
    if (!ranges)
      return with_context(ranges.status(),
                          what + ": giving the sequences of " + table.name + " its id range");
    for (auto& line : ranges->lines) out.sequences.push_back(std::move(line));
    for (auto& warning : ranges->warnings) out.warnings.push_back(std::move(warning));
  }
  auto prepared = prepared_transactions_warning(c, out.name);
  if (!prepared) return with_context(prepared.status(), what);
  if (!prepared->empty()) out.warnings.push_back(*prepared);
  return Status::ok();
}

// The fences this run made say "no rows" (kFenceBucketsSql); in the same transaction, those whose
// buckets hold rows in a sharded table already there say true (scatter reads skip those rows).
Status mark_fences_holding_rows(PGconn* c, const std::vector<const config::ShardedTable*>& tables,
                                uint32_t bucket_count, const std::string& what) {
  for (const config::ShardedTable* table : tables) {
    auto sql = sqltext::mark_fences_holding_rows_sql(*table, bucket_count);
    if (!sql) return with_context(sql.status(), what);
    if (Status s = exec(c, *sql); !s)
      return with_context(s, what + ": looking for rows of fenced buckets in " + table->name);
  }
  return Status::ok();
}

Status init_shard(const config::Config& config, size_t shard_index, const router::Directory& dir,
                  uint32_t id_slot, ShardInitReport& out) {
  const config::Shard& shard = config.shards[shard_index];
  const std::string what = "shard " + shard.name;
  out.name = shard.name;
  auto conn = connect(shard.dsn, what, {.application_name = "shardwire init"});
  if (!conn) return conn.status();
  PGconn* c = conn->get();
  Status s = begin_locked(c);
  if (!s) return with_context(s, what);
  auto existed = relation_exists(c, "shardwire.fenced_buckets");
  if (!existed) return with_context(existed.status(), what);
  if (!(s = exec(c, sqltext::shard_schema_sql())))
    return with_context(s, what + ": creating schema shardwire");
  if (!*existed) {
    out.schema_created = true;
    std::vector<int> fenced;
    for (uint32_t b = 0; b < dir.bucket_count(); ++b) {
      if (dir.bucket(b).shard != shard_index) fenced.push_back(static_cast<int>(b));
    }
    auto res = query(c, sqltext::kFenceBucketsSql,
                     {sqltext::int_array_literal(fenced), std::to_string(dir.version())});
    if (!res) return with_context(res.status(), what + ": fencing buckets it does not own");
    int64_t added = 0;
    parse_int64(PQcmdTuples(res->get()), &added);
    out.buckets_fenced = added;
  }
  if (!(s = init_id_ranges(c, config, id_slot, out))) return s;
  std::vector<const config::ShardedTable*> existing;
  for (const config::ShardedTable& table : config.sharding.tables) {
    auto exists = relation_exists(c, table.name);
    if (!exists) return with_context(exists.status(), what + ": looking up table " + table.name);
    if (!*exists) {
      LOG_INFO(
          "init: %s: table %s does not exist yet; its fence is installed when it is created through "
          "shardwire",
          shard.name.c_str(), table.name.c_str());
      out.missing_tables.push_back(table.name);
      continue;
    }
    auto res = query(c, sqltext::kInstallFenceSql,
                     {table.name, table.key, table.type, std::to_string(config.sharding.buckets)});
    if (!res) return with_context(res.status(), what + ": installing the fence on " + table.name);
    out.fences.push_back(table.name + ": " + text_value(res->get(), 0, 0));
    existing.push_back(&table);
  }
  if (out.schema_created && !(s = mark_fences_holding_rows(c, existing, dir.bucket_count(), what))) return s;
  if (!(s = exec(c, "COMMIT"))) return with_context(s, what);
  return Status::ok();
}

// Step 5: every reference table's copy on every other shard brought up to the default shard's.
Status init_reference_tables(const config::Config& config, InitReport& report) {
  if (config.sharding.reference_tables.empty() || config.shards.size() < 2) return Status::ok();
  const config::Shard* source = config.find_shard(config.sharding.default_shard);
  if (source == nullptr) return Status::config("sharding.default_shard names no configured shard");
  auto from = connect(source->dsn, "shard " + source->name, {.application_name = "shardwire init"});
  if (!from) return from.status();
  for (const config::Shard& shard : config.shards) {
    if (shard.name == source->name) continue;
    auto to = connect(shard.dsn, "shard " + shard.name, {.application_name = "shardwire init"});
    if (!to) return to.status();
    for (const std::string& table : config.sharding.reference_tables) {
      auto line = fill_reference_copy(from->get(), source->name, to->get(), shard.name, table);
      if (!line) return line.status();
      report.reference_tables.push_back(table + " on " + shard.name + ": " + *line);
    }
  }
  return Status::ok();
}

}  // namespace

Result<InitReport> initialize(const config::Config& config) {
  if (config.catalog.dsn.empty()) return Status::config("catalog.dsn is required for shardwire init");
  if (config.shards.empty())
    return Status::config("shards: at least one shard is required for shardwire init");
  InitReport report;
  auto conn = connect(config.catalog.dsn, "catalog", {.application_name = "shardwire init"});
  if (!conn) return conn.status();
  if (Status s = init_catalog_schema(conn->get(), report); !s)
    return with_context(s, "catalog: creating schema shardwire");
  auto dir = init_directory(conn->get(), config, report);
  if (!dir) {
    if (dir.status().fault == Fault::Config) {
      return Status::config(dir.status().message + "; refusing to initialize (" + config.file + ")");
    }
    return with_context(dir.status(), "catalog: initial directory");
  }
  conn->reset();
  const router::Directory& d = **dir;
  report.directory_version = d.version();
  report.buckets = d.bucket_count();
  report.shard_names = d.shards();
  report.buckets_per_shard.reserve(d.shards().size());
  for (size_t i = 0; i < d.shards().size(); ++i)  // a Directory holds at most 65535 shards
    report.buckets_per_shard.push_back(d.owned_by(static_cast<uint16_t>(i)));
  for (size_t i = 0; i < config.shards.size(); ++i) {
    ShardInitReport shard_report;
    // assign_id_slots gave every configured shard a slot in the same catalog transaction.
    const auto slot = report.id_slots.find(config.shards[i].name);
    if (slot == report.id_slots.end())
      return Status::proxy("XX000", "catalog: no id slot recorded for shard " + config.shards[i].name);
    if (Status s = init_shard(config, i, d, slot->second, shard_report); !s) return s;
    report.shards.push_back(std::move(shard_report));
  }
  if (Status s = init_reference_tables(config, report); !s) return s;
  return report;
}

std::string format_report(const InitReport& r) {
  std::string out;
  out +=
      std::string("catalog: schema shardwire ") + (r.catalog_created ? "created" : "already present") + "\n";
  out += std::string("directory: ") + (r.directory_created ? "created" : "already present") + ", version " +
         std::to_string(r.directory_version) + ", " + std::to_string(r.buckets) + " buckets\n";
  for (size_t i = 0; i < r.shards.size(); ++i) {
    const ShardInitReport& s = r.shards[i];
    out += "shard " + s.name + ": " +
           std::to_string(i < r.buckets_per_shard.size() ? r.buckets_per_shard[i] : 0) +
           " buckets owned; schema shardwire " + (s.schema_created ? "created" : "already present");
    if (s.schema_created) out += ", " + std::to_string(s.buckets_fenced) + " buckets fenced";
    out += "\n";
    for (const auto& f : s.fences) out += "  fence " + f + "\n";
    for (const auto& t : s.missing_tables) out += "  table " + t + ": not created yet (skipped)\n";
    out += "  id slot " + std::to_string(s.id_slot) + "\n";
    for (const auto& line : s.sequences) out += "  " + line + "\n";
    for (const auto& warning : s.warnings) out += "  WARNING: " + warning + "\n";
  }
  for (const auto& line : r.reference_tables) out += "reference table " + line + "\n";
  return out;
}

Status run_init(const config::Config& config) {
  auto report = initialize(config);
  if (!report) return report.status();
  std::string text = format_report(*report);
  for (const ShardInitReport& shard : report->shards)
    for (const std::string& warning : shard.warnings) LOG_WARN("init: %s", warning.c_str());
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return Status::ok();
}

}  // namespace sw::catalog
