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

}  // namespace sw::mover
