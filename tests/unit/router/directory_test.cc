// Directory: the initial layout, lookups by shard, and the MIGRATING buckets found once at build.
#include "router/directory.h"

#include <doctest/doctest.h>

namespace sw::router {

TEST_CASE("the initial directory puts bucket i on shard i mod N, nothing migrating") {
  auto dir = Directory::initial(8, {"s0", "s1", "s2"});
  CHECK(dir->version() == 1);
  CHECK(dir->bucket(4).shard == 1);
  CHECK(dir->owned_by(0) == 3);
  CHECK(dir->owned_by(2) == 2);
  CHECK(dir->shard_index("s2") == 2);
  CHECK(dir->shard_index("s9") == -1);
  CHECK(dir->migrating().empty());
}

TEST_CASE("the migrating list holds exactly the MIGRATING buckets, ascending") {
  std::vector<BucketEntry> buckets(6);
  buckets[5].state = BucketState::Migrating;
  buckets[1].state = BucketState::Migrating;
  const Directory dir(7, {"s0", "s1"}, buckets, 1);
  CHECK(dir.migrating() == std::vector<uint32_t>{1, 5});
  CHECK(dir.configured(0));
  CHECK_FALSE(dir.configured(1));
  const Directory same(7, {"s0", "s1"}, buckets, 1);
  CHECK(dir == same);
}

}  // namespace sw::router
