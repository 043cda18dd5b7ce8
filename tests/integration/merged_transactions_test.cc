// Reads that need every shard (keyless scatter reads, merged or not) inside a client's transaction
// block and in session pooling, through shardwire on 3 real shards with a catalog
// (docs/architecture.md §5.6): the read runs on the transaction's legs (lent, or joining with the
// transaction's BEGIN and savepoints), so it sees the transaction's own uncommitted writes and its
// REPEATABLE READ snapshot; COMMIT and ROLLBACK are checked on the shards directly; a read-only
// transaction on every shard commits without two-phase commit; an error on one shard fails the
// whole transaction (25P02 after it, COMMIT answers ROLLBACK, nothing committed, no server left
// idle in a transaction); a LIMIT that needs fewer rows than the shards hold leaves every leg
// usable; the client's cancel fails the transaction; the extended protocol too (an Execute row
// limit: merged_portals); session pooling on the
// session's servers; and under
// sharding.cross_shard_transactions: refuse such a read is refused naming the setting.
#include "it_test.h"

#include "harness/sharded_fixture.h"
#include "merged_transactions_support.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;
using namespace it::merged_txn;

TEST_SUITE("merged_transactions") {
  TEST_CASE("inside BEGIN a scatter read sees the transaction's writes; COMMIT and ROLLBACK on every shard") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 3);  // 9 rows
    PgConn client = f.client();
    int round = 0;
    for (bool read_first : {true, false}) {
      for (bool commit : {true, false}) {
        INFO("read_first " << read_first << " commit " << commit);
        const std::string id = std::to_string(100 + ++round);
        REQUIRE_OK(client.exec("BEGIN"));
        // With the BEGIN still deferred (no shard yet) the read joins every shard itself.
        if (read_first) CHECK(client.value("SELECT count(*) FROM orders") == "9");
        REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.a) + ", " + id +
                               ", 'mine', 1000)"));
        CHECK(client.value("SELECT count(*) FROM orders") == "10");  // plain: a relaying plan
        CHECK(client.value("SELECT count(*) FROM orders WHERE note = 'mine'") == "1");
        PgResult top = client.exec("SELECT tenant_id, qty FROM orders ORDER BY qty DESC LIMIT 2");
        REQUIRE_OK(top);
        REQUIRE(top.rows() == 2);
        CHECK(top.value(0, 0) == k(t.a));
        CHECK(top.value(0, 1) == "1000");
        CHECK(top.value(1, 1) == "3");
        PgResult plain = client.exec("SELECT tenant_id FROM orders WHERE note = 'mine'");
        REQUIRE_OK(plain);
        CHECK(plain.rows() == 1);
        // The extended protocol: the read's parameters on every leg.
        PgResult extended = client.exec_params("SELECT count(*) FROM orders WHERE qty >= $1", {"3"});
        REQUIRE_OK(extended);
        CHECK(extended.value() == "4");
        PgResult extended_top =
            client.exec_params("SELECT qty FROM orders WHERE note = $1 ORDER BY qty LIMIT 1", {"mine"});
        REQUIRE_OK(extended_top);
        CHECK(extended_top.value() == "1000");
        CHECK(PQtransactionStatus(client.get()) == PQTRANS_INTRANS);
        PgResult end = client.exec(commit ? "COMMIT" : "ROLLBACK");
        REQUIRE_OK(end);
        CHECK(end.command_tag() == (commit ? "COMMIT" : "ROLLBACK"));
        CHECK(f.rows_on(0, "id = " + id).size() == (commit ? 1u : 0u));
        CHECK(f.rows_on(1, "note = 'mine'").empty());
        CHECK(f.rows_on(2, "note = 'mine'").empty());
        CHECK(prepared_or_idle(f) == 0);
        REQUIRE_OK(client.exec("DELETE FROM orders WHERE tenant_id = " + k(t.a) + " AND note = 'mine'"));
      }
    }
  }

  TEST_CASE("a read-only transaction on every shard commits with plain COMMITs") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 2);
    PgConn client = f.client();
    for (const char* end : {"COMMIT", "ROLLBACK"}) {
      INFO(end);
      REQUIRE_OK(client.exec("BEGIN"));
      CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "2");  // a leg on s1
      PgResult distinct = client.exec("SELECT DISTINCT tenant_id FROM orders ORDER BY 1");
      REQUIRE_OK(distinct);
      CHECK(distinct.rows() == 3);
      CHECK(client.value("SELECT max(qty) FROM orders") == "2");
      PgResult done = client.exec(end);
      REQUIRE_OK(done);
      CHECK(done.command_tag() == end);
      CHECK(prepared_or_idle(f) == 0);
    }
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    // SQLAlchemy's first statements name no table (they run on the default shard, the transaction
    // still movable); a read of every shard after them joins the others.
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(client.value("SELECT current_schema()") == "public");
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.c)) == "2");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("an error on one shard's leg fails the whole transaction: 25P02, COMMIT rolls back everywhere") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 2);
    {
      PgConn shard2 = f.setup.shard(2);  // a zero qty on s2 only: 100 / qty fails there alone
      REQUIRE_OK(shard2.exec("UPDATE orders SET qty = 0 WHERE id = 1"));
    }
    PgConn client = f.client();
    int round = 0;
    for (bool merged : {false, true}) {
      for (bool extended : {false, true}) {
        INFO("merged " << merged << " extended " << extended);
        const std::string id = std::to_string(200 + ++round);
        REQUIRE_OK(client.exec("BEGIN"));
        REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", " + id +
                               ", 'lost')"));
        REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.b) + ", " + id +
                               ", 'lost')"));
        const std::string sql = merged ? "SELECT sum(100 / qty) FROM orders" : "SELECT 100 / qty FROM orders";
        PgResult failed = extended ? client.exec_params(sql, {}) : client.exec(sql);
        CHECK(failed.sqlstate() == "22012");
        CHECK(PQtransactionStatus(client.get()) == PQTRANS_INERROR);
        CHECK(client.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)).sqlstate() == "25P02");
        check_transaction_failed(f, client, "lost");
      }
    }
    // The session goes on, in and out of a transaction.
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(client.value("SELECT count(*) FROM orders WHERE qty > 0") == "5");
    REQUIRE_OK(client.exec("COMMIT"));
  }

  TEST_CASE("savepoints: a read inside one, a shard joining after it, and recovery after a failed read") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 2);
    {
      PgConn shard1 = f.setup.shard(1);
      REQUIRE_OK(shard1.exec("UPDATE orders SET qty = 0 WHERE id = 1"));
    }
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 300, 'kept')"));
    REQUIRE_OK(client.exec("SAVEPOINT sp"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 301, 'undone')"));
    // s1 and s2 join here, replaying the BEGIN and the SAVEPOINT.
    CHECK(client.value("SELECT count(*) FROM orders") == "8");
    REQUIRE_OK(client.exec("ROLLBACK TO SAVEPOINT sp"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    // A failed read inside the savepoint: ROLLBACK TO SAVEPOINT recovers on every leg.
    REQUIRE_OK(client.exec("SAVEPOINT sp2"));
    CHECK(client.exec("SELECT sum(100 / qty) FROM orders").sqlstate() == "22012");
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    REQUIRE_OK(client.exec("ROLLBACK TO SAVEPOINT sp2"));
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_INTRANS);
    CHECK(client.value("SELECT count(*) FROM orders WHERE qty > 0") == "5");
    PgResult commit = client.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    CHECK(f.rows_on(0, "note = 'kept'").size() == 1u);
    CHECK(f.rows_on(0, "note = 'undone'").empty());
    CHECK(prepared_or_idle(f) == 0);
    // With the BEGIN and the SAVEPOINT still deferred, every shard joins with both.
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("SAVEPOINT early"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) + ", 302, 'early')"));
    CHECK(client.value("SELECT count(*) FROM orders") == "8");
    REQUIRE_OK(client.exec("ROLLBACK TO SAVEPOINT early"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    REQUIRE_OK(client.exec("RELEASE SAVEPOINT early"));
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(f.rows_on(2, "note = 'early'").empty());
    CHECK(prepared_or_idle(f) == 0);
    // The read fails on a shard that joins for it (its new server is closed): the savepoint still
    // recovers the transaction, and a later read joins that shard again.
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 303, 'late')"));
    REQUIRE_OK(client.exec("SAVEPOINT before_read"));
    CHECK(client.exec("SELECT sum(100 / qty) FROM orders").sqlstate() == "22012");
    REQUIRE_OK(client.exec("ROLLBACK TO SAVEPOINT before_read"));
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_INTRANS);
    CHECK(client.value("SELECT count(*) FROM orders") == "8");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(f.rows_on(0, "note = 'late'").size() == 1u);
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("REPEATABLE READ: every read of the transaction sees one snapshot per shard") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 2);
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN ISOLATION LEVEL REPEATABLE READ"));
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    {
      PgConn shard1 = f.setup.shard(1);  // committed after the snapshot was taken on s1
      REQUIRE_OK(
          shard1.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.b) + ", 400, 'late')"));
    }
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "2");
    CHECK(client.value("SHOW transaction_isolation") == "repeatable read");
    REQUIRE_OK(client.exec("COMMIT"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("a LIMIT that needs fewer rows than the shards hold leaves every leg in the transaction") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 20000);  // more than fanout.max_rows_buffered per leg: legs pause, then drain
    PgConn client = f.client();
    for (bool extended : {false, true}) {
      INFO("extended " << extended);
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec("SET LOCAL statement_timeout = '50s'"));
      REQUIRE_OK(
          client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) + ", 900000, 'limit')"));
      PgResult few = extended ? client.exec_params("SELECT id FROM orders WHERE qty >= $1 LIMIT 3", {"1"})
                              : client.exec("SELECT id FROM orders LIMIT 3");
      REQUIRE_OK(few);
      CHECK(few.rows() == 3);
      PgResult first = client.exec("SELECT id FROM orders ORDER BY id LIMIT 1");
      REQUIRE_OK(first);
      CHECK(first.value() == "1");
      CHECK(client.value("SELECT count(*) FROM orders") == "60001");
      CHECK(client.value("SHOW statement_timeout") == "50s");  // SET LOCAL kept: nothing reset
      PgResult commit = client.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(f.rows_on(2, "note = 'limit'").size() == 1u);
      CHECK(prepared_or_idle(f) == 0);
      PgConn shard2 = f.setup.shard(2);
      REQUIRE_OK(shard2.exec("DELETE FROM orders WHERE note = 'limit'"));
    }
  }

  TEST_CASE("the client's cancel of a read inside BEGIN fails the transaction on every shard") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 1);
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 700, 'cancelled')"));
    REQUIRE(client.send("SELECT count(*) FROM orders WHERE pg_sleep(30)::text = ''"));
    sleep_ms(500);  // the legs run it: the cancel reaches a running statement
    std::string error;
    CHECK_MESSAGE(client.cancel(&error), "PQcancel failed: " << error);
    PgResult cancelled = client.wait_result(15s);
    INFO(cancelled.describe());
    CHECK(cancelled.sqlstate() == "57014");
    check_transaction_failed(f, client, "cancelled");
    CHECK(client.value("SELECT count(*) FROM orders") == "3");
  }

  TEST_CASE("session pooling: merged reads on the session's servers, in and out of BEGIN") {
    PROXY_ONLY();
    ShardedFixture f(session_pooling());
    INFO("proxy log:\n" << f.log_tail(40));
    const Tenants t;
    seed(f, t, 2);
    PgConn client = f.client();
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)) == "2");  // a server on s0
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    CHECK(client.value("SELECT max(qty) FROM orders") == "2");
    // A failing read outside a transaction: the session's servers are rolled back and kept.
    CHECK(client.exec("SELECT sum(100 / (qty - 1)) FROM orders").sqlstate() == "22012");
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    CHECK(client.value("SELECT count(*) FROM orders WHERE qty = 2") == "3");
    PgResult extended = client.exec_params("SELECT tenant_id FROM orders WHERE qty = $1 ORDER BY 1", {"1"});
    REQUIRE_OK(extended);
    CHECK(extended.rows() == 3);
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.b) + ", 500, 'sess')"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    REQUIRE_OK(client.exec("ROLLBACK"));
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = 'sess'").empty());
    // The read first, with the BEGIN still deferred: the session's servers begin with it.
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) + ", 501, 'sess2')"));
    CHECK(client.value("SELECT count(*) FROM orders") == "7");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(f.rows_on(2, "note = 'sess2'").size() == 1u);
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("under cross_shard_transactions: refuse a scatter read in a transaction is refused, naming it") {
    PROXY_ONLY();
    ShardedFixture f(refusing_cross_shard_transactions());
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 1);
    PgConn client = f.client();
    CHECK(client.value("SELECT count(*) FROM orders") == "3");  // outside a transaction it runs
    check_refused_in_transaction(f, client, t, [&] {
      PgResult refused = client.exec("SELECT count(*) FROM orders");
      return std::make_pair(refused.sqlstate(), refused.error());
    });
  }
}
