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

// The directory a whole load at `version` would give, from `base` (a directory loaded earlier,
// over the same configured `shards`) and the rows of the buckets changed since base's version
// (each at most once, any order): exactly build_directory over base's rows with `changed`
// replacing theirs. Null when only a whole load can tell (a row outside base's buckets or listed
// twice: the whole load reports it); errors as build_directory's.
Result<std::shared_ptr<const router::Directory>> apply_directory_changes(
    const router::Directory& base, uint64_t version, const std::vector<BucketRow>& changed,
    const std::vector<std::string>& shards);

// Parses sqltext::kLoadDirectoryChangesSql's result. Fault::Server on malformed values.
struct ChangedRows {
  uint64_t version = 0;     // the catalog's directory version
  uint64_t full_since = 0;  // the latest deletion of a bucket row
  std::vector<BucketRow> rows;
};
Result<ChangedRows> parse_directory_changes(const PGresult* res);

// The incremental load: reads only the buckets changed since `base` was loaded (one statement,
// one snapshot) and applies them. Returns `base` itself when nothing changed, and null when only
// a whole load is exact: the catalog's version is below base's (another or a restored catalog),
// a bucket row was deleted since, or a changed row does not fit base. A catalog that `shardwire
// init` has not upgraded answers 42703 (undefined column).
Result<std::shared_ptr<const router::Directory>> load_directory_changes(
    PGconn* conn, const config::Config& config, const std::shared_ptr<const router::Directory>& base);

// Loads the whole directory in one statement (one snapshot) on a connection to the catalog and
// validates it against the config (shard names in config order, sharding.buckets). A catalog
// without buckets is an error telling the operator to run `shardwire init`.
Result<std::shared_ptr<const router::Directory>> load_directory(PGconn* conn, const config::Config& config);

}  // namespace sw::catalog
