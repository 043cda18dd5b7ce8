// Source-vs-target verification of moved buckets (docs/architecture.md §8.5 and the cutover's verify step,
// §8.6): per bucket, the row count and an order-independent checksum of the row images, computed by the shard
// itself so no row crosses the network.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "mover/mover_types.h"

namespace sw::mover {

struct BucketDigest {
  uint64_t rows = 0;
  // Decimal text of a signed sum (unbounded in SQL, 128-bit when combining tables); "0" when the
  // bucket has no rows.
  std::string checksum = "0";

  bool operator==(const BucketDigest& other) const = default;
};

// Per bucket of `buckets`, over all tables: rows and SUM (as numeric, never overflowing) of a
// 64-bit hash of each row,
//   hashtextextended('<table name>' || ':' || ROW(<columns sorted by name>)::text, 0)
// (PostgreSQL's 64-bit text hash, the one hash partitioning relies on, so it is stable across
// servers and versions; several times cheaper than an md5 of the same text.)
// A sum, not an XOR: two equal rows do not cancel, and a duplicated row changes the count and the
// sum. The configured table name is part of the hash input, so equal rows of two tables differ.
// Columns are taken by name (every non-dropped column, generated ones included), so the image is
// the same on two shards even if their attribute order differs; the text output of a value is
// the same for equal values on both sides (same types, same server version settings).
// One query per table (GROUP BY bucket); the per-table sums are added here. Every bucket of the
// set is in the result, those without rows as {0, "0"}. Runs in the connection's current
// transaction state: inside a REPEATABLE READ transaction all tables are read at one snapshot.
Result<std::map<uint32_t, BucketDigest>> bucket_digests(PGconn* conn,
                                                        const std::vector<config::ShardedTable>& tables,
                                                        const BucketSet& buckets);

// Buckets whose digests differ, ascending; a bucket missing from one side counts as {0, "0"}.
std::vector<uint32_t> mismatched_buckets(const std::map<uint32_t, BucketDigest>& a,
                                         const std::map<uint32_t, BucketDigest>& b);

// bucket_digests of `buckets` on both shards at once (`b` on a thread of its own; the two
// connections must differ), and the buckets whose digests differ, ascending.
Result<std::vector<uint32_t>> compare_shards(PGconn* a, PGconn* b,
                                             const std::vector<config::ShardedTable>& tables,
                                             const BucketSet& buckets);

}  // namespace sw::mover
