// Reference tables on the shards (docs/architecture.md §6.4): every shard holds a full copy of
// each, the default shard's being the one others are compared with and filled from. Blocking
// libpq, on connections the caller opened; never on a worker's event loop.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::catalog {

// One shard's copy of a reference table: rows and the order-independent checksum of
// sqltext::reference_digest_sql. A table that does not exist there has exists = false.
struct ReferenceDigest {
  bool exists = false;
  uint64_t rows = 0;
  std::string checksum = "0";
  bool operator==(const ReferenceDigest& other) const = default;
};

Result<ReferenceDigest> digest_reference_table(PGconn* shard, const std::string& configured_name);

// "3 rows, checksum 123" or "missing".
std::string describe_digest(const ReferenceDigest& digest);

// 55000 (object not in prerequisite state) naming every reference table whose copy on `shard`
// differs from the one on `reference` (counts and checksums of both) and the fix (shardwire
// init, or VERIFY REFERENCE); ok when all agree.
Status check_reference_copies(PGconn* reference, const std::string& reference_name, PGconn* shard,
                              const std::string& shard_name, const std::vector<std::string>& tables);

// `shardwire init`: brings `to`'s copy of `table` up to `from`'s by inserting the rows it lacks
// (in one transaction), then compares again. Returns a line for the report: "same as s0 (3
// rows)", "3 rows copied from s0", "missing on s2: create it through shardwire ...". A copy that
// still differs (rows `from` does not have, or changed ones) is a 55000 naming both digests.
Result<std::string> fill_reference_copy(PGconn* from, const std::string& from_name, PGconn* to,
                                        const std::string& to_name, const std::string& table);

}  // namespace sw::catalog
