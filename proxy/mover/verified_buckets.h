// Which buckets of a migration are known equal on both shards (docs/architecture.md §8.5): a
// verification round found their counts and checksums equal, and the catch-up stream has not
// changed them since. The cutover's verification, taken with the source fenced and drained, then
// scans only the others: the write pause does not grow with the rows a migration moves.
//
// Sound because, while the stream runs, every change to a moving bucket on either shard is a
// change the stream applies: the source's changes reach the target only through it, and the
// target's fence refuses every other writer of these buckets. So a bucket found equal, whose
// changes since were all applied (the stream has processed the source's WAL up to a position read
// after the change) and none of which touched it, is still equal. Pure bookkeeping, no I/O; the
// runner feeds it the stream's record (CatchUpStream::take_changed_buckets) and the rounds' results,
// and starts a new one with every new stream (a new stream has no record of what the old one did).
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "mover/mover_types.h"

namespace sw::mover {

class VerifiedBuckets {
 public:
  VerifiedBuckets() = default;
  explicit VerifiedBuckets(BucketSet buckets) : buckets_(std::move(buckets)) {}

  // The stream changed (or may have changed) these since the previous call: not known equal now.
  void changed(const std::set<uint32_t>& buckets);

  // A round scanned `scanned` on both shards after the stream's record was last taken (changed()),
  // and took it again (`changed_during`) once the stream had processed the source's WAL up to a
  // position read after both scans. Buckets of `scanned` that are not in `mismatched` nor in
  // `changed_during` are known equal; `changed_during` is no longer known equal either way.
  void round(const BucketSet& scanned, const std::vector<uint32_t>& mismatched,
             const std::set<uint32_t>& changed_during);

  // The buckets not known equal, ascending: what the next round, or the cutover, must scan.
  BucketSet unverified() const;
  size_t known_equal() const { return equal_.size(); }
  size_t size() const { return buckets_.list().size(); }

 private:
  BucketSet buckets_;
  std::set<uint32_t> equal_;
};

}  // namespace sw::mover
