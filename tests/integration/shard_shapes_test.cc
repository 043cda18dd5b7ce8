// A sharded table whose definition differs between shards (a DDL applied on some shards only, here
// made directly on one shard): a keyless read through shardwire must not relay one shard's
// columns over another shard's rows. Catalog + 3 shards, both pool modes: SELECT * (concatenated),
// SELECT * ... ORDER BY (merged), the same inside a transaction block, a merged cursor's DECLARE
// and a split INSERT ... RETURNING * fail with 42804 naming both shards and the first difference
// (the INSERT rolled back everywhere), the connection goes on, and once the DDL is repaired on
// that shard the reads return every row again (docs/architecture.md §5.6).
#include "it_test.h"

#include <string>
#include <vector>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const std::string kShards1Wider =
    "the shards answered with different result columns: shard s1 returned 5 columns where shard s0 returned "
    "4 "
    "(the table differs between shards; make its definition the same on every shard)";
const std::string kAdvice =
    " (the table differs between shards; make its definition the same on every shard)";

// Whether `error` is the shape error with one of `differences` (a merged read compares each shard
// with the first to describe its columns, whichever answered first).
bool shape_error(const std::string& error, const std::vector<std::string>& differences) {
  for (const std::string& difference : differences) {
    std::string expected = "the shards answered with different result columns: ";
    expected.append(difference).append(kAdvice);
    if (error == expected) return true;
  }
  return false;
}

// Each read of orders across the shards fails with one of `differences`; the connection goes on.
void check_refused(PgConn& c, const std::vector<std::string>& differences) {
  for (const char* sql : {"SELECT * FROM orders", "SELECT * FROM orders ORDER BY tenant_id, id"}) {
    CAPTURE(sql);
    PgResult r = c.exec(sql);
    CHECK(r.sqlstate() == "42804");
    CHECK_MESSAGE(shape_error(r.error(), differences), r.error());
    CHECK(c.value("SELECT 1") == "1");
  }
  // Inside a transaction block the read fails the transaction, as a shard's error there does.
  REQUIRE_OK(c.exec("BEGIN"));
  PgResult in_block = c.exec("SELECT * FROM orders");
  CHECK(in_block.sqlstate() == "42804");
  CHECK_MESSAGE(shape_error(in_block.error(), differences), in_block.error());
  CHECK(c.exec("SELECT 1").sqlstate() == "25P02");
  REQUIRE_OK(c.exec("ROLLBACK"));
  // A cursor merged across the shards: its DECLARE compares the shards' columns.
  REQUIRE_OK(c.exec("BEGIN"));
  PgResult declare = c.exec("DECLARE c CURSOR FOR SELECT * FROM orders");
  CHECK(declare.sqlstate() == "42804");
  CHECK_MESSAGE(shape_error(declare.error(), differences), declare.error());
  REQUIRE_OK(c.exec("ROLLBACK"));
}

void check_reads(PgConn& c, int rows) {
  PgResult all = c.exec("SELECT * FROM orders");
  REQUIRE_OK(all);
  CHECK(all.rows() == rows);
  CHECK(all.cols() == 4);
  PgResult merged = c.exec("SELECT * FROM orders ORDER BY tenant_id, id");
  REQUIRE_OK(merged);
  CHECK(merged.rows() == rows);
  REQUIRE_OK(c.exec("BEGIN"));
  REQUIRE_OK(c.exec("DECLARE c CURSOR FOR SELECT * FROM orders"));
  CHECK(c.exec("FETCH ALL FROM c").rows() == rows);
  REQUIRE_OK(c.exec("COMMIT"));
}

}  // namespace

TEST_SUITE("shard_shapes") {
  TEST_CASE("a keyless read over shards whose table differs fails with 42804 until it is repaired") {
    PROXY_ONLY();
    for (bool session : {false, true}) {
      CAPTURE(session);
      ShardedFixture f(session ? session_pooling() : ShardedOptions{});
      INFO("proxy log:\n" << f.log_tail(30));
      PgConn c = f.client();
      for (int s = 0; s < kShards; ++s)
        REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" +
                          std::to_string(tenant_on(s, kShards)) + ", 'n" + std::to_string(s) + "')"));
      check_reads(c, kShards);

      {  // a column added on s1 only
        PgConn s1 = f.setup.shard(1);
        REQUIRE_OK(s1.exec("ALTER TABLE orders ADD COLUMN extra integer"));
      }
      check_refused(c, {"shard s1 returned 5 columns where shard s0 returned 4",
                        "shard s2 returned 4 columns where shard s1 returned 5"});
      {  // an INSERT split over the shards, RETURNING *: refused, and rolled back on every shard
        const std::string values = "(" + std::to_string(tenant_on(0, kShards)) + ", 'split'), (" +
                                   std::to_string(tenant_on(1, kShards)) + ", 'split')";
        PgResult split = c.exec("INSERT INTO orders (tenant_id, note) VALUES " + values + " RETURNING *");
        CHECK(split.sqlstate() == "42804");
        CHECK_MESSAGE(split.error() == kShards1Wider + "; rolled back on every shard", split.error());
        // An INSERT ... SELECT on several shards (rows of every shard under one RowDescription).
        PgResult copied = c.exec(
            "INSERT INTO orders (tenant_id, note) SELECT tenant_id, note FROM orders "
            "RETURNING *");
        CHECK(copied.sqlstate() == "42804");
        CHECK_MESSAGE(copied.error().find("different result columns") != std::string::npos, copied.error());
        CHECK(c.value("SELECT 1") == "1");
      }
      {
        PgConn s1 = f.setup.shard(1);
        REQUIRE_OK(s1.exec("ALTER TABLE orders DROP COLUMN extra"));
      }
      check_reads(c, kShards);

      {  // a column's type changed on s2 only
        PgConn s2 = f.setup.shard(2);
        REQUIRE_OK(s2.exec("ALTER TABLE orders ALTER COLUMN qty TYPE bigint"));
      }
      check_refused(c, {"column 4 \"qty\" is bigint on shard s2 and integer on shard s0",
                        "column 4 \"qty\" is bigint on shard s2 and integer on shard s1"});
      {
        PgConn s2 = f.setup.shard(2);
        REQUIRE_OK(s2.exec("ALTER TABLE orders ALTER COLUMN qty TYPE integer"));
      }
      check_reads(c, kShards);
    }
  }
}
