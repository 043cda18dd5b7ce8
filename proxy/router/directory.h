// The bucket directory: bucket -> (shard, state) plus a monotonically increasing version.
// Immutable once built; proxies hold a std::shared_ptr<const Directory> and swap it whole.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sw::router {

enum class BucketState : uint8_t { Active, Migrating };

const char* bucket_state_name(BucketState state);  // "ACTIVE" | "MIGRATING"

struct BucketEntry {
  uint16_t shard = 0;  // index into shards()
  BucketState state = BucketState::Active;
  uint64_t version = 0;  // directory version that last changed this bucket
  bool operator==(const BucketEntry&) const = default;
};

// Shards 0..configured_count-1 are this instance's configured shards (in config order); any
// after them are named only by the catalog (a shard added to the directory before this
// instance's config): their buckets cannot be served until the config names them and is reloaded.
class Directory {
 public:
  Directory(uint64_t version, std::vector<std::string> shards, std::vector<BucketEntry> buckets);
  Directory(uint64_t version, std::vector<std::string> shards, std::vector<BucketEntry> buckets,
            uint16_t configured_count);

  // Bucket i on shard i mod N: the layout `shardwire init` creates (and PostgreSQL's
  // PARTITION BY HASH ... MODULUS N gives, when buckets is a multiple of N).
  static std::shared_ptr<const Directory> initial(uint32_t bucket_count, std::vector<std::string> shards);

  uint64_t version() const { return version_; }
  uint32_t bucket_count() const { return static_cast<uint32_t>(buckets_.size()); }
  const BucketEntry& bucket(uint32_t b) const { return buckets_[b]; }
  const std::vector<std::string>& shards() const { return shards_; }
  const std::string& shard_name(uint16_t index) const { return shards_[index]; }
  // Index of a shard by name, or -1.
  int shard_index(std::string_view name) const;
  // Buckets owned by a shard.
  uint32_t owned_by(uint16_t shard) const;
  // The MIGRATING buckets, ascending (found once, when the directory is built: scatter reads
  // consult it on every statement).
  const std::vector<uint32_t>& migrating() const { return migrating_; }
  // False for a shard named only by the catalog (not in this instance's config).
  bool configured(uint16_t shard) const { return shard < configured_count_; }
  uint16_t configured_count() const { return configured_count_; }
  bool all_configured() const { return configured_count_ == shards_.size(); }
  // Same version, shards (names, order, configured count) and buckets.
  bool operator==(const Directory&) const = default;

 private:
  void find_migrating();

  uint64_t version_;
  uint16_t configured_count_;
  std::vector<std::string> shards_;
  std::vector<BucketEntry> buckets_;
  std::vector<uint32_t> migrating_;
};

}  // namespace sw::router
