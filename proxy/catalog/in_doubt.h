// The two-phase transactions shardwire left prepared on the shards, with the catalog's decision
// for each (SHOW TRANSACTIONS; docs/architecture.md §7.8). Plain data: the console includes it
// without libpq.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::catalog {

struct InDoubtTransaction {
  std::string gid;
  std::string shard;
  std::string prepared;  // timestamptz text (the shard's pg_prepared_xacts.prepared)
  double age_s = 0;      // on the shard's clock
  std::string decision;  // "commit", "abort" or "none"
  std::string owner;     // the instance part of the gid (the coordinator's process)
};

// Blocking: reads the decisions from the catalog, then every configured shard's shardwire gids
// (in config order, oldest first), and disconnects. An unreachable catalog or shard fails the
// whole listing (08006 naming it).
Result<std::vector<InDoubtTransaction>> list_in_doubt(const config::Config& config);

}  // namespace sw::catalog
