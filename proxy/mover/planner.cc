#include "mover/planner.h"

#include <algorithm>
#include <cstdio>

namespace sw::mover {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Status list_error(std::string_view text, const std::string& why) {
  return Status::client("22023", "invalid bucket list \"" + std::string(text) + "\": " + why);
}

// A bucket number: digits only, below bucket_count.
Result<uint32_t> parse_bucket(std::string_view whole, std::string_view item, uint32_t bucket_count) {
  item = trim(item);
  if (item.empty()) return list_error(whole, "a range needs a number on both sides of '-'");
  uint64_t value = 0;
  for (char c : item) {
    if (c < '0' || c > '9') {
      std::string message(1, '"');
      message += item;
      return list_error(whole, message += "\" is not a bucket number");
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value >= bucket_count) break;  // also stops overflow on absurdly long numbers
  }
  if (value >= bucket_count) {
    return list_error(whole, "bucket " + std::string(item) + " is out of range (buckets are 0-" +
                                 std::to_string(bucket_count - 1) + ")");
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

Result<std::vector<uint32_t>> parse_bucket_list(std::string_view text, uint32_t bucket_count) {
  if (trim(text).empty()) return list_error(text, "no buckets given");
  if (bucket_count == 0) return list_error(text, "there are no buckets");
  std::vector<bool> chosen(bucket_count, false);
  std::string_view rest = text;
  for (;;) {
    const size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) return list_error(text, "empty item");
    const size_t dash = item.find('-');
    auto first = parse_bucket(text, item.substr(0, dash), bucket_count);
    if (!first) return first.status();
    uint32_t last = *first;
    if (dash != std::string_view::npos) {
      auto end = parse_bucket(text, item.substr(dash + 1), bucket_count);
      if (!end) return end.status();
      if (*end < *first) return list_error(text, "range " + std::string(item) + " is backwards");
      last = *end;
    }
    for (uint32_t b = *first; b <= last; ++b) chosen[b] = true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::vector<uint32_t> out;
  for (uint32_t b = 0; b < bucket_count; ++b) {
    if (chosen[b]) out.push_back(b);
  }
  return out;
}

void name_shards(const router::Directory& directory, const std::vector<std::string>& targets,
                 std::vector<std::string>& names, std::vector<bool>& is_target) {
  names = directory.shards();
  is_target.assign(names.size(), targets.empty());
  for (const std::string& name : targets) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      names.push_back(name);
      is_target.push_back(true);
    } else {
      is_target[static_cast<size_t>(it - names.begin())] = true;
    }
  }
}

std::vector<PlannedMove> plan_rebalance(const router::Directory& directory,
                                        const std::vector<std::string>& targets,
                                        const std::map<uint32_t, uint64_t>& rows) {
  std::vector<std::string> names;
  std::vector<bool> is_target;
  name_shards(directory, targets, names, is_target);
  const size_t shard_count = names.size();
  const uint32_t bucket_total = directory.bucket_count();
  const auto target_count = static_cast<uint32_t>(std::count(is_target.begin(), is_target.end(), true));
  if (target_count == 0 || bucket_total == 0) return {};

  std::vector<uint32_t> load(shard_count, 0);
  std::vector<std::vector<uint32_t>> movable(shard_count);  // ACTIVE buckets per shard
  for (uint32_t b = 0; b < bucket_total; ++b) {
    const router::BucketEntry& entry = directory.bucket(b);
    ++load[entry.shard];
    if (entry.state == router::BucketState::Active) movable[entry.shard].push_back(b);
  }

  // Quotas: floor for every target, +1 for the B mod K most loaded ones.
  std::vector<size_t> by_load;
  for (size_t s = 0; s < shard_count; ++s) {
    if (is_target[s]) by_load.push_back(s);
  }
  std::stable_sort(by_load.begin(), by_load.end(), [&](size_t x, size_t y) { return load[x] > load[y]; });
  std::vector<uint32_t> quota(shard_count, 0);
  for (size_t i = 0; i < by_load.size(); ++i) {
    quota[by_load[i]] = bucket_total / target_count + (i < bucket_total % target_count ? 1 : 0);
  }

  // What each donor gives (its lightest ACTIVE buckets) and what each receiver lacks.
  auto weight = [&rows](uint32_t b) {
    const auto it = rows.find(b);
    return it == rows.end() ? uint64_t{0} : it->second;
  };
  std::vector<std::vector<uint32_t>> gives(shard_count);
  std::vector<uint32_t> lacks(shard_count, 0);
  for (size_t s = 0; s < shard_count; ++s) {
    if (load[s] > quota[s]) {
      std::vector<uint32_t>& candidates = movable[s];
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](uint32_t x, uint32_t y) { return weight(x) < weight(y); });  // ascending b on ties
      candidates.resize(std::min<size_t>(candidates.size(), load[s] - quota[s]));
      gives[s] = std::move(candidates);
    } else {
      lacks[s] = quota[s] - load[s];
    }
  }

  // Donors fill receivers one after the other, both in shard order.
  std::vector<PlannedMove> plan;
  size_t receiver = 0;
  for (size_t donor = 0; donor < shard_count; ++donor) {
    for (uint32_t bucket : gives[donor]) {
      while (receiver < shard_count && lacks[receiver] == 0) ++receiver;
      if (receiver == shard_count) break;
      if (plan.empty() || plan.back().source != names[donor] || plan.back().target != names[receiver])
        plan.push_back({names[donor], names[receiver], {}});
      plan.back().buckets.push_back(bucket);
      --lacks[receiver];
    }
  }
  for (PlannedMove& move : plan) std::sort(move.buckets.begin(), move.buckets.end());
  return plan;
}

std::vector<ShardLoad> loads_after(const router::Directory& directory, const std::vector<PlannedMove>& plan,
                                   const BucketSizes& sizes) {
  std::vector<ShardLoad> loads;
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < loads.size(); ++i)
      if (loads[i].shard == name) return i;
    loads.push_back({name});
    return loads.size() - 1;
  };
  for (const std::string& name : directory.shards()) index_of(name);
  std::vector<size_t> owner(directory.bucket_count());
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) owner[b] = directory.bucket(b).shard;
  for (const PlannedMove& m : plan) {
    const size_t to = index_of(m.target);
    for (uint32_t b : m.buckets) owner[b] = to;
  }
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) {
    ShardLoad& load = loads[owner[b]];
    ++load.buckets;
    if (const auto it = sizes.find(b); it != sizes.end()) {
      load.rows += it->second.rows;
      load.bytes += it->second.bytes;
    }
  }
  return loads;
}

std::string describe_spread(const std::vector<ShardLoad>& loads) {
  uint64_t rows = 0, bytes = 0;
  size_t holding = 0;
  for (const ShardLoad& l : loads) {
    rows += l.rows;
    bytes += l.bytes;
    holding += l.buckets > 0 ? 1 : 0;
  }
  const bool by_bytes = bytes > 0;
  const double mean =
      holding == 0 ? 0 : static_cast<double>(by_bytes ? bytes : rows) / static_cast<double>(holding);
  std::string out;
  for (const ShardLoad& l : loads) {
    char deviation[32] = "";
    if (mean > 0 && l.buckets > 0)
      std::snprintf(deviation, sizeof(deviation), " (%+.1f%%)",
                    100.0 * (static_cast<double>(by_bytes ? l.bytes : l.rows) - mean) / mean);
    out += (out.empty() ? "" : ", ") + l.shard + " " + std::to_string(l.buckets) + " buckets " +
           std::to_string(l.rows) + " rows " + std::to_string(l.bytes) + " B" + deviation;
  }
  return out;
}

}  // namespace sw::mover
