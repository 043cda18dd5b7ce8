// The console's catalog and shard operations (console_ops.h), each on its own connections.
#include "mover/console_ops.h"

#include <algorithm>
#include <utility>

#include "catalog/migrations.h"
#include "catalog/pq.h"
#include "catalog/reference_tables.h"
#include "mover/copier.h"
#include "mover/mover_types.h"
#include "mover/verifier.h"
#include "sqltext/catalog_sql.h"

namespace sw::mover {
namespace {

Result<catalog::PgConnPtr> catalog_connection(const config::Config& config) {
  return catalog::connect(config.catalog.dsn, "catalog");
}

Result<catalog::PgConnPtr> shard_connection(const config::Config& config, const config::Shard& shard) {
  return catalog::connect(mover_dsn(config, shard), "shard " + shard.name);
}

// Adds one table's per-bucket rows and bytes on `shard`, counting only the buckets it owns.
Status add_table_sizes(PGconn* conn, const config::ShardedTable& table, const std::string& qualified,
                       const std::string& shard, const router::Directory& directory, BucketSizes* sizes) {
  auto bucket = sqltext::bucket_expression(table, directory.bucket_count());
  if (!bucket) return bucket.status();
  auto counts = catalog::query(
      conn, "SELECT " + *bucket + ", count(*), sum(pg_column_size(t.*)) FROM " + qualified + " t GROUP BY 1");
  if (!counts) return counts.status();
  for (int row = 0; row < PQntuples(counts->get()); ++row) {
    int64_t b = 0, n = 0, bytes = 0;
    if (!catalog::parse_int64(counts->get(), row, 0, &b) ||
        !catalog::parse_int64(counts->get(), row, 1, &n) ||
        !catalog::parse_int64(counts->get(), row, 2, &bytes))
      return Status::server("XX000", "shard " + shard + " returned a malformed bucket size");
    if (b < 0 || b >= directory.bucket_count() ||
        directory.shard_name(directory.bucket(static_cast<uint32_t>(b)).shard) != shard)
      continue;
    BucketSize& size = (*sizes)[static_cast<uint32_t>(b)];
    size.rows += static_cast<uint64_t>(n);
    size.bytes += static_cast<uint64_t>(bytes);
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<int64_t>> create_migrations(const config::Config& config,
                                               const std::vector<PlannedMove>& moves) {
  for (const PlannedMove& move : moves) {
    if (Status s = check_reference_copies_on(config, move.target); !s) return s;
  }
  auto conn = catalog_connection(config);
  if (!conn) return conn.status();
  std::vector<int64_t> ids;
  for (const PlannedMove& move : moves) {
    auto id = catalog::create_migration(conn->get(), move.source, move.target, move.buckets);
    if (!id) return id.status();
    ids.push_back(*id);
  }
  return ids;
}

Result<BucketSizes> measure_bucket_sizes(const config::Config& config, const router::Directory& directory) {
  BucketSizes sizes;
  for (const config::Shard& shard : config.shards) {
    auto conn = shard_connection(config, shard);
    if (!conn) return conn.status();
    for (const config::ShardedTable& table : config.sharding.tables) {
      auto qualified = resolve_table(conn->get(), table.name);
      if (!qualified) continue;  // not created on this shard (yet): no rows
      if (Status s = add_table_sizes(conn->get(), table, *qualified, shard.name, directory, &sizes); !s)
        return s;
    }
  }
  return sizes;
}

Result<std::vector<catalog_rows::Migration>> list_migrations(const config::Config& config, bool active_only) {
  auto conn = catalog_connection(config);
  if (!conn) return conn.status();
  return catalog::list_migrations(conn->get(), active_only);
}

Status request_migration(const config::Config& config, int64_t id, catalog_rows::MigrationRequest request) {
  auto conn = catalog_connection(config);
  if (!conn) return conn.status();
  return catalog::request_migration(conn->get(), id, request);
}

Result<std::vector<BucketCopy>> digest_bucket(const config::Config& config,
                                              const router::Directory& directory, uint32_t bucket) {
  std::vector<std::pair<std::string, std::string>> shards{
      {directory.shard_name(directory.bucket(bucket).shard), "owner"}};
  auto migrations = list_migrations(config, /*active_only=*/true);
  if (!migrations) return migrations.status();
  for (const catalog_rows::Migration& m : *migrations) {
    if (std::find(m.buckets.begin(), m.buckets.end(), bucket) == m.buckets.end()) continue;
    const std::string& other = shards.front().first == m.source ? m.target : m.source;
    shards.emplace_back(other, other == m.target ? "target" : "source");
  }
  BucketSet set(directory.bucket_count(), {bucket});
  std::vector<BucketCopy> copies;
  for (const auto& [name, role] : shards) {
    const config::Shard* shard = config.find_shard(name);
    if (shard == nullptr) continue;
    auto conn = shard_connection(config, *shard);
    if (!conn) return conn.status();
    auto digests = bucket_digests(conn->get(), config.sharding.tables, set);
    if (!digests) return digests.status();
    const BucketDigest& digest = (*digests)[bucket];
    copies.push_back({name, role, digest.rows, digest.checksum});
  }
  return copies;
}

Result<std::vector<ReferenceCopy>> digest_reference(const config::Config& config, const std::string& table) {
  const auto& references = config.sharding.reference_tables;
  if (std::find(references.begin(), references.end(), table) == references.end()) {
    std::string names;
    for (const std::string& name : references) names += (names.empty() ? "" : ", ") + name;
    return Status::client("42P01", "\"" + table + "\" is not a reference table (sharding.reference_tables: " +
                                       (names.empty() ? "none" : names) + ")");
  }
  std::vector<ReferenceCopy> copies;
  catalog::ReferenceDigest expected;
  for (const config::Shard& shard : config.shards) {
    auto conn = shard_connection(config, shard);
    if (!conn) return conn.status();
    auto digest = catalog::digest_reference_table(conn->get(), table);
    if (!digest) return digest.status();
    if (shard.name == config.sharding.default_shard) expected = *digest;
    copies.push_back({shard.name, digest->exists, digest->rows, digest->checksum, false});
  }
  for (ReferenceCopy& copy : copies) {
    copy.matches =
        expected.exists && copy.exists && copy.rows == expected.rows && copy.checksum == expected.checksum;
  }
  return copies;
}

Status check_reference_copies_on(const config::Config& config, const std::string& target) {
  const auto& references = config.sharding.reference_tables;
  if (references.empty() || target == config.sharding.default_shard) return Status::ok();
  const config::Shard* source = config.find_shard(config.sharding.default_shard);
  const config::Shard* shard = config.find_shard(target);
  if (source == nullptr || shard == nullptr) return Status::ok();  // the move itself names what is missing
  auto from = shard_connection(config, *source);
  if (!from) return from.status();
  auto to = shard_connection(config, *shard);
  if (!to) return to.status();
  return catalog::check_reference_copies(from->get(), source->name, to->get(), target, references);
}

Status check_no_migration_uses(const config::Config& config, const std::vector<std::string>& shards) {
  auto migrations = list_migrations(config, /*active_only=*/true);
  if (!migrations)
    return Status::config("cannot check the catalog's migrations before removing a shard: " +
                          migrations.status().message);
  for (const catalog_rows::Migration& m : *migrations) {
    for (const std::string& name : shards) {
      if (m.source != name && m.target != name) continue;
      return Status::config("migration " + std::to_string(m.id) + " (" + m.source + " -> " + m.target + ", " +
                            catalog_rows::migration_state_name(m.state) + ") still uses shard " + name +
                            "; wait until it is done (or CANCEL MIGRATION " + std::to_string(m.id) +
                            "), then RELOAD");
    }
  }
  return Status::ok();
}

}  // namespace sw::mover
