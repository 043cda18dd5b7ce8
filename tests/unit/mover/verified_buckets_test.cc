// What the cutover's verification scans (docs/architecture.md §8.5, §8.6): the buckets not known
// equal, i.e. not found equal by a live round or changed by the stream since.
#include <doctest/doctest.h>

#include "mover/verified_buckets.h"

using sw::mover::BucketSet;
using sw::mover::VerifiedBuckets;

namespace {
std::vector<uint32_t> unverified(const VerifiedBuckets& v) { return v.unverified().list(); }
}  // namespace

TEST_CASE("without a round nothing is known equal: the cutover scans every bucket") {
  VerifiedBuckets v(BucketSet(64, {3, 7, 9, 12}));
  CHECK(unverified(v) == std::vector<uint32_t>{3, 7, 9, 12});
  v.changed({7});
  CHECK(unverified(v) == std::vector<uint32_t>{3, 7, 9, 12});
  CHECK(v.known_equal() == 0);
}

TEST_CASE("a round marks equal buckets that the stream did not change while it ran") {
  VerifiedBuckets v(BucketSet(64, {3, 7, 9, 12}));
  // 9 differs; 12 changed while the scans ran (whatever the scans saw of it).
  v.round(v.unverified(), {9}, {12});
  CHECK(unverified(v) == std::vector<uint32_t>{9, 12});
  CHECK(v.known_equal() == 2);
  // Later changes make a bucket unverified again; the next round scans only those left.
  v.changed({3});
  CHECK(unverified(v) == std::vector<uint32_t>{3, 9, 12});
  v.round(v.unverified(), {}, {});
  CHECK(unverified(v).empty());
  CHECK(v.known_equal() == 4);
}

TEST_CASE("a change during a round unverifies a bucket known equal before it, even unscanned") {
  VerifiedBuckets v(BucketSet(64, {1, 2, 3}));
  v.round(v.unverified(), {}, {});
  REQUIRE(unverified(v).empty());
  v.round(BucketSet(64, {}), {}, {2});
  CHECK(unverified(v) == std::vector<uint32_t>{2});
}

TEST_CASE(
    "a bucket equal earlier that differs in a later round is unverified; buckets outside the set are "
    "ignored") {
  VerifiedBuckets v(BucketSet(64, {1, 2}));
  v.round(v.unverified(), {}, {});
  v.round(BucketSet(64, {1, 2, 40}), {1}, {40});
  CHECK(unverified(v) == std::vector<uint32_t>{1});
  CHECK(v.known_equal() == 1);
  v.changed({50});
  CHECK(v.known_equal() == 1);
}
