// A two-phase transaction shardwire left prepared on a shard, with the catalog's decision for it
// (SHOW TRANSACTIONS; docs/architecture.md §7.8, §10). Plain data: the console reads it without
// libpq; catalog/in_doubt.h lists them.
#pragma once

#include <string>

namespace sw::twopc {

struct InDoubtTransaction {
  std::string gid;
  std::string shard;
  std::string prepared;  // timestamptz text (the shard's pg_prepared_xacts.prepared)
  double age_s = 0;      // on the shard's clock
  std::string decision;  // "commit", "abort" or "none"
  std::string owner;     // the instance part of the gid (the coordinator's process)
};

}  // namespace sw::twopc
