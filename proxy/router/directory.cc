#include "router/directory.h"

#include <algorithm>

namespace sw::router {

const char* bucket_state_name(BucketState state) {
  return state == BucketState::Active ? "ACTIVE" : "MIGRATING";
}

Directory::Directory(uint64_t version, std::vector<std::string> shards, std::vector<BucketEntry> buckets)
    : version_(version),
      configured_count_(static_cast<uint16_t>(shards.size())),
      shards_(std::move(shards)),
      buckets_(std::move(buckets)) {
  find_migrating();
}

Directory::Directory(uint64_t version, std::vector<std::string> shards, std::vector<BucketEntry> buckets,
                     uint16_t configured_count)
    : version_(version),
      configured_count_(std::min<uint16_t>(configured_count, static_cast<uint16_t>(shards.size()))),
      shards_(std::move(shards)),
      buckets_(std::move(buckets)) {
  find_migrating();
}

void Directory::find_migrating() {
  for (uint32_t b = 0; b < buckets_.size(); ++b)
    if (buckets_[b].state == BucketState::Migrating) migrating_.push_back(b);
}

std::shared_ptr<const Directory> Directory::initial(uint32_t bucket_count, std::vector<std::string> shards) {
  std::vector<BucketEntry> buckets(bucket_count);
  uint16_t n = static_cast<uint16_t>(shards.size());
  for (uint32_t b = 0; b < bucket_count; ++b) buckets[b].shard = static_cast<uint16_t>(b % n);
  return std::make_shared<const Directory>(1, std::move(shards), std::move(buckets));
}

int Directory::shard_index(std::string_view name) const {
  auto it = std::find(shards_.begin(), shards_.end(), name);
  return it == shards_.end() ? -1 : static_cast<int>(it - shards_.begin());
}

uint32_t Directory::owned_by(uint16_t shard) const {
  return static_cast<uint32_t>(std::count_if(buckets_.begin(), buckets_.end(),
                                             [shard](const BucketEntry& e) { return e.shard == shard; }));
}

}  // namespace sw::router
