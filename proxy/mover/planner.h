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

// How far from the mean a shard's data may end after REBALANCE BY DATA, as a fraction of the mean.
inline constexpr double kRebalanceTolerance = 0.02;

// The bucket moves after which every shard of `targets` holds the mean of the data within
// `tolerance` (bytes, or rows when no bytes were measured), moving the fewest rows (bytes) to get
// there (docs/architecture.md §8.11). Shards outside `targets` give all their buckets; `targets`
// empty means every directory shard (new names as above).
//  * Goals: a target off the band [mean - t, mean + t] goes to its nearer edge, a target within
//    it stays; what is left over (the flows out and in differ) lifts the lowest of the shards
//    that do not give (or lowers the highest of those that do not receive) towards one level.
//    So shards already within the tolerance trade nothing unless the others need them, and for
//    an added shard only the shards above the mean give.
//  * Donors give, in shard order, to receivers in shard order: at most donors + receivers - 1
//    moves, and none for a remainder within half the tolerance; each gives the buckets that keep
//    the moved buckets' mean weight at the average bucket's without overshooting, so
//    bucket counts follow the data (data that arrives later, spread over the buckets by key,
//    stays about as even). The goals use half the tolerance, so a bucket's granularity still ends
//    within the whole of it (moving at most about 1 / (1 - t/2) of the minimum for an added shard).
//  * Then, while a target is off the band (buckets too heavy, MIGRATING ones in the way), the
//    heaviest target trades with the lightest: an exchange of buckets keeping counts, else a
//    bucket outright. A bucket heavier than the tolerance stays whole.
//  * Only ACTIVE buckets move; MIGRATING ones count for their owner.
//  * Deterministic; each bucket appears at most once in the plan (owner now -> final shard).
// With no data measured (every bucket empty) it is plan_rebalance's bucket-count plan.
// Result ordered by donor, then receiver, in shard order (directory's, then new ones).
std::vector<PlannedMove> plan_rebalance_by_data(const router::Directory& directory,
                                                const std::vector<std::string>& targets,
                                                const BucketSizes& sizes,
                                                double tolerance = kRebalanceTolerance);

// The least rows and the least bytes any plan moves so that every target ends within `tolerance`
// of the mean (each measured on its own): the larger of what must leave the shards above the
// band (all of it from shards outside `targets`) and what must arrive on the shards below it.
BucketSize minimum_to_move(const router::Directory& directory, const std::vector<std::string>& targets,
                           const BucketSizes& sizes, double tolerance = kRebalanceTolerance);

// Every shard's load now and after `plan` (the directory's shards, then new ones the plan names).
std::vector<ShardLoad> loads_after(const router::Directory& directory, const std::vector<PlannedMove>& plan,
                                   const BucketSizes& sizes);

// The shards a plan spans: the directory's, then new ones named in `targets`; `is_target[i]` says
// whether names[i] may end with buckets (every shard when `targets` is empty).
void name_shards(const router::Directory& directory, const std::vector<std::string>& targets,
                 std::vector<std::string>& names, std::vector<bool>& is_target);

// "s0 1000 rows 81920 B (+0.4%), s1 ..." with each shard's deviation from the mean of the shards
// that hold buckets, by bytes (rows when no bytes were measured). For REBALANCE DRY RUN.
std::string describe_spread(const std::vector<ShardLoad>& loads);

}  // namespace sw::mover
