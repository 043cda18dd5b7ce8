// Two-phase commit through shardwire, a catalog and two shards: PREPARE TRANSACTION is refused
// (0A000) rather than left on a shard that a later COMMIT PREPARED would not reach, and COMMIT /
// ROLLBACK PREPARED are refused rather than run on the default shard. No prepared transaction is
// ever left behind (pg_prepared_xacts is checked on the shards' cluster).
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

constexpr int kTwoShards = 2;

// Prepared transactions named `gid` in the shards' cluster; rolled back (directly on their
// database) so that a failing run leaves no locks behind for the other tests.
long long count_and_clean_prepared(const ShardedFixture& f, const std::string& gid) {
  long long found = 0;
  for (int i = 0; i < kTwoShards; ++i) {
    PgConn c = f.setup.shard(i);
    PgResult r = c.exec("SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + gid +
                        "' AND database = current_database()");
    if (!r.ok()) throw std::runtime_error("pg_prepared_xacts: " + r.describe());
    long long here = std::stoll(r.value(0, 0));
    if (here > 0) (void)c.exec("ROLLBACK PREPARED '" + gid + "'");
    found += here;
  }
  return found;
}

}  // namespace

TEST_SUITE("two_phase") {
  TEST_CASE("PREPARE TRANSACTION is refused with 0A000 and leaves nothing prepared on any shard") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = kTwoShards;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const int64_t key = key_where([](uint32_t bucket) { return bucket % kTwoShards == 1; });  // on s1
    const std::string gid = unique_name("sw_gid");
    PgConn c = f.client();

    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'two-phase')"));
    PgResult prepared = c.exec("PREPARE TRANSACTION '" + gid + "'");
    CHECK_FALSE(prepared.ok());
    CHECK(prepared.sqlstate() == "0A000");
    CHECK(contains(prepared.error(), "PREPARE TRANSACTION"));
    CHECK(count_and_clean_prepared(f, gid) == 0);
    // The extended protocol is refused alike.
    PgResult extended = c.exec_params("PREPARE TRANSACTION '" + gid + "'", {});
    CHECK(extended.sqlstate() == "0A000");
    CHECK(count_and_clean_prepared(f, gid) == 0);
    // The transaction is still the client's to end.
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(f.rows_on(1, "note = 'two-phase'").empty());

    for (const char* finish : {"COMMIT PREPARED", "ROLLBACK PREPARED", "commit prepared"}) {
      PgResult r = c.exec(std::string(finish) + " '" + gid + "'");
      CHECK_FALSE(r.ok());
      CHECK(r.sqlstate() == "0A000");
      CHECK(contains(r.error(), "PREPARED"));
    }
    // The session carries on: a keyed write in autocommit lands on its shard.
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'after')"));
    CHECK(f.rows_on(1, "note = 'after'") == std::vector<std::string>{row_of(key, "after")});
    CHECK(count_and_clean_prepared(f, gid) == 0);
  }
}  // TEST_SUITE
