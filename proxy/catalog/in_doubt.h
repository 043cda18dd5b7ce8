// The two-phase transactions shardwire left prepared on the shards, with the catalog's decision
// for each (SHOW TRANSACTIONS; docs/architecture.md §7.8). The rows are twopc/in_doubt.h's plain
// data, which the console includes without libpq.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "twopc/in_doubt.h"

namespace sw::catalog {

// Blocking: reads the decisions from the catalog, then every configured shard's shardwire gids
// (in config order, oldest first), and disconnects. An unreachable catalog or shard fails the
// whole listing (08006 naming it).
Result<std::vector<twopc::InDoubtTransaction>> list_in_doubt(const config::Config& config);

}  // namespace sw::catalog
