// The client's CancelRequest during a write that runs on several shards at once (docs/architecture.md
// §5.10): an UPDATE with key lists on 3 shards, a multi-row INSERT split by key, a COPY FROM
// STDIN split by key, and a write of a reference table on every shard. Each shard runs the write
// in a trigger that sleeps for 30 s (the fault: every shard is proven to be sleeping before the
// cancel is sent). The cancel must reach every shard: the client gets 57014 within seconds, no
// shard keeps sleeping, nothing is written anywhere and nothing is left prepared; outside BEGIN
// the connection goes on, inside BEGIN the transaction is failed (25P02) until ROLLBACK, as on one
// PostgreSQL.
#include "it_test.h"

#include "harness/sharded_fixture.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;

namespace {

// On every shard, directly: a row whose note is 'slow' sleeps 30 s in a BEFORE trigger of `table`.
void add_slow_trigger(const ShardedFixture& f, const std::string& table) {
  for (int s = 0; s < kShards; ++s) {
    PgConn shard = f.setup.shard(s);
    REQUIRE_OK(
        shard.exec("CREATE OR REPLACE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                   "IF NEW.note = 'slow' THEN PERFORM pg_sleep(30); END IF; RETURN NEW; END $$"));
    REQUIRE_OK(shard.exec("CREATE TRIGGER slow_row BEFORE INSERT OR UPDATE ON " + table +
                          " FOR EACH ROW EXECUTE FUNCTION slow_row()"));
  }
}

// Backends sleeping in pg_sleep in the fixture's shard databases (all on the one cluster).
int sleeping(const ShardedFixture& f, PgConn& admin) {
  std::string databases;
  for (int s = 0; s < kShards; ++s) databases += (s ? ", '" : "'") + f.setup.shard_db(s) + "'";
  return std::stoi(
      admin.value("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND datname IN (" +
                  databases + ")"));
}

// Waits up to 10 s until `expected` shard backends sleep; false if they never do.
bool wait_sleeping(const ShardedFixture& f, PgConn& admin, int expected) {
  for (int i = 0; i < 100; ++i) {
    if (sleeping(f, admin) == expected) return true;
    sleep_ms(100);
  }
  return false;
}

// Sends the client's CancelRequest through shardwire and returns the statement's result.
PgResult cancel_and_wait(PgConn& client) {
  std::string error;
  CHECK_MESSAGE(client.cancel(&error), "PQcancel failed: " << error);
  return client.wait_result(15s);
}

long long orders_everywhere(const ShardedFixture& f, const std::string& where) {
  long long n = 0;
  for (int s = 0; s < kShards; ++s) n += static_cast<long long>(f.rows_on(s, where).size());
  return n;
}

}  // namespace

TEST_SUITE("cancel_writes") {
  TEST_CASE("a cancelled UPDATE and a cancelled split INSERT on 3 shards write nothing anywhere") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    for (int64_t tenant : {t.a, t.b, t.c})
      REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(tenant) + ", 'before')"));
    add_slow_trigger(f, "orders");
    PgConn admin = f.setup.cluster().admin("postgres");
    const std::string update =
        "UPDATE orders SET note = 'slow' WHERE tenant_id IN (" + k(t.a) + ", " + k(t.b) + ", " + k(t.c) + ")";
    const std::string insert = "INSERT INTO orders (tenant_id, note) VALUES (" + k(t.a) + ", 'slow'), (" +
                               k(t.b) + ", 'slow'), (" + k(t.c) + ", 'slow')";
    for (const std::string& sql : {update, insert}) {
      INFO(sql);
      REQUIRE(client.send(sql));
      REQUIRE(wait_sleeping(f, admin, kShards));
      PgResult cancelled = cancel_and_wait(client);
      INFO(cancelled.describe());
      CHECK(cancelled.sqlstate() == "57014");
      CHECK(wait_sleeping(f, admin, 0));
      CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
      CHECK(orders_everywhere(f, "note = 'slow'") == 0);
      CHECK(orders_everywhere(f, "note = 'before'") == 3);
      CHECK(shardwire_prepared(f) == 0);
    }
    // The connection and the shards' servers go on: the same writes without the sleep.
    PgResult updated = client.exec("UPDATE orders SET note = 'after' WHERE tenant_id IN (" + k(t.a) + ", " +
                                   k(t.b) + ", " + k(t.c) + ")");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "UPDATE 3");
    CHECK(orders_everywhere(f, "note = 'after'") == 3);
  }

  TEST_CASE("a cancelled COPY FROM STDIN split over 3 shards copies nothing") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    add_slow_trigger(f, "orders");
    PgConn admin = f.setup.cluster().admin("postgres");
    PgConn client = f.client();
    PgResult copying = client.exec("COPY orders (tenant_id, note) FROM STDIN");
    REQUIRE(copying.status() == PGRES_COPY_IN);
    const std::string rows = k(t.a) + "\tslow\n" + k(t.b) + "\tslow\n" + k(t.c) + "\tslow\n";
    REQUIRE(PQputCopyData(client.get(), rows.data(), static_cast<int>(rows.size())) == 1);
    REQUIRE(PQflush(client.get()) == 0);
    REQUIRE(wait_sleeping(f, admin, kShards));
    std::string error;
    CHECK_MESSAGE(client.cancel(&error), "PQcancel failed: " << error);
    REQUIRE(PQputCopyEnd(client.get(), nullptr) == 1);
    PgResult cancelled = client.wait_result(15s);
    INFO(cancelled.describe());
    CHECK(cancelled.sqlstate() == "57014");
    CHECK(wait_sleeping(f, admin, 0));
    CHECK(orders_everywhere(f, "true") == 0);
    CHECK(shardwire_prepared(f) == 0);
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    CHECK(client.value("SELECT count(*) FROM orders") == "0");
  }

  TEST_CASE("inside BEGIN a cancelled write on several shards fails the transaction until ROLLBACK") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    add_slow_trigger(f, "orders");
    PgConn admin = f.setup.cluster().admin("postgres");
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(t.a) + ", 'in transaction')"));
    REQUIRE(client.send("INSERT INTO orders (tenant_id, note) VALUES (" + k(t.a2) + ", 'slow'), (" + k(t.b) +
                        ", 'slow'), (" + k(t.c) + ", 'slow')"));
    REQUIRE(wait_sleeping(f, admin, kShards));
    PgResult cancelled = cancel_and_wait(client);
    INFO(cancelled.describe());
    CHECK(cancelled.sqlstate() == "57014");
    CHECK(wait_sleeping(f, admin, 0));
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
    CHECK(orders_everywhere(f, "true") == 0);
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(t.b) + ", 'after')"));
    CHECK(f.rows_on(1) == std::vector<std::string>{k(t.b) + "|after"});
  }

  TEST_CASE("a cancelled write of a reference table on every shard writes it nowhere") {
    PROXY_ONLY();
    ShardedOptions options;
    options.reference_tables = "[plans]";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    PgConn client = f.client();
    REQUIRE_OK(client.exec("CREATE TABLE plans (id int PRIMARY KEY, note text)"));
    REQUIRE_OK(client.exec("INSERT INTO plans VALUES (1, 'free')"));
    add_slow_trigger(f, "plans");
    PgConn admin = f.setup.cluster().admin("postgres");
    REQUIRE(client.send("UPDATE plans SET note = 'slow' WHERE id = 1"));
    REQUIRE(wait_sleeping(f, admin, kShards));
    PgResult cancelled = cancel_and_wait(client);
    INFO(cancelled.describe());
    CHECK(cancelled.sqlstate() == "57014");
    CHECK(wait_sleeping(f, admin, 0));
    for (int s = 0; s < kShards; ++s) {
      PgConn shard = f.setup.shard(s);
      CHECK(shard.value("SELECT note FROM plans WHERE id = 1") == "free");
    }
    CHECK(shardwire_prepared(f) == 0);
    CHECK(client.value("SELECT note FROM plans WHERE id = 1") == "free");
  }
}
