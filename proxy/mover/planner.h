// What to move, for the console's MOVE BUCKETS and REBALANCE: bucket lists typed by an operator
// and the bucket moves that balance the shards. Pure functions: no I/O, deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "router/directory.h"

namespace sw::mover {

// "1,2,5-9, 12" -> {1,2,5,6,7,8,9,12}: comma-separated numbers and inclusive ranges, spaces
// around items and around '-' allowed; the result is sorted and duplicates are dropped.
// Client errors (22023) for an empty list or item, anything but digits, a backwards range, and a
// bucket >= bucket_count.
Result<std::vector<uint32_t>> parse_bucket_list(std::string_view text, uint32_t bucket_count);

// One migration: `buckets` (ascending) from `source` to `target`.
struct PlannedMove {
  std::string source, target;
  std::vector<uint32_t> buckets;

  bool operator==(const PlannedMove& other) const = default;
};

// The fewest bucket moves after which every shard of `targets` owns floor(B/K) or ceil(B/K) of
// the B buckets (K = number of targets) and shards outside `targets` own nothing.
//  * `targets` empty: every directory shard. A name the directory does not know is a new shard
//    that owns nothing yet; duplicates count once.
//  * Quotas: the B mod K ceil quotas go to the targets that own the most buckets now (ties: the
//    directory's shard order, then new shards in the order given), which minimizes moves.
//  * Only ACTIVE buckets move. MIGRATING buckets count for the shard that owns them and stay, so
//    a shard may end off its quota when they are in the way.
//  * Each over-quota shard gives its lightest buckets (`rows`, missing = 0; ties by bucket
//    number). Donors (shard order) fill receivers (shard order, new shards last) one after the
//    other, so there are at most donors + receivers - 1 moves; no bucket moves twice.
// Result ordered by donor, then receiver, in shard order. Empty when nothing needs to move.
std::vector<PlannedMove> plan_rebalance(const router::Directory& directory,
                                        const std::vector<std::string>& targets,
                                        const std::map<uint32_t, uint64_t>& rows);

// What a bucket holds, measured on its owner (every sharded table).
struct BucketSize {
  uint64_t rows = 0;
  uint64_t bytes = 0;
};
using BucketSizes = std::map<uint32_t, BucketSize>;  // missing: an empty bucket

// A shard's share of the data, now or after a plan.
struct ShardLoad {
  std::string shard;
  uint32_t buckets = 0;
  uint64_t rows = 0, bytes = 0;
};

// The bucket moves after which every shard of `targets` holds about the same data: bytes, or
// rows when no bytes were measured. Shards outside `targets` give all their buckets; `targets`
// empty means every directory shard (new names as above).
//  * Starts from plan_rebalance's even bucket counts (so data that arrives later, spread over
//    the buckets by key, stays balanced), then, while a target is more than `tolerance` (a
//    fraction of the mean; 0.001 = 0.1%) off the mean, the heaviest target trades with the
//    lightest: it exchanges one of its buckets for a lighter one the plan sends the lightest (or
//    that lives there), the difference closest to what the nearer of the two is off the mean; only
//    when no exchange helps does it give a bucket outright (bucket counts then differ). A bucket
//    heavier than the tolerance stays whole, so the goal holds where buckets are small enough.
//  * Only ACTIVE buckets move; MIGRATING ones count for their owner.
//  * Deterministic; each bucket appears at most once in the plan (owner now -> final shard).
// With no data measured (every bucket empty) it is plan_rebalance's bucket-count plan.
// Result ordered by donor, then receiver, in shard order (directory's, then new ones).
std::vector<PlannedMove> plan_rebalance_by_data(const router::Directory& directory,
                                                const std::vector<std::string>& targets,
                                                const BucketSizes& sizes, double tolerance = 0.001);

// Every shard's load now and after `plan` (the directory's shards, then new ones the plan names).
std::vector<ShardLoad> loads_after(const router::Directory& directory, const std::vector<PlannedMove>& plan,
                                   const BucketSizes& sizes);

// "s0 1000 rows 81920 B (+0.4%), s1 ..." with each shard's deviation from the mean of the shards
// that hold buckets, by bytes (rows when no bytes were measured). For REBALANCE DRY RUN.
std::string describe_spread(const std::vector<ShardLoad>& loads);

}  // namespace sw::mover
