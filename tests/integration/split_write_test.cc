// An UPDATE or DELETE whose key lists fall on several shards, run through shardwire on 3 real
// shards with a catalog (docs/architecture.md §6.3, "Writes with key lists on several shards"):
// each shard runs it with the lists cut to its own keys, in one transaction per shard, committed
// together by two-phase commit. The tag sums the shards' counts, RETURNING rows come from every
// shard, each shard changes only rows of its own keys (checked on every shard directly), in both
// protocols (literal lists, = ANY arrays, parameters); an error on one shard changes nothing
// anywhere and leaves nothing prepared; inside BEGIN the parts are the transaction's legs (ROLLBACK
// undoes them, COMMIT commits them); without two-phase commit it is refused, nothing written.
#include "it_test.h"

#include <algorithm>
#include <map>

#include "harness/sharded_fixture.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;

namespace {

// Two rows for each of the tenants a, b, c (one per shard) and one for a2 (shard 0), notes "<id>".
void seed(const ShardedFixture& f, const Tenants& t) {
  PgConn client = f.client();
  const std::vector<std::string> rows = {k(t.a) + ", 1, '1', 1), (" + k(t.a) + ", 2, '2', 2",
                                         k(t.b) + ", 3, '3', 3), (" + k(t.b) + ", 4, '4', 4",
                                         k(t.c) + ", 5, '5', 5), (" + k(t.c) + ", 6, '6', 0",
                                         k(t.a2) + ", 7, '7', 7"};
  for (const std::string& values : rows)  // one shard each: seeds under every cross_shard_transactions
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + values + ")"));
}

// "tenant|note|qty" of every row of orders on shard i, sorted.
std::vector<std::string> qty_on(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  const PgResult r = c.exec("SELECT tenant_id || '|' || note || '|' || qty FROM orders ORDER BY 1");
  REQUIRE_OK(r);
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0));
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

TEST_SUITE("split_write") {
  TEST_CASE("a DELETE and an UPDATE with key lists on 3 shards: each shard its own keys, tags summed") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t);
    PgConn client = f.client();
    PgResult updated = client.exec("UPDATE orders SET qty = qty + 10 WHERE tenant_id IN (" + k(t.a) + ", " +
                                   k(t.b) + ", " + k(t.c) + ") AND id <> 2 RETURNING id, note");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "UPDATE 5");
    CHECK(sorted(returned(updated)) == std::vector<std::string>{"1|1", "3|3", "4|4", "5|5", "6|6"});
    CHECK(qty_on(f, 0) == sorted({k(t.a) + "|1|11", k(t.a) + "|2|2", k(t.a2) + "|7|7"}));
    CHECK(qty_on(f, 1) == sorted({k(t.b) + "|3|13", k(t.b) + "|4|14"}));
    CHECK(qty_on(f, 2) == sorted({k(t.c) + "|5|15", k(t.c) + "|6|10"}));

    // An array literal: = ANY('{...}'), two shards of three.
    PgResult deleted = client.exec("DELETE FROM orders WHERE tenant_id = ANY('{" + k(t.a2) + "," + k(t.c) +
                                   "}') RETURNING note");
    REQUIRE_OK(deleted);
    CHECK(deleted.command_tag() == "DELETE 3");
    CHECK(deleted.rows() == 3);
    CHECK(qty_on(f, 0) == sorted({k(t.a) + "|1|11", k(t.a) + "|2|2"}));
    CHECK(qty_on(f, 2).empty());
    CHECK(qty_on(f, 1).size() == 2u);
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
  }

  TEST_CASE("the extended protocol: each shard's Bind carries only its own list items") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t);
    PgConn client = f.client();
    const std::string a = k(t.a), b = k(t.b), c = k(t.c), qty = "42";
    PgResult updated = client.exec_params(
        "UPDATE orders SET qty = $4 WHERE tenant_id IN ($1, $2, $3) AND id % 2 = 1", {a, b, c, qty});
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "UPDATE 3");
    CHECK(qty_on(f, 0) == sorted({a + "|1|42", a + "|2|2", k(t.a2) + "|7|7"}));
    CHECK(qty_on(f, 1) == sorted({b + "|3|42", b + "|4|4"}));
    CHECK(qty_on(f, 2) == sorted({c + "|5|42", c + "|6|0"}));
    // A text array parameter, as psycopg sends a list: each shard gets its own elements.
    const std::string array = "{" + a + "," + c + "}";
    PgResult deleted = client.exec_params("DELETE FROM orders WHERE tenant_id = ANY($1::bigint[])", {array});
    REQUIRE_OK(deleted);
    CHECK(deleted.command_tag() == "DELETE 4");
    CHECK(qty_on(f, 0) == std::vector<std::string>{k(t.a2) + "|7|7"});
    CHECK(qty_on(f, 2).empty());
    CHECK(qty_on(f, 1).size() == 2u);
    CHECK(shardwire_prepared(f) == 0);
  }

  TEST_CASE("an error on one shard changes nothing anywhere; nothing stays prepared") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t);
    PgConn client = f.client();
    const std::vector<std::string> before[3] = {qty_on(f, 0), qty_on(f, 1), qty_on(f, 2)};
    // Only shard 2 holds a row with qty 0 (tenant c, id 6): its division fails there alone.
    PgResult failed = client.exec("UPDATE orders SET qty = 100 / qty WHERE tenant_id IN (" + k(t.a) + ", " +
                                  k(t.b) + ", " + k(t.c) + ")");
    CHECK(failed.sqlstate() == "22012");
    CHECK(failed.error().find("s2") != std::string::npos);
    for (int s = 0; s < kShards; ++s) CHECK(qty_on(f, s) == before[s]);
    CHECK(shardwire_prepared(f) == 0);
    // The session goes on.
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "2");
  }

  TEST_CASE("inside BEGIN the parts are the transaction's legs: ROLLBACK undoes, COMMIT commits") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t);
    PgConn client = f.client();
    const std::string keys = "(" + k(t.a) + ", " + k(t.c) + ")";
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("UPDATE orders SET note = 'x' WHERE tenant_id = " + k(t.b)));
    PgResult deleted = client.exec("DELETE FROM orders WHERE tenant_id IN " + keys);
    REQUIRE_OK(deleted);
    CHECK(deleted.command_tag() == "DELETE 4");
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id IN " + keys) == "0");
    REQUIRE_OK(client.exec("ROLLBACK"));
    CHECK(qty_on(f, 0).size() == 3u);
    CHECK(qty_on(f, 2).size() == 2u);
    CHECK(f.rows_on(1, "note = 'x'").empty());

    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("UPDATE orders SET note = 'x' WHERE tenant_id = " + k(t.b)));
    REQUIRE_OK(client.exec("UPDATE orders SET note = 'y' WHERE tenant_id IN " + keys));
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(f.rows_on(0, "note = 'y'").size() == 2u);
    CHECK(f.rows_on(2, "note = 'y'").size() == 2u);
    CHECK(f.rows_on(1, "note = 'x'").size() == 2u);
    CHECK(f.rows_on(0, "tenant_id = " + k(t.a2) + " AND note = 'y'").empty());
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
  }

  TEST_CASE("without two-phase commit a write with keys on several shards is refused, nothing written") {
    PROXY_ONLY();
    ShardedFixture f(refusing_cross_shard_transactions());
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t);
    PgConn client = f.client();
    PgResult refused = client.exec("DELETE FROM orders WHERE tenant_id IN (" + k(t.a) + ", " + k(t.b) + ")");
    CHECK(refused.sqlstate() == "0A000");
    CHECK(refused.error().find("with keys on several shards") != std::string::npos);
    CHECK(refused.error().find("cross_shard_transactions") != std::string::npos);
    CHECK(qty_on(f, 0).size() == 3u);
    CHECK(qty_on(f, 1).size() == 2u);
    // Keys on one shard still write there.
    PgResult one = client.exec("DELETE FROM orders WHERE tenant_id IN (" + k(t.a) + ", " + k(t.a2) + ")");
    REQUIRE_OK(one);
    CHECK(one.command_tag() == "DELETE 3");
  }

  TEST_CASE("psycopg 3, psycopg2 and asyncpg: key lists on 3 shards, each driver's way of passing them") {
    PROXY_ONLY();
    const std::map<std::string, std::string> outputs = {
        {"psycopg", "update_any=6\nupdate_any_rows=[11, 11, 11, 12, 12, 12]\ndelete_in=2\nleft=4\ndone\n"},
        {"psycopg2", "update_in=6\ndelete_in=%AB\nleft=4\ndone\n"},
        {"asyncpg",
         "update_in=UPDATE 6\ndelete_in=%BC\nleft=4\nread_any=3\nupdate_any=UPDATE 4\nzeroed=4\ndone\n"},
    };
    for (const auto& entry : outputs) {
      const std::string& driver = entry.first;  // not a structured binding: doctest's INFO captures it
      ShardedFixture f;
      INFO(driver << "; proxy log:\n" << f.log_tail());
      const Tenants t;
      PgConn client = f.client();
      for (int64_t tenant : {t.a, t.b, t.c})
        REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(tenant) +
                               ", 'n', 1), (" + k(tenant) + ", 'n', 2)"));
      const std::string url =
          "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
      const std::string script =
          std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/python/split_write_check.py";
      CommandResult r =
          run_command({"/usr/bin/python3", script, url, driver, k(t.a) + "," + k(t.b) + "," + k(t.c)}, "",
                      std::chrono::seconds(120));
      INFO(r.describe());
      REQUIRE(r.exit_code == 0);
      std::string want = entry.second;
      auto sorted_pair = [](int64_t x, int64_t y) {
        return '[' + k(std::min(x, y)) + ", " + k(std::max(x, y)) + "]";
      };
      if (auto at = want.find("%AB"); at != std::string::npos) want.replace(at, 3, sorted_pair(t.a, t.b));
      if (auto at = want.find("%BC"); at != std::string::npos) want.replace(at, 3, sorted_pair(t.b, t.c));
      CHECK(r.out == want);
      // What is left, on each owner: 4 rows of 6, none misplaced, nothing prepared.
      long long left = 0;
      for (int s = 0; s < kShards; ++s) {
        left += static_cast<long long>(qty_on(f, s).size());
        CHECK(f.misplaced_on(s) == 0);
      }
      CHECK(left == 4);
      CHECK(shardwire_prepared(f) == 0);
    }
  }
}
