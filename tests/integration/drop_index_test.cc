// DROP INDEX through shardwire with a catalog and 3 shards: an index of a sharded table is dropped
// on every shard (each shard's catalog says whether the index is a sharded table's), so a later
// CREATE INDEX of the same name applies everywhere; an index of an unsharded table is dropped on
// the default shard only, and a same-named index of another table on another shard stays; the
// default shard's own errors reach the client; in a transaction block, and CONCURRENTLY, it is
// refused with 0A000.
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string exists_on(const ShardedFixture& f, int shard, const std::string& index) {
  PgConn c = f.setup.shard(shard);
  return c.value("SELECT to_regclass('" + index + "') IS NOT NULL");
}

}  // namespace

TEST_SUITE("drop_index") {
  TEST_CASE("DROP INDEX of a sharded table's index runs on every shard") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn c = f.client();
    REQUIRE_OK(c.exec("CREATE INDEX orders_note_idx ON orders (note)"));
    for (int s = 0; s < kShards; ++s) REQUIRE(exists_on(f, s, "orders_note_idx") == "t");

    PgResult drop = c.exec("DROP INDEX orders_note_idx");
    CHECK_OK(drop);
    CHECK(drop.command_tag() == "DROP INDEX");
    for (int s = 0; s < kShards; ++s)
      CHECK_MESSAGE(exists_on(f, s, "orders_note_idx") == "f", "shard s" << s);
    // Half-applied before: the shards that kept the index refused the CREATE.
    CHECK_OK(c.exec("CREATE INDEX orders_note_idx ON orders (note)"));
    CHECK_OK(c.exec("CREATE INDEX orders_qty_idx ON orders (qty)"));
    CHECK_OK(c.exec("drop index if exists public.orders_note_idx, \"orders_qty_idx\" restrict"));
    for (int s = 0; s < kShards; ++s) {
      CHECK(exists_on(f, s, "orders_note_idx") == "f");
      CHECK(exists_on(f, s, "orders_qty_idx") == "f");
    }

    // An unsharded table lives on the default shard; s1 has a table of its own with an index of
    // the same name, which is not the client's to drop.
    REQUIRE_OK(c.exec("CREATE TABLE plain (x int)"));
    REQUIRE_OK(c.exec("CREATE INDEX plain_x ON plain (x)"));
    {
      PgConn s1 = f.setup.shard(1);
      REQUIRE_OK(s1.exec("CREATE TABLE plain (x int)"));
      REQUIRE_OK(s1.exec("CREATE INDEX plain_x ON plain (x)"));
    }
    CHECK_OK(c.exec("DROP INDEX plain_x"));
    CHECK(exists_on(f, 0, "plain_x") == "f");
    CHECK(exists_on(f, 1, "plain_x") == "t");

    PgResult missing = c.exec("DROP INDEX no_such_index");
    CHECK(missing.sqlstate() == "42704");
    CHECK_OK(c.exec("DROP INDEX IF EXISTS no_such_index"));

    REQUIRE_OK(c.exec("CREATE INDEX orders_note_idx ON orders (note)"));
    CHECK(c.exec("DROP INDEX CONCURRENTLY orders_note_idx").sqlstate() == "0A000");
    REQUIRE_OK(c.exec("BEGIN"));
    PgResult in_transaction = c.exec("DROP INDEX orders_note_idx");
    CHECK(in_transaction.sqlstate() == "0A000");
    CHECK(in_transaction.error().find("DROP INDEX") != std::string::npos);
    REQUIRE_OK(c.exec("ROLLBACK"));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, note) VALUES (1, 'x')"));  // the transaction has a shard
    CHECK(c.exec("DROP INDEX orders_note_idx").sqlstate() == "0A000");
    REQUIRE_OK(c.exec("ROLLBACK"));
    for (int s = 0; s < kShards; ++s) CHECK(exists_on(f, s, "orders_note_idx") == "t");
  }
}
