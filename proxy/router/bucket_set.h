// A set of buckets (those one migration moves, say), for membership tests on every row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sw::router {

// A sorted list of buckets plus O(1) membership.
class BucketSet {
 public:
  BucketSet() = default;
  // Duplicates are dropped; buckets >= bucket_count are a caller bug (dropped too).
  BucketSet(uint32_t bucket_count, const std::vector<uint32_t>& buckets);
  bool contains(uint32_t bucket) const { return bucket < member_.size() && member_[bucket]; }
  const std::vector<uint32_t>& list() const { return list_; }
  uint32_t bucket_count() const { return static_cast<uint32_t>(member_.size()); }
  bool empty() const { return list_.empty(); }
  // An SQL array literal for an integer[] parameter: "{1,5,9}".
  std::string array_literal() const;

 private:
  std::vector<uint32_t> list_;
  std::vector<bool> member_;
};

}  // namespace sw::router
