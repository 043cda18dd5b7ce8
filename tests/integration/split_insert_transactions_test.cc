// A multi-row INSERT split by shard inside a client's transaction and in session pooling, through
// shardwire on 3 real shards with a catalog (docs/architecture.md §5.11, §5.10 step 6): inside
// BEGIN (deferred, and after a write on a third shard) the parts run on the transaction's legs
// (lent or joining), the transaction sees its rows, COMMIT puts them on every owner (two-phase
// commit, nothing left prepared), ROLLBACK leaves nothing; a unique violation in one part fails the
// transaction (25P02 after it, COMMIT answers ROLLBACK, nothing written anywhere); in session
// pooling the session's servers run the parts, in and out of BEGIN. Checked on every shard directly.
#include "it_test.h"

#include "harness/sharded_fixture.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;

TEST_SUITE("split_insert_transactions") {
  TEST_CASE("inside BEGIN the split joins the transaction: COMMIT commits every owner, ROLLBACK none") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    int round = 0;
    // A deferred BEGIN (no shard yet), and a transaction that wrote on a third shard first.
    for (bool wrote_first : {false, true}) {
      for (bool commit : {true, false}) {
        INFO("wrote_first " << wrote_first << " commit " << commit);
        const std::string note = "r" + std::to_string(++round);
        const std::string id = std::to_string(round * 10);
        REQUIRE_OK(client.exec("BEGIN"));
        if (wrote_first)
          REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) + ", " + id +
                                 ", '" + note + "')"));
        PgResult simple =
            client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.b) + ", " + id + ", '" +
                        note + "'), (" + k(t.a) + ", " + id + ", '" + note + "') RETURNING tenant_id, note");
        REQUIRE_OK(simple);
        CHECK(simple.command_tag() == "INSERT 0 2");
        CHECK(returned(simple) == std::vector<std::string>{k(t.b) + "|" + note, k(t.a) + "|" + note});
        CHECK(PQtransactionStatus(client.get()) == PQTRANS_INTRANS);
        // The extended protocol too: each part's parameters on its lent or joining leg.
        PgResult extended =
            client.exec_params("INSERT INTO orders (tenant_id, id, note) VALUES ($1, $3, $4), ($2, $3, $4)",
                               {k(t.a2), k(t.b2()), id, note});
        REQUIRE_OK(extended);
        CHECK(extended.command_tag() == "INSERT 0 2");
        // The transaction sees its rows on each shard.
        for (int64_t tenant : {t.a, t.b, t.a2, t.b2()})
          CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(tenant) + " AND note = '" +
                             note + "'") == "1");
        PgResult end = client.exec(commit ? "COMMIT" : "ROLLBACK");
        REQUIRE_OK(end);
        CHECK(end.command_tag() == (commit ? "COMMIT" : "ROLLBACK"));
        const std::string mine = "note = '" + note + "'";
        CHECK(f.rows_on(0, mine).size() == (commit ? 2u : 0u));
        CHECK(f.rows_on(1, mine).size() == (commit ? 2u : 0u));
        CHECK(f.rows_on(2, mine).size() == (commit && wrote_first ? 1u : 0u));
        CHECK(shardwire_prepared(f) == 0);
        for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
      }
    }
    // With other statements in its Query the split is refused, and the transaction failed.
    REQUIRE_OK(client.exec("BEGIN"));
    PgResult refused = client.exec("SELECT 1; INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) +
                                   ", 99, 'm'), (" + k(t.b) + ", 99, 'm')");
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "a query of its own"));
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = 'm'").empty());
  }

  TEST_CASE("a unique violation in a split inside BEGIN fails the transaction: 25P02, COMMIT rolls back") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    insert_directly(f, 1, t.b, 2);
    PgConn client = f.client();
    for (bool wrote_first : {false, true}) {
      INFO("wrote_first " << wrote_first);
      REQUIRE_OK(client.exec("BEGIN"));
      if (wrote_first)
        REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) + ", 100, 'x')"));
      PgResult failed = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) +
                                    ", 1, 'x'), (" + k(t.b) + ", 2, 'x') RETURNING id");
      CHECK(failed.sqlstate() == "23505");
      CHECK(contains(failed.error(), "failed on shard s1"));
      CHECK(contains(failed.error(), "the transaction is aborted"));
      CHECK(PQtransactionStatus(client.get()) == PQTRANS_INERROR);
      CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
      PgResult commit = client.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "ROLLBACK");
      CHECK(rows_everywhere(f) == 1);  // the row that was there
      CHECK(shardwire_prepared(f) == 0);
      for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
    }
    // The session goes on.
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 1, 'y'), (" +
                           k(t.c) + ", 1, 'y')"));
    CHECK(rows_everywhere(f) == 3);
  }

  TEST_CASE("in session pooling the split uses the session's servers, in and out of BEGIN") {
    PROXY_ONLY();
    ShardedFixture f(session_pooling());
    INFO("proxy log:\n" << f.log_tail(40));
    const Tenants t;
    PgConn client = f.client();
    REQUIRE_OK(client.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)));  // a server on s0
    auto split = [&](const std::string& note, int id) {
      return client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", " +
                         std::to_string(id) + ", '" + note + "'), (" + k(t.b) + ", " + std::to_string(id) +
                         ", '" + note + "'), (" + k(t.c) + ", " + std::to_string(id) + ", '" + note +
                         "') RETURNING note");
    };
    PgResult alone = split("alone", 1);
    REQUIRE_OK(alone);
    CHECK(alone.command_tag() == "INSERT 0 3");
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = 'alone'").size() == 1);
    for (bool commit : {false, true}) {
      INFO("commit " << commit);
      const std::string note = commit ? "committed" : "rolled";
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec("UPDATE orders SET note = 'u' WHERE tenant_id = " + k(t.a) + " AND id = 1"));
      REQUIRE_OK(split(note, commit ? 2 : 3));
      CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.c) + " AND note = '" + note +
                         "'") == "1");
      REQUIRE_OK(client.exec(commit ? "COMMIT" : "ROLLBACK"));
      for (int s = 0; s < kShards; ++s)
        CHECK(f.rows_on(s, "note = '" + note + "'").size() == (commit ? 1u : 0u));
      CHECK(f.rows_on(0, "note = 'u'").size() == (commit ? 1u : 0u));
    }
    // A failure outside a transaction rolls back on the session's servers and keeps them.
    PgResult failed = split("dup", 2);
    CHECK(failed.sqlstate() == "23505");
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = 'dup'").empty());
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "2");
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
  }
}
