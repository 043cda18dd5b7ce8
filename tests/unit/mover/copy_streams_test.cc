// How a copy splits its buckets between streams (mover.copy_streams, docs/architecture.md §8.3):
// every bucket in exactly one share, neighbours apart, never more shares than buckets.
#include <doctest/doctest.h>

#include <set>

#include "mover/copier.h"

using sw::mover::BucketSet;
using sw::mover::split_for_streams;

TEST_CASE("split_for_streams: disjoint shares that cover the set, bucket i to share i mod n") {
  const BucketSet buckets(4096, {3, 9, 17, 40, 41, 100, 2000});
  const auto shares = split_for_streams(buckets, 3);
  REQUIRE(shares.size() == 3);
  CHECK(shares[0].list() == std::vector<uint32_t>{3, 40, 2000});
  CHECK(shares[1].list() == std::vector<uint32_t>{9, 41});
  CHECK(shares[2].list() == std::vector<uint32_t>{17, 100});
  std::multiset<uint32_t> all;
  for (const auto& share : shares) {
    CHECK(share.bucket_count() == 4096);
    all.insert(share.list().begin(), share.list().end());
  }
  CHECK(all == std::multiset<uint32_t>(buckets.list().begin(), buckets.list().end()));
}

TEST_CASE("split_for_streams: one share for one stream, no empty shares, never none") {
  const BucketSet two(64, {5, 6});
  CHECK(split_for_streams(two, 1).size() == 1);
  CHECK(split_for_streams(two, 1)[0].list() == two.list());
  CHECK(split_for_streams(two, 8).size() == 2);
  CHECK(split_for_streams(two, 0).size() == 1);
  CHECK(split_for_streams(BucketSet(64, {}), 4).size() == 1);
}
