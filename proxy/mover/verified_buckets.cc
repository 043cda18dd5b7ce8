#include "mover/verified_buckets.h"

#include <algorithm>

namespace sw::mover {

void VerifiedBuckets::changed(const std::set<uint32_t>& buckets) {
  for (uint32_t bucket : buckets) equal_.erase(bucket);
}

void VerifiedBuckets::round(const BucketSet& scanned, const std::vector<uint32_t>& mismatched,
                            const std::set<uint32_t>& changed_during) {
  changed(changed_during);
  for (uint32_t bucket : scanned.list()) {
    if (!buckets_.contains(bucket) || changed_during.count(bucket) > 0) continue;
    if (std::binary_search(mismatched.begin(), mismatched.end(), bucket)) {
      equal_.erase(bucket);
    } else {
      equal_.insert(bucket);
    }
  }
}

BucketSet VerifiedBuckets::unverified() const {
  std::vector<uint32_t> out;
  for (uint32_t bucket : buckets_.list())
    if (equal_.count(bucket) == 0) out.push_back(bucket);
  return BucketSet(buckets_.bucket_count(), out);
}

}  // namespace sw::mover
