// BucketSet: sorted, duplicates and out-of-range buckets dropped, membership, the array literal.
#include "router/bucket_set.h"

#include <doctest/doctest.h>

namespace sw::router {

TEST_CASE("BucketSet sorts, drops duplicates and buckets past the count") {
  const BucketSet set(16, {9, 1, 5, 9, 16, 400});
  CHECK(set.list() == std::vector<uint32_t>{1, 5, 9});
  CHECK(set.bucket_count() == 16);
  CHECK(set.contains(5));
  CHECK_FALSE(set.contains(4));
  CHECK_FALSE(set.contains(16));
  CHECK_FALSE(set.contains(UINT32_MAX));
  CHECK(set.array_literal() == "{1,5,9}");
  const BucketSet none;
  CHECK(none.empty());
  CHECK(none.array_literal() == "{}");
  CHECK_FALSE(none.contains(0));
}

}  // namespace sw::router
