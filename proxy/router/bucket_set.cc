#include "router/bucket_set.h"

namespace sw::router {

BucketSet::BucketSet(uint32_t bucket_count, const std::vector<uint32_t>& buckets)
    : member_(bucket_count, false) {
  for (uint32_t b : buckets) {
    if (b < bucket_count) member_[b] = true;
  }
  for (uint32_t b = 0; b < bucket_count; ++b) {
    if (member_[b]) list_.push_back(b);
  }
}

std::string BucketSet::array_literal() const {
  std::string out = "{";
  for (size_t i = 0; i < list_.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(list_[i]);
  }
  return out + "}";
}

}  // namespace sw::router
