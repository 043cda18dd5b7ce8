// What the admin console and the app ask of the catalog and the shards about migrations. Each call
// opens the connections it needs and closes them (blocking libpq: call it off the event loops,
// e.g. on libuv's thread pool). The interface names no libpq type, so callers outside the
// catalog and the mover never see libpq (docs/architecture.md §2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog_rows/migration.h"
#include "common/status.h"
#include "config/config.h"
#include "mover/planner.h"
#include "router/directory.h"

namespace sw::mover {

// Creates one migration per move (planned, in order); returns their ids in the same order. Refused
// (nothing created) when a target's copy of the reference tables differs from the default shard's.
Result<std::vector<int64_t>> create_migrations(const config::Config& config,
                                               const std::vector<PlannedMove>& moves);

// Rows and bytes per bucket on its owner: count(*) and the rows' stored size (pg_column_size of
// the whole row) of every sharded table, grouped by shardwire.bucket_of. Copies on other shards (a
// source in its rollback window, a target being filled) are not counted.
Result<BucketSizes> measure_bucket_sizes(const config::Config& config, const router::Directory& directory);

Result<std::vector<catalog_rows::Migration>> list_migrations(const config::Config& config, bool active_only);

Status request_migration(const config::Config& config, int64_t id, catalog_rows::MigrationRequest request);

// One shard's copy of a bucket (VERIFY BUCKET): the owner, and the other side of any unfinished
// migration that holds the bucket ("source" or "target").
struct BucketCopy {
  std::string shard, role;
  uint64_t rows = 0;
  std::string checksum;
};
Result<std::vector<BucketCopy>> digest_bucket(const config::Config& config,
                                              const router::Directory& directory, uint32_t bucket);

// One shard's copy of a reference table (VERIFY REFERENCE), in config order: `matches` when its
// rows and checksum equal the default shard's (a table missing there has exists = false).
struct ReferenceCopy {
  std::string shard;
  bool exists = false;
  uint64_t rows = 0;
  std::string checksum;
  bool matches = false;
};
// 42P01 when `table` is not in sharding.reference_tables (the message lists them).
Result<std::vector<ReferenceCopy>> digest_reference(const config::Config& config, const std::string& table);

// Before buckets move onto `target`: its copy of every reference table must equal the default
// shard's (55000 naming the differences and the fix otherwise).
Status check_reference_copies_on(const config::Config& config, const std::string& target);

// A config error naming the first unfinished migration (rollback windows included) that uses one
// of `shards`; ok when none does. RELOAD asks before it drops a shard.
Status check_no_migration_uses(const config::Config& config, const std::vector<std::string>& shards);

}  // namespace sw::mover
