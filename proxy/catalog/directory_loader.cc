#include "catalog/directory_loader.h"

#include <algorithm>
#include <limits>

#include "catalog/pq.h"
#include "sqltext/catalog_sql.h"

namespace sw::catalog {

using DirectoryPtr = std::shared_ptr<const router::Directory>;

Result<std::shared_ptr<const router::Directory>> build_directory(uint64_t version,
                                                                 const std::vector<BucketRow>& rows,
                                                                 const std::vector<std::string>& shards,
                                                                 uint32_t bucket_count) {
  if (shards.empty()) return Status::config("no shards are configured");
  if (shards.size() > std::numeric_limits<uint16_t>::max()) return Status::config("too many shards");
  if (rows.size() != bucket_count) {
    return Status::config("the catalog directory has " + std::to_string(rows.size()) +
                          " buckets but sharding.buckets is " + std::to_string(bucket_count) +
                          " (the bucket count never changes once initialized)");
  }
  std::vector<router::BucketEntry> entries(bucket_count);
  std::vector<bool> seen(bucket_count, false);
  std::vector<std::string> names = shards;
  // Rows usually arrive in bucket order with few distinct shards: remember the last lookup.
  std::string last_name;
  int last_index = -1;
  for (const BucketRow& row : rows) {
    if (row.bucket < 0 || row.bucket >= static_cast<int64_t>(bucket_count)) {
      return Status::config("the catalog directory has bucket " + std::to_string(row.bucket) +
                            ", outside 0.." + std::to_string(bucket_count - 1) + " (sharding.buckets is " +
                            std::to_string(bucket_count) + ")");
    }
    auto b = static_cast<uint32_t>(row.bucket);
    if (seen[b]) return Status::config("the catalog directory lists bucket " + std::to_string(b) + " twice");
    seen[b] = true;
    if (last_index < 0 || row.shard != last_name) {
      const auto found = std::find(names.begin(), names.end(), row.shard);
      last_index = static_cast<int>(found - names.begin());
      if (found == names.end()) {
        // A shard only the catalog knows is kept (after the configured ones): routing refuses its
        // buckets alone and names the fix, the other buckets go on.
        if (names.size() == std::numeric_limits<uint16_t>::max())
          return Status::config("the catalog directory names too many shards");
        names.push_back(row.shard);
      }
      last_name = row.shard;
    }
    router::BucketEntry& e = entries[b];
    e.shard = static_cast<uint16_t>(last_index);
    if (row.state == "ACTIVE") {
      e.state = router::BucketState::Active;
    } else if (row.state == "MIGRATING") {
      e.state = router::BucketState::Migrating;
    } else {
      return Status::config("the catalog directory has unknown state \"" + row.state + "\" for bucket " +
                            std::to_string(b));
    }
    if (row.version < 0)
      return Status::config("the catalog directory has a negative version for bucket " + std::to_string(b));
    e.version = static_cast<uint64_t>(row.version);
  }
  return std::make_shared<const router::Directory>(version, std::move(names), std::move(entries),
                                                   static_cast<uint16_t>(shards.size()));
}

Result<std::shared_ptr<const router::Directory>> rebase_directory(const router::Directory& directory,
                                                                  const std::vector<std::string>& shards) {
  std::vector<BucketRow> rows(directory.bucket_count());
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) {
    const router::BucketEntry& entry = directory.bucket(b);
    rows[b] = {b, directory.shard_name(entry.shard), router::bucket_state_name(entry.state),
               static_cast<int64_t>(entry.version)};
  }
  return build_directory(directory.version(), rows, shards, directory.bucket_count());
}

std::vector<std::string> unconfigured_shards(const router::Directory& directory) {
  std::vector<std::string> out;
  for (size_t i = directory.configured_count(); i < directory.shards().size(); ++i)
    out.push_back(directory.shards()[i]);
  return out;
}

Result<std::shared_ptr<const router::Directory>> apply_directory_changes(
    const router::Directory& base, uint64_t version, const std::vector<BucketRow>& changed,
    const std::vector<std::string>& shards) {
  const uint32_t bucket_count = base.bucket_count();
  std::vector<BucketRow> rows(bucket_count);
  std::vector<bool> replaced(bucket_count, false);
  for (const BucketRow& row : changed) {
    if (row.bucket < 0 || row.bucket >= static_cast<int64_t>(bucket_count)) return DirectoryPtr();
    const auto b = static_cast<uint32_t>(row.bucket);
    if (replaced[b]) return DirectoryPtr();
    replaced[b] = true;
    rows[b] = row;
  }
  for (uint32_t b = 0; b < bucket_count; ++b) {
    if (replaced[b]) continue;
    const router::BucketEntry& entry = base.bucket(b);
    rows[b] = {b, base.shard_name(entry.shard), router::bucket_state_name(entry.state),
               static_cast<int64_t>(entry.version)};
  }
  // Bucket order, as the whole load reads them: the same shard order, the same snapshot.
  return build_directory(version, rows, shards, bucket_count);
}

namespace {

// Columns bucket, shard, state, version from `first` on; false on a malformed value.
bool parse_bucket_row(const PGresult* res, int r, int first, BucketRow* row) {
  if (!parse_int64(res, r, first, &row->bucket) || !parse_int64(res, r, first + 3, &row->version))
    return false;
  row->shard = text_value(res, r, first + 1);
  row->state = text_value(res, r, first + 2);
  return true;
}

}  // namespace

namespace {

// Both directory queries return `versions` non-negative version columns on every row, then a
// bucket row LEFT JOINed to them: a single row with NULL bucket columns when no bucket is listed.
struct VersionedRows {
  std::vector<int64_t> versions;
  std::vector<BucketRow> rows;
};

Result<VersionedRows> parse_versioned_rows(const PGresult* res, int versions) {
  VersionedRows out;
  if (PQnfields(res) != versions + 4)
    return Status::server("XX000", "catalog: unexpected directory result shape");
  const int n = PQntuples(res);
  if (n == 0)
    return Status::server("XX000", "catalog: shardwire.directory_version has no row; run shardwire init");
  out.versions.resize(static_cast<size_t>(versions));
  out.rows.reserve(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < versions; ++c) {
      int64_t& version = out.versions[static_cast<size_t>(c)];
      if (!parse_int64(res, r, c, &version) || version < 0)
        return Status::server("XX000", "catalog: malformed directory version");
    }
    if (PQgetisnull(res, r, versions)) {
      if (n != 1) return Status::server("XX000", "catalog: malformed directory row");
      return out;
    }
    BucketRow row;
    if (!parse_bucket_row(res, r, versions, &row))
      return Status::server("XX000", "catalog: malformed bucket row " + std::to_string(r));
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace

Result<ChangedRows> parse_directory_changes(const PGresult* res) {
  auto parsed = parse_versioned_rows(res, 2);
  if (!parsed) return parsed.status();
  ChangedRows out;
  out.version = static_cast<uint64_t>(parsed->versions[0]);
  out.full_since = static_cast<uint64_t>(parsed->versions[1]);
  out.rows = std::move(parsed->rows);
  return out;
}

Result<LoadedRows> parse_directory_result(const PGresult* res) {
  auto parsed = parse_versioned_rows(res, 1);
  if (!parsed) return parsed.status();
  LoadedRows out;
  out.version = static_cast<uint64_t>(parsed->versions[0]);
  out.has_directory = !parsed->rows.empty();
  out.rows = std::move(parsed->rows);
  return out;
}

Result<std::shared_ptr<const router::Directory>> load_directory(PGconn* conn, const config::Config& config) {
  auto res = query(conn, sqltext::kLoadDirectorySql);
  if (!res)
    return Status{res.status().fault, res.status().sqlstate,
                  "catalog: loading the directory: " + res.status().message};
  auto rows = parse_directory_result(res->get());
  if (!rows) return rows.status();
  if (!rows->has_directory) {
    return Status::config("the catalog has no bucket directory yet; run `shardwire init --config " +
                          config.file + "`");
  }
  return build_directory(rows->version, rows->rows, config.shard_names(),
                         static_cast<uint32_t>(config.sharding.buckets));
}

Result<std::shared_ptr<const router::Directory>> load_directory_changes(
    PGconn* conn, const config::Config& config, const std::shared_ptr<const router::Directory>& base) {
  if (base->bucket_count() != static_cast<uint32_t>(config.sharding.buckets)) return DirectoryPtr();
  auto res = query(conn, sqltext::kLoadDirectoryChangesSql, {std::to_string(base->version())});
  if (!res)
    return Status{res.status().fault, res.status().sqlstate,
                  "catalog: loading the directory's changes: " + res.status().message};
  auto changes = parse_directory_changes(res->get());
  if (!changes) return changes.status();
  // A catalog behind this router (restored, or another one) or a deleted bucket row: the rows
  // changed since base's version do not tell the whole directory.
  if (changes->version < base->version() || changes->full_since > base->version()) return DirectoryPtr();
  if (changes->rows.empty()) {
    if (changes->version == base->version()) return base;
    return DirectoryPtr();  // newer, yet no row changed: only a deletion does that, and it set full_since
  }
  return apply_directory_changes(*base, changes->version, changes->rows, config.shard_names());
}

}  // namespace sw::catalog
