// LatencyHistogram: bucket edges (a value on a bound belongs to that bound's bucket, one
// microsecond more to the next), the +Inf bucket, sum/count and merge.
#include "stats/latency_histogram.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <numeric>

using sw::stats::LatencyHistogram;

namespace {

constexpr size_t kBuckets = LatencyHistogram::kBounds.size() + 1;

uint64_t bound_us(size_t i) {
  return static_cast<uint64_t>(std::llround(LatencyHistogram::kBounds[i] * 1e6));
}

// The index of the only non-zero bucket of a histogram holding one observation.
size_t bucket_of(uint64_t micros) {
  LatencyHistogram h;
  h.observe_us(micros);
  size_t found = kBuckets;
  for (size_t i = 0; i < kBuckets; ++i) {
    if (h.counts()[i] == 0) continue;
    CHECK(h.counts()[i] == 1);
    CHECK(found == kBuckets);  // exactly one bucket
    found = i;
  }
  return found;
}

}  // namespace

TEST_CASE("the bounds are the documented seconds, ascending") {
  const uint64_t expected[] = {500,    1000,   2500,   5000,    10000,   25000,   50000,
                               100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
  REQUIRE(LatencyHistogram::kBounds.size() == std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) CHECK(bound_us(i) == expected[i]);
  CHECK(kBuckets == 15);
}

TEST_CASE("a value exactly on a bound is in that bucket; one microsecond more is in the next") {
  for (size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
    CAPTURE(i);
    CHECK(bucket_of(bound_us(i)) == i);
    CHECK(bucket_of(bound_us(i) + 1) == i + 1);
    CHECK(bucket_of(bound_us(i) - 1) == i);  // bounds are >= 500us apart
  }
}

TEST_CASE("zero is in the first bucket, anything above the last bound in +Inf") {
  CHECK(bucket_of(0) == 0);
  CHECK(bucket_of(1) == 0);
  CHECK(bucket_of(10000001) == kBuckets - 1);
  CHECK(bucket_of(3600ull * 1000000) == kBuckets - 1);
  CHECK(bucket_of(UINT64_MAX / 2) == kBuckets - 1);
}

TEST_CASE("count and sum") {
  LatencyHistogram h;
  CHECK(h.count() == 0);
  CHECK(h.sum_seconds() == 0.0);
  for (uint64_t us : {250u, 1500u, 2000000u, 30000000u}) h.observe_us(us);
  CHECK(h.count() == 4);
  CHECK(h.sum_seconds() == doctest::Approx(32.00175).epsilon(1e-12));
  CHECK(std::accumulate(h.counts().begin(), h.counts().end(), uint64_t{0}) == 4);
  CHECK(h.counts()[0] == 1);   // 250us <= 0.5ms
  CHECK(h.counts()[2] == 1);   // 1.5ms in (1ms, 2.5ms]
  CHECK(h.counts()[11] == 1);  // 2s in (1s, 2.5s]
  CHECK(h.counts()[14] == 1);  // 30s: +Inf
}

TEST_CASE("merge adds counts, count and sum, and leaves the other unchanged") {
  LatencyHistogram a, b;
  a.observe_us(100);
  a.observe_us(20000);
  b.observe_us(100);
  b.observe_us(99000000);
  b.observe_us(700);
  a.merge(b);
  CHECK(a.count() == 5);
  CHECK(a.sum_seconds() == doctest::Approx(99.0209).epsilon(1e-12));
  CHECK(a.counts()[0] == 2);
  CHECK(a.counts()[1] == 1);
  CHECK(a.counts()[5] == 1);
  CHECK(a.counts()[14] == 1);
  CHECK(b.count() == 3);

  LatencyHistogram empty;
  LatencyHistogram copy = a;
  a.merge(empty);
  CHECK(a.counts() == copy.counts());
  CHECK(a.count() == copy.count());
  CHECK(a.sum_seconds() == copy.sum_seconds());
  empty.merge(copy);
  CHECK(empty.counts() == copy.counts());
  CHECK(empty.count() == 5);
}
