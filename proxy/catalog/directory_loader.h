// Reading the bucket directory from the catalog into an immutable router::Directory snapshot.
// build_directory is pure (tested with rows in memory); load_directory runs sqltext::kLoadDirectorySql.
#pragma once

#include "catalog/pq_handle.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "router/directory.h"

namespace sw::catalog {

// One row of shardwire.buckets, as text from the catalog.
struct BucketRow {
  int64_t bucket = 0;
  std::string shard;
  std::string state;  // "ACTIVE" | "MIGRATING"
  int64_t version = 0;
};

// Builds a snapshot from catalog rows. `shards` are the configured shards (the snapshot's first
// shards, in that order); a shard the rows name that is not among them is appended after them
// (Directory::configured() is false for it), so the buckets of configured shards stay routable.
// Errors (Fault::Config, naming the catalog, never a DSN): a bucket count different from
// `bucket_count`, a missing/duplicate/out-of-range bucket, an unknown state, a negative version.
// Rows may come in any order.
Result<std::shared_ptr<const router::Directory>> build_directory(uint64_t version,
                                                                 const std::vector<BucketRow>& rows,
                                                                 const std::vector<std::string>& shards,
                                                                 uint32_t bucket_count);

// The same directory (version, owners, states) over another configured shard list, for a config
// reload that added or removed shards.
Result<std::shared_ptr<const router::Directory>> rebase_directory(const router::Directory& directory,
                                                                  const std::vector<std::string>& shards);

// Shards the directory names that are not configured (in directory order).
std::vector<std::string> unconfigured_shards(const router::Directory& directory);

// Parses sqltext::kLoadDirectorySql's result into (version, rows). `has_directory` is false when the
// catalog has no buckets yet (then `rows` is empty). Fault::Server on malformed values.
struct LoadedRows {
  uint64_t version = 0;
  bool has_directory = false;
  std::vector<BucketRow> rows;
};
Result<LoadedRows> parse_directory_result(const PGresult* res);

// Loads the whole directory in one statement (one snapshot) on a connection to the catalog and
// validates it against the config (shard names in config order, sharding.buckets). A catalog
// without buckets is an error telling the operator to run `shardwire init`.
Result<std::shared_ptr<const router::Directory>> load_directory(PGconn* conn, const config::Config& config);

}  // namespace sw::catalog
