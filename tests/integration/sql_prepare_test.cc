// SQL-level PREPARE / EXECUTE / DEALLOCATE through shardwire with a catalog and 3 shards: EXECUTE
// of a keyed statement reads and writes on the shard that owns its key (in and out of a
// transaction), never on the default shard; DEALLOCATE and DEALLOCATE ALL in any letter case clear
// shardwire's bookkeeping (protocol-level statement names too); the next client of the same pooled
// server does not meet the statement; session pooling keeps the server's own statements.
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

// A bigint sent in binary (8 bytes, network order), as text.
std::string int8_of_binary(const std::string& bytes) {
  if (bytes.size() != 8) return "binary of " + std::to_string(bytes.size()) + " bytes";
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return std::to_string(static_cast<int64_t>(v));
}

}  // namespace

TEST_SUITE("sql_prepare") {
  TEST_CASE("EXECUTE of a keyed statement runs on the shard that owns its key") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;  // one server per shard: every client meets the previous one's
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("PREPARE ins(bigint, text) AS INSERT INTO orders (tenant_id, note) VALUES ($1, $2)"));
    REQUIRE_OK(c.exec("PREPARE sel(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1"));
    PgResult ins = c.exec("EXECUTE ins(" + k(a) + ", 'autocommit')");
    CHECK_OK(ins);
    CHECK(ins.command_tag() == "INSERT 0 1");
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK_OK(c.exec("EXECUTE ins(" + k(a) + ", 'in ' || 'transaction')"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "2");
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "2");
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "autocommit"), row_of(a, "in transaction")});
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1).empty());

    PgResult wrong = c.exec("EXECUTE sel(1, 2)");
    CHECK(wrong.sqlstate() == "42P02");
    PgResult several = c.exec("SELECT 1; EXECUTE sel(" + k(a) + ")");
    CHECK(several.sqlstate() == "0A000");
    CHECK(several.error().find("EXECUTE sel") != std::string::npos);

    // Another client on the same (only) server of each shard: no statement of the first one there.
    PgConn other = f.client();
    CHECK(other.exec("EXECUTE sel(" + k(a) + ")").sqlstate() == "26000");
    CHECK_OK(other.exec("PREPARE ins(int) AS SELECT $1"));
    CHECK(other.value("EXECUTE ins(7)") == "7");

    CHECK_OK(c.exec("DEALLOCATE sel"));
    CHECK(c.exec("EXECUTE sel(" + k(a) + ")").sqlstate() == "26000");
    CHECK_OK(c.exec("PREPARE sel(bigint) AS SELECT count(*) + 100 FROM orders WHERE tenant_id = $1"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "102");
  }

  TEST_CASE("DEALLOCATE ALL in any letter case forgets SQL-level and protocol-level statements") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      for (const std::string spelling : {"DEALLOCATE ALL", "deallocate all", "Deallocate Prepare All"}) {
        CAPTURE(mode);
        CAPTURE(spelling);
        ShardedOptions options;
        options.shards = 1;
        options.proxy.pool_mode = mode;
        ShardedFixture f(options);
        INFO("proxy log:\n" << f.log_tail(30));
        PgConn c = f.client();
        REQUIRE_OK(c.prepare("p1", "SELECT 1 AS one"));
        REQUIRE_OK(c.exec("PREPARE twice(int) AS SELECT $1 * 2"));
        CHECK(c.value("EXECUTE twice(21)") == "42");
        PgResult all = c.exec(spelling);
        CHECK_OK(all);
        CHECK(all.command_tag() == "DEALLOCATE ALL");
        CHECK(c.exec("EXECUTE twice(1)").sqlstate() == "26000");
        CHECK(c.exec_prepared("p1", {}).sqlstate() == "26000");
        // The same names again, as on PostgreSQL (42P05 if shardwire still remembered them).
        CHECK_OK(c.prepare("p1", "SELECT 2 AS two"));
        CHECK(c.exec_prepared("p1", {}).value() == "2");
        CHECK_OK(c.exec("PREPARE twice(int) AS SELECT $1 * 3"));
        CHECK(c.value("EXECUTE twice(2)") == "6");
      }
    }
  }

  // psycopg 3's cursor(binary=True) sends PREPARE and EXECUTE in the extended protocol, with
  // binary results: EXECUTE runs on the key's shard all the same (it ran on the PREPARE's shard:
  // a count of 0, an UPDATE 0 whose write was lost), and DEALLOCATE there forgets the statement.
  TEST_CASE("PREPARE, EXECUTE, DEALLOCATE in the extended protocol with binary results") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      CAPTURE(mode);
      ShardedOptions options;
      options.proxy.pool_mode = mode;
      options.proxy.pool_size = 1;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail(30));
      const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
      PgConn c = f.client();
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(a) + ", 'binary', 1)"));
      auto binary = [&](const std::string& sql) { return c.exec_extended(sql, ResultFormat::Binary); };
      REQUIRE_OK(binary("PREPARE pq(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1"));
      REQUIRE_OK(binary("PREPARE up(bigint) AS UPDATE orders SET qty = qty + 1 WHERE tenant_id = $1"));
      PgResult count = binary("EXECUTE pq(" + k(a) + ")");
      REQUIRE_OK(count);
      CHECK(int8_of_binary(count.value()) == "1");
      PgResult update = binary("EXECUTE up(" + k(a) + ")");
      CHECK_OK(update);
      CHECK(update.command_tag() == "UPDATE 1");
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK(binary("EXECUTE up(" + k(a) + ")").command_tag() == "UPDATE 1");
      CHECK(int8_of_binary(binary("EXECUTE pq(" + k(a) + ")").value()) == "1");
      REQUIRE_OK(c.exec("COMMIT"));
      CHECK(c.value("SELECT qty FROM orders WHERE tenant_id = " + k(a)) == "3");
      CHECK(binary("EXECUTE pq(1, 2)").sqlstate() == "42P02");
      CHECK_OK(binary("DEALLOCATE pq"));
      CHECK(binary("EXECUTE pq(" + k(a) + ")").sqlstate() == "26000");
      CHECK(c.exec("EXECUTE up(" + k(a) + ")").command_tag() == "UPDATE 1");  // the other one runs
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "binary")});
    }
  }
}
