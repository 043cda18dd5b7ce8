// What the admin console and the app ask of the catalog and the shards about migrations. Each call
// opens the connections it needs and closes them (blocking libpq: call it off the event loops,
// e.g. on libuv's thread pool). The interface names no libpq type, so callers outside the
// catalog and the mover never see libpq (docs/architecture.md §2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/migration.h"
#include "common/status.h"
#include "config/config.h"
#include "mover/planner.h"
#include "router/directory.h"

namespace sw::mover {

// Creates one migration per move (planned, in order); returns their ids in the same order.
Result<std::vector<int64_t>> create_migrations(const config::Config& config,
                                               const std::vector<PlannedMove>& moves);

// Rows and bytes per bucket on its owner: count(*) and the rows' stored size (pg_column_size of
// the whole row) of every sharded table, grouped by shardwire.bucket_of. Copies on other shards (a
// source in its rollback window, a target being filled) are not counted.
Result<BucketSizes> measure_bucket_sizes(const config::Config& config, const router::Directory& directory);

Result<std::vector<catalog::Migration>> list_migrations(const config::Config& config, bool active_only);

Status request_migration(const config::Config& config, int64_t id, catalog::MigrationRequest request);

// One shard's copy of a bucket (VERIFY BUCKET): the owner, and the other side of any unfinished
// migration that holds the bucket ("source" or "target").
struct BucketCopy {
  std::string shard, role;
  uint64_t rows = 0;
  std::string checksum;
};
Result<std::vector<BucketCopy>> digest_bucket(const config::Config& config,
                                              const router::Directory& directory, uint32_t bucket);

// A config error naming the first unfinished migration (rollback windows included) that uses one
// of `shards`; ok when none does. RELOAD asks before it drops a shard.
Status check_no_migration_uses(const config::Config& config, const std::vector<std::string>& shards);

}  // namespace sw::mover
