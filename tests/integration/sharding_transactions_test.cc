// Transactions through shardwire against a catalog and 3 real shard databases: statements before
// the first routed one of a transaction (a Parse, a SET LOCAL, a savepoint, a SELECT naming no
// table) do not pin it to the default shard; cross-shard transactions (under
// sharding.cross_shard_transactions: refuse), unroutable writes and a DELETE whose key list spans
// shards are refused with 0A000 (a multi-row INSERT across shards runs split: split_insert_test.cc).
// Every case has its own catalog + 3 shard databases and proxy (harness/sharded_fixture.h).
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

}  // namespace

TEST_SUITE("sharding_transactions") {
  TEST_CASE("a Parse/Describe or SET after BEGIN does not pin the transaction to the default shard") {
    PROXY_ONLY();
    // docs/architecture.md §5.3: a Parse/Describe before any Bind may go to any shard; the transaction's
    // shard is picked by its first routed statement. pgbench -M prepared does exactly this with a BEGIN/END
    // script: BEGIN, then PQprepare of the INSERT, then PQexecPrepared.
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
    const int64_t b = key_where([](uint32_t bk) { return bk % kShards == 1; }, 100);

    SUBCASE("PQprepare after BEGIN") {
      REQUIRE_OK(c.exec("BEGIN"));
      // A text no server has seen yet, so the proxy cannot answer the Parse by itself.
      REQUIRE_OK(c.prepare(
          "ins", "INSERT INTO orders (tenant_id, note) VALUES ($1, $2) -- prepared in a transaction"));
      PgResult r = c.exec_prepared("ins", {std::to_string(a), "prepared in tx"});
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      PgResult commit = c.exec("COMMIT");
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "prepared in tx")});
    }
    SUBCASE("PQprepare and PQdescribePrepared after BEGIN (extended protocol throughout)") {
      REQUIRE_OK(c.exec_params("BEGIN", {}));
      REQUIRE_OK(
          c.prepare("upd", "UPDATE orders SET note = $2 WHERE tenant_id = $1 -- described in a transaction"));
      PGresult* d = PQdescribePrepared(c.get(), "upd");
      CHECK(PQresultStatus(d) == PGRES_COMMAND_OK);
      CHECK(PQnparams(d) == 2);
      PQclear(d);
      PgResult r = c.exec_prepared("upd", {std::to_string(b), "x"});
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      CHECK(r.command_tag() == "UPDATE 0");
      PgResult commit = c.exec_params("COMMIT", {});
      CHECK(commit.command_tag() == "COMMIT");
    }
    SUBCASE("SET LOCAL after BEGIN (simple protocol): a session statement picks no shard") {
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("SET LOCAL statement_timeout = '10s'"));
      PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(a) +
                          ", 'after set local')");
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      PgResult commit = c.exec("COMMIT");
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "after set local")});
    }
  }

  TEST_CASE("statements that name no table after BEGIN ride with it until a statement picks the shard") {
    PROXY_ONLY();
    // Before, the first of these pinned the transaction to the default shard, and the keyed INSERT
    // for a tenant on shard 2 was refused as crossing shards. Savepoints are answered by the proxy
    // and sent with the BEGIN; a SELECT naming no table runs in the transaction on the default
    // shard, which the transaction leaves (rolled back there, run again on shard 2) when the INSERT
    // needs shard 2.
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 300);
    const std::string insert = "INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(a) + ", ";

    SUBCASE("SAVEPOINT, then a keyed INSERT, ROLLBACK TO and RELEASE on the transaction's shard") {
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK(c.exec("SAVEPOINT a").command_tag() == "SAVEPOINT");
      PgResult r = c.exec(insert + "'after savepoint')");
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      REQUIRE_OK(c.exec("SAVEPOINT b"));
      REQUIRE_OK(c.exec(insert + "'rolled back')"));
      CHECK_OK(c.exec("ROLLBACK TO b"));  // the savepoint the server got with the BEGIN works
      CHECK_OK(c.exec("RELEASE a"));
      CHECK(c.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "after savepoint")});
    }
    SUBCASE("SELECT now() runs in the transaction; the INSERT moves it to its shard") {
      REQUIRE_OK(c.exec("BEGIN"));
      PgResult now = c.exec("SELECT now()");
      REQUIRE_OK(now);
      CHECK(now.rows() == 1);
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INTRANS);
      PgResult r = c.exec(insert + "'after now')");
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      CHECK(c.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "after now")});
    }
    SUBCASE("pipelined: the rider, the keyed INSERT and COMMIT in one write") {
      REQUIRE_OK(c.exec("BEGIN"));
      RawSocket raw = RawSocket::borrow(PQsocket(c.get()));
      REQUIRE(raw.send_all(it::wire::query("SELECT 'rider'") + it::wire::query(insert + "'pipelined')") +
                           it::wire::query("COMMIT")));
      std::string bytes, types, statuses;
      auto deadline = std::chrono::steady_clock::now() + 20s;
      while (statuses.size() < 3 && std::chrono::steady_clock::now() < deadline) {
        bytes += raw.read_some(1s);
        types.clear();
        statuses.clear();
        for (const auto& m : it::wire::parse_messages(bytes)) {
          types += m.type;
          if (m.type == 'Z') statuses += m.body;
        }
      }
      INFO("proxy log:\n" << f.log_tail());
      CHECK(types == "TDCZCZCZ");  // each answer once, in order; the move's ROLLBACK is not shown
      CHECK(statuses == "TTI");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "pipelined")});
    }
    SUBCASE("set_config(..., true) runs again inside the transaction on the shard it gets") {
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK(c.value("SELECT set_config('app.tenant', 'five', true)") == "five");
      PgResult r = c.exec(insert + "current_setting('app.tenant'))");
      INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
      CHECK_OK(r);
      CHECK(c.value("SELECT current_setting('app.tenant') || ' ' || count(*) FROM orders WHERE tenant_id = " +
                    std::to_string(a)) == "five 1");
      CHECK(c.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "five")});
      // Transaction-local: gone once the transaction ended.
      CHECK(c.value("SELECT coalesce(current_setting('app.tenant', true), '')") == "");
    }
    SUBCASE("a failed statement pins the transaction where it failed: aborted, as on a server") {
      REQUIRE_OK(c.exec("BEGIN"));
      PgResult failed = c.exec("SELECT 1 / 0");
      CHECK(failed.sqlstate() == "22012");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
      CHECK(c.exec(insert + "'never')").sqlstate() == "25P02");
      CHECK(c.exec("COMMIT").command_tag() == "ROLLBACK");
      CHECK(f.rows_on(2).empty());
      CHECK(c.value("SELECT 7") == "7");
    }
  }

  TEST_CASE("a transaction that crosses shards is refused with 0A000 naming both shards and is rolled back") {
    PROXY_ONLY();
    ShardedOptions refuse;
    refuse.cross_shard_transactions = "refuse";
    ShardedFixture f(refuse);
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 0; }, 100);
    const int64_t b = key_where([](uint32_t bk) { return bk % kShards == 2; }, 100);
    const int64_t a2 = key_where([](uint32_t bk) { return bk % kShards == 0; }, a + 1);

    SUBCASE("simple protocol") {
      PgConn c = f.client();
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'first')"));
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a2) + ", 'same shard')"));
      PgResult cross = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(b) + ", 'second')");
      INFO(cross.describe());
      CHECK(cross.sqlstate() == "0A000");
      CHECK(contains(cross.error(), "shard s0"));
      CHECK(contains(cross.error(), "shard s2"));
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
      PgResult after = c.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(a));
      CHECK(after.sqlstate() == "25P02");
      PgResult commit = c.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "ROLLBACK");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      // The connection goes on working.
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(b) + ", 'later')"));
    }
    SUBCASE("extended protocol") {
      PgConn c = f.client();
      REQUIRE_OK(c.exec_params("BEGIN", {}));
      REQUIRE_OK(c.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, $2)", {k(a), "first"}));
      REQUIRE_OK(
          c.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, $2)", {k(a2), "same shard"}));
      PgResult cross = c.exec_params("UPDATE orders SET note = 'second' WHERE tenant_id = $1", {k(b)});
      INFO(cross.describe());
      CHECK(cross.sqlstate() == "0A000");
      CHECK(contains(cross.error(), "shard s0"));
      CHECK(contains(cross.error(), "shard s2"));
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
      PgResult commit = c.exec_params("COMMIT", {});
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "ROLLBACK");
      REQUIRE_OK(c.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, $2)", {k(b), "later"}));
    }
    INFO("proxy log:\n" << f.log_tail());
    // Neither write of the refused transaction is anywhere; the write after it is on b's shard.
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1).empty());
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(b, "later")});
  }

  TEST_CASE("keyless writes and key moves that cannot run exactly are refused with 0A000") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 0; }, 100);
    const int64_t b = key_where([](uint32_t bk) { return bk % kShards == 1; }, 100);
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'keep')"));
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(b) + ", 'keep')"));

    struct Refused {
      std::string sql;
      std::string why;  // a phrase the message must hold besides the table name
    };
    const std::vector<Refused> refused = {
        {"INSERT INTO orders (note) VALUES ('no key')", "tenant_id"},
        {"INSERT INTO orders DEFAULT VALUES", "tenant_id"},
        // Without a key an UPDATE or DELETE runs on every shard (keyless_write), and one that
        // changes the key moves rows (key_move and key_move_forms suites), but not in forms a
        // move cannot run exactly, nor a write in a CTE.
        {"UPDATE orders SET (tenant_id, note) = (" + k(b) + ", 'everywhere') WHERE CURRENT OF c",
         "sets its key"},
        {"UPDATE orders SET tenant_id = " + k(b) + " FROM orders o2 WHERE o2.id = orders.id", "tenant_id"},
        {"WITH d AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM d", "tenant_id"},
        {"WITH d AS (DELETE FROM orders WHERE tenant_id = " + k(a) +
             " OR note = 'keep' RETURNING *) SELECT 1",
         "tenant_id"},
        {"UPDATE orders SET (tenant_id) = (" + k(a) +
             ") FROM orders o2 WHERE o2.tenant_id = orders.tenant_id "
             "AND orders.tenant_id IN (" +
             k(a) + ", " + k(b) + ") RETURNING o2.note",
         "sets its key"},
    };
    for (const auto& r : refused) {
      PgResult res = c.exec(r.sql);
      INFO(r.sql << " -> " << res.describe());
      CHECK(res.sqlstate() == "0A000");
      CHECK(contains(res.error(), "orders"));
      CHECK(contains(res.error(), r.why));
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    // The same through the extended protocol (the key a parameter): a move whose RETURNING could
    // read its FROM tables is refused.
    {
      PgResult res = c.exec_params(
          "UPDATE orders SET (tenant_id, note) = ($1, 'everywhere') FROM orders o2 "
          "WHERE o2.tenant_id = orders.tenant_id RETURNING o2.note",
          {k(b)});
      INFO(res.describe());
      CHECK(res.sqlstate() == "0A000");
      CHECK(contains(res.error(), "orders"));
    }
    // Inside a transaction the refusal aborts it.
    {
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'in tx')"));
      PgResult res = c.exec("UPDATE orders SET (tenant_id, note) = (1, 'no key') WHERE CURRENT OF c");
      INFO(res.describe());
      CHECK(res.sqlstate() == "0A000");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
      PgResult commit = c.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "ROLLBACK");
    }
    // A multi-row INSERT whose rows are all on one shard is fine.
    const int64_t a2 = key_where([](uint32_t bk) { return bk % kShards == 0; }, a + 1);
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'multi'), (" + k(a2) +
                      ", 'multi')"));

    INFO("proxy log:\n" << f.log_tail());
    std::vector<std::string> s0 = {row_of(a, "keep"), row_of(a, "multi"), row_of(a2, "multi")};
    std::sort(s0.begin(), s0.end());
    CHECK(f.rows_on(0) == s0);
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "keep")});
    CHECK(f.rows_on(2).empty());
  }
}  // TEST_SUITE
