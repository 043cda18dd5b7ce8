// REBALANCE by data: which buckets move so every target shard ends within a band around the mean
// while the fewest rows (bytes) move (docs/architecture.md §8.11).
#include <algorithm>
#include <cmath>
#include <set>

#include "mover/planner.h"

namespace sw::mover {
namespace {

// Groups final owners that differ from the directory's into moves, by donor then receiver.
std::vector<PlannedMove> moves_between(const router::Directory& directory,
                                       const std::vector<std::string>& names,
                                       const std::vector<size_t>& owner) {
  std::map<std::pair<size_t, size_t>, std::vector<uint32_t>> grouped;
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) {
    const size_t from = directory.bucket(b).shard;
    if (owner[b] != from) grouped[{from, owner[b]}].push_back(b);
  }
  std::vector<PlannedMove> plan;
  plan.reserve(grouped.size());
  for (auto& [pair, buckets] : grouped)
    plan.push_back({names[pair.first], names[pair.second], std::move(buckets)});
  return plan;
}

// Each shard's data now (the directory's owners), by `weight` per bucket.
std::vector<double> loads_now(const router::Directory& directory, size_t shard_count,
                              const std::vector<uint64_t>& weight) {
  std::vector<double> load(shard_count, 0);
  for (uint32_t b = 0; b < directory.bucket_count(); ++b)
    load[directory.bucket(b).shard] += static_cast<double>(weight[b]);
  return load;
}

// The rows (or bytes) that leave shards above the band and arrive on shards below it: no plan
// after which every target lies within [lo, hi] moves less than the larger of the two.
struct Flows {
  double out = 0, in = 0;
};
Flows flows_to_band(const std::vector<double>& load, const std::vector<bool>& is_target, double lo,
                    double hi) {
  Flows f;
  for (size_t s = 0; s < load.size(); ++s) {
    if (!is_target[s]) {
      f.out += load[s];
    } else {
      f.out += std::max(0.0, load[s] - hi);
      f.in += std::max(0.0, lo - load[s]);
    }
  }
  return f;
}

// Raises (`up`) or lowers the goals of `which` towards one common level, capped at `limit`, by
// `amount` in all: the lowest goals rise first (the highest fall first).
void level(std::vector<double>& goal, const std::vector<bool>& which, double amount, double limit, bool up) {
  auto shift = [&](double at) {
    double sum = 0;
    for (size_t s = 0; s < goal.size(); ++s) {
      if (which[s])
        sum +=
            up ? std::max(0.0, std::min(at, limit) - goal[s]) : std::max(0.0, goal[s] - std::max(at, limit));
    }
    return sum;
  };
  double low = up ? *std::min_element(goal.begin(), goal.end()) : limit, high = up ? limit : 0;
  if (!up)
    for (size_t s = 0; s < goal.size(); ++s) high = std::max(high, which[s] ? goal[s] : 0.0);
  for (int i = 0; i < 100; ++i) {  // bisection on the level
    const double mid = (low + high) / 2;
    if ((shift(mid) < amount) == up) {
      low = mid;
    } else {
      high = mid;
    }
  }
  const double at = up ? high : low;
  for (size_t s = 0; s < goal.size(); ++s) {
    if (which[s])
      goal[s] = up ? std::max(goal[s], std::min(at, limit)) : std::min(goal[s], std::max(at, limit));
  }
}

// What each shard should hold after the plan: every target within [lo, hi], the fewest moved (the
// larger flow of flows_to_band), and among such plans the most even. Shards off the band go to its
// nearer edge; the flow that is left over then lifts the lowest (or lowers the highest) of the
// shards that neither give nor receive it.
std::vector<double> goals(const std::vector<double>& load, const std::vector<bool>& is_target, double lo,
                          double hi) {
  std::vector<double> goal(load.size(), 0);
  for (size_t s = 0; s < load.size(); ++s) goal[s] = is_target[s] ? std::clamp(load[s], lo, hi) : 0;
  const Flows f = flows_to_band(load, is_target, lo, hi);
  std::vector<bool> which(load.size(), false);
  for (size_t s = 0; s < load.size(); ++s)
    which[s] = is_target[s] && (f.out > f.in ? goal[s] >= load[s] : goal[s] <= load[s]);
  if (f.out > f.in) level(goal, which, f.out - f.in, hi, true);
  if (f.in > f.out) level(goal, which, f.in - f.out, lo, false);
  return goal;
}

// The state of a plan by data: each bucket's weight, owner now (`home`) and planned (`owner`),
// and each shard's planned load.
struct DataBalancer {
  const router::Directory& directory;
  std::vector<std::string> names;
  std::vector<bool> is_target;
  std::vector<uint64_t> weight;
  std::vector<size_t> home, owner;
  std::vector<uint64_t> load;
  double mean = 0, allowed = 0;

  bool movable(uint32_t b) const { return directory.bucket(b).state == router::BucketState::Active; }
  void move(uint32_t b, size_t to) {
    load[owner[b]] -= weight[b];
    load[to] += weight[b];
    owner[b] = to;
  }
  // The target with the most (heaviest) or least data.
  size_t extreme(bool heaviest) const {
    size_t best = names.size();
    for (size_t s = 0; s < names.size(); ++s) {
      if (is_target[s] && (best == names.size() || (heaviest ? load[s] > load[best] : load[s] < load[best])))
        best = s;
    }
    return best;
  }

  // Donors give what is above their goal, receivers take what they lack, one after the other in
  // shard order (at most donors + receivers - 1 moves). Each step moves, among the donor's buckets
  // that do not overshoot, the one that keeps the moved buckets' mean weight closest to the mean
  // bucket's, so bucket counts follow the data and data that arrives later, spread over the
  // buckets by key, stays about as even.
  // A remainder within `spare` (in all) opens no migration of its own: a donor's goes to the
  // receiver it fills already, which ends above its goal; a receiver's is left unfilled.
  void fill(const std::vector<double>& goal, double spare) {
    const double typical = mean * static_cast<double>(std::count(is_target.begin(), is_target.end(), true)) /
                           static_cast<double>(weight.size());
    std::vector<double> need(names.size());
    for (size_t s = 0; s < names.size(); ++s) need[s] = goal[s] - static_cast<double>(load[s]);
    const std::vector<double> planned = need;
    double moved = 0, moved_count = 0;
    size_t r = 0;
    for (size_t donor = 0; donor < names.size(); ++donor) {
      double give = -planned[donor];  // as planned: a receiver filled over its goal gives nothing back
      if (give < 0.5) continue;
      bool giving_to_r = false;                      // this donor's migration to r exists
      std::set<std::pair<uint64_t, uint32_t>> pool;  // (weight, bucket)
      for (uint32_t b = 0; b < weight.size(); ++b)
        if (owner[b] == donor && movable(b) && weight[b] > 0) pool.insert({weight[b], b});
      while (give >= 0.5 && !pool.empty()) {
        if (r < names.size() && need[r] < 0.5 && giving_to_r && give <= spare) {
          spare -= give;
          need[r] += give;
        }
        if (r < names.size() && need[r] >= 0.5 && !giving_to_r && need[r] <= spare) {
          spare -= need[r];
          need[r] = 0;
        }
        while (r < names.size() && need[r] < 0.5) {
          ++r;
          giving_to_r = false;
        }
        if (r == names.size()) return;
        const double want = std::min(give, need[r]);
        const double aim = std::clamp(typical * (moved_count + 1) - moved, 0.0, want);
        const auto pick = closest_below(pool, aim, want);
        if (pick == pool.end() || 2 * want <= static_cast<double>(pick->first)) {
          if (want == need[r]) need[r] = 0;  // what it still lacks is smaller than any bucket here
          if (want == give) break;
          continue;
        }
        give -= static_cast<double>(pick->first);
        need[r] -= static_cast<double>(pick->first);
        moved += static_cast<double>(pick->first);
        ++moved_count;
        move(pick->second, r);
        pool.erase(pick);
        giving_to_r = true;
      }
    }
  }
  // The entry of `pool` closest to `aim` among those <= `limit`; the lightest when none is.
  static std::set<std::pair<uint64_t, uint32_t>>::iterator closest_below(
      std::set<std::pair<uint64_t, uint32_t>>& pool, double aim, double limit) {
    auto above = pool.lower_bound({static_cast<uint64_t>(std::ceil(aim)), 0});
    auto best = pool.begin();
    double miss = -1;
    for (auto c : {above, above == pool.begin() ? pool.end() : std::prev(above)}) {
      if (c == pool.end() || static_cast<double>(c->first) > limit) continue;
      const double m = std::abs(static_cast<double>(c->first) - aim);
      if (miss < 0 || m < miss) {
        miss = m;
        best = c;
      }
    }
    return best;
  }
  // Buckets still on shards outside the targets (empty ones, or left by the fill) go to the
  // target with the least data, then the fewest buckets.
  void drain() {
    std::vector<uint32_t> count(names.size(), 0);
    for (size_t s : owner) ++count[s];
    for (uint32_t b = 0; b < weight.size(); ++b) {
      if (is_target[owner[b]] || !movable(b)) continue;
      size_t best = names.size();
      for (size_t s = 0; s < names.size(); ++s) {
        if (is_target[s] && (best == names.size() || load[s] < load[best] ||
                             (load[s] == load[best] && count[s] < count[best])))
          best = s;
      }
      --count[owner[b]];
      ++count[best];
      move(b, best);
    }
  }

  // Exchanges a bucket of `heavy` for a lighter one of `light`, the difference closest to `want`,
  // where that keeps every bucket on its home or on a shard it was planned to move to (bucket
  // counts stay, no new migration). False when no exchange gets closer to `want`.
  bool swap(size_t heavy, size_t light, double want) {
    std::vector<std::pair<uint64_t, uint32_t>> lighter;  // (weight, bucket) on `light`
    for (uint32_t b = 0; b < weight.size(); ++b)
      if (owner[b] == light && movable(b) && (home[b] == heavy || home[b] == light))
        lighter.push_back({weight[b], b});
    std::sort(lighter.begin(), lighter.end());
    double best_miss = want;
    uint32_t best_x = 0, best_y = 0;
    bool found = false;
    for (uint32_t x = 0; x < weight.size(); ++x) {
      if (owner[x] != heavy || !movable(x) || (home[x] != heavy && home[x] != light)) continue;
      const double goal = static_cast<double>(weight[x]) - want;  // the weight of y that fits best
      auto it =
          std::lower_bound(lighter.begin(), lighter.end(),
                           std::pair<uint64_t, uint32_t>{goal <= 0 ? 0 : static_cast<uint64_t>(goal), 0});
      for (auto c : {it, it == lighter.begin() ? it : it - 1}) {
        if (c == lighter.end() || c->first >= weight[x]) continue;
        if (home[x] == heavy && home[c->second] == light) continue;  // both would leave home
        const double miss = std::abs(static_cast<double>(weight[x] - c->first) - want);
        if (miss < best_miss) {
          best_miss = miss;
          best_x = x;
          best_y = c->second;
          found = true;
        }
      }
    }
    if (!found) return false;
    move(best_x, light);
    move(best_y, heavy);
    return true;
  }
  // Moves the bucket of `heavy` closest to `want` to `light`; false when none gets closer.
  bool give(size_t heavy, size_t light, double want) {
    uint32_t best = static_cast<uint32_t>(weight.size());
    double best_miss = want;
    for (uint32_t b = 0; b < weight.size(); ++b) {
      if (owner[b] != heavy || !movable(b) || weight[b] == 0) continue;
      const double miss = std::abs(static_cast<double>(weight[b]) - want);
      if (miss < best_miss) {
        best_miss = miss;
        best = b;
      }
    }
    if (best == weight.size()) return false;
    move(best, light);
    return true;
  }
  // While a target is off the band (a bucket too heavy for the fill, or MIGRATING buckets in the
  // way), the heaviest target trades with the lightest.
  void settle() {
    for (size_t round = 0; round < 2 * weight.size(); ++round) {
      const size_t heavy = extreme(true), light = extreme(false);
      const double over = static_cast<double>(load[heavy]) - mean;
      const double under = mean - static_cast<double>(load[light]);
      if (over <= allowed && under <= allowed) break;
      const double want = std::min(over, under);
      if (!swap(heavy, light, want) && !give(heavy, light, want)) break;
    }
  }
};

// Each bucket's weight: bytes when any bucket has bytes measured, else rows.
std::vector<uint64_t> weights(const router::Directory& directory, const BucketSizes& sizes, bool by_bytes) {
  std::vector<uint64_t> weight(directory.bucket_count(), 0);
  for (const auto& [b, size] : sizes)
    if (b < weight.size()) weight[b] = by_bytes ? size.bytes : size.rows;
  return weight;
}

bool any_bytes(const BucketSizes& sizes) {
  for (const auto& [b, size] : sizes)
    if (size.bytes > 0) return true;
  return false;
}

// The least rows (bytes) any plan moves to bring every target within `tolerance` of the mean.
uint64_t minimum_of(const router::Directory& directory, const std::vector<std::string>& targets,
                    const std::vector<uint64_t>& weight, double tolerance) {
  std::vector<std::string> names;
  std::vector<bool> is_target;
  name_shards(directory, targets, names, is_target);
  const auto target_count = static_cast<double>(std::count(is_target.begin(), is_target.end(), true));
  if (target_count == 0) return 0;
  const std::vector<double> load = loads_now(directory, names.size(), weight);
  double total = 0;
  for (double l : load) total += l;
  const double mean = total / target_count;
  const Flows f = flows_to_band(load, is_target, mean * (1 - tolerance), mean * (1 + tolerance));
  return static_cast<uint64_t>(std::llround(std::max(f.out, f.in)));
}

}  // namespace

std::vector<PlannedMove> plan_rebalance_by_data(const router::Directory& directory,
                                                const std::vector<std::string>& targets,
                                                const BucketSizes& sizes, double tolerance) {
  const uint32_t bucket_total = directory.bucket_count();
  DataBalancer d{directory, {}, {}, weights(directory, sizes, any_bytes(sizes)), {}, {}, {}};
  uint64_t total = 0;
  for (uint64_t w : d.weight) total += w;
  if (total == 0) {
    std::map<uint32_t, uint64_t> none;
    return plan_rebalance(directory, targets, none);
  }
  name_shards(directory, targets, d.names, d.is_target);
  const size_t shard_count = d.names.size();
  const auto target_count = static_cast<double>(std::count(d.is_target.begin(), d.is_target.end(), true));
  if (target_count == 0 || bucket_total == 0) return {};
  d.load.assign(shard_count, 0);
  for (uint32_t b = 0; b < bucket_total; ++b) {
    d.home.push_back(directory.bucket(b).shard);
    d.owner.push_back(d.home.back());
    d.load[d.home.back()] += d.weight[b];
  }
  d.mean = static_cast<double>(total) / target_count;
  d.allowed = d.mean * tolerance;
  // Aim at half the band, so that a bucket's granularity still ends within it.
  const double aim = d.mean * tolerance * 0.5;
  d.fill(goals(loads_now(directory, shard_count, d.weight), d.is_target, d.mean - aim, d.mean + aim), aim);
  d.drain();
  d.settle();
  return moves_between(directory, d.names, d.owner);
}

BucketSize minimum_to_move(const router::Directory& directory, const std::vector<std::string>& targets,
                           const BucketSizes& sizes, double tolerance) {
  return {minimum_of(directory, targets, weights(directory, sizes, false), tolerance),
          minimum_of(directory, targets, weights(directory, sizes, true), tolerance)};
}

}  // namespace sw::mover
