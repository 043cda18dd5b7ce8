// Transactions that touch two shards through shardwire (real PostgreSQL, libpq): reads on both
// shards commit; a write on one shard with reads on the other commits with the row visible; a
// write on a second shard is refused under sharding.cross_shard_transactions: refuse (0A000, both
// shards named, two-phase commit) and nothing is committed; ROLLBACK and savepoints reach every leg, a
// savepoint made before a leg joined is replayed there; a killed server on one leg leaves no shard idle in
// transaction; session pooling keeps one server per shard with the session's settings on each. After every
// case no server of either shard is left idle in transaction (pg_stat_activity).
#include <thread>
#include <vector>

#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

// sharding.cross_shard_transactions: refuse (integration.two_phase runs the two-phase commits).
ShardedOptions two_shards(const std::string& pool_mode = "transaction") {
  ShardedOptions options;
  options.shards = 2;
  options.cross_shard_transactions = "refuse";
  options.proxy.pool_mode = pool_mode;
  return options;
}
std::string insert(int64_t tenant, const std::string& note) {
  return "INSERT INTO orders (tenant_id, note) VALUES (" + k(tenant) + ", '" + note + "')";
}

std::string note_of(int64_t tenant) { return "SELECT note FROM orders WHERE tenant_id = " + k(tenant); }

// No server of either shard is left idle in a transaction (checked after every case).
void check_none_idle_in_transaction(const ShardedFixture& f) {
  for (int shard = 0; shard < 2; ++shard) {
    INFO("shard s" << shard);
    CHECK(f.idle_in_transaction(shard) == 0);
  }
}

}  // namespace

TEST_SUITE("cross_shard_transactions") {
  TEST_CASE("a transaction reads two shards and commits; a write on one and a read on the other commits") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(a, "on s0")));
    REQUIRE_OK(c.exec(insert(b, "on s1")));

    SUBCASE("reads only") {
      REQUIRE_OK(c.exec("BEGIN ISOLATION LEVEL REPEATABLE READ"));
      CHECK(c.value(note_of(a)) == "on s0");
      PgResult second = c.exec(note_of(b));
      INFO(second.describe() << "\nproxy log:\n" << f.log_tail());
      REQUIRE_OK(second);
      CHECK(second.value() == "on s1");
      // The joined shard runs the transaction with the BEGIN's options.
      CHECK(c.value("SELECT current_setting('transaction_isolation') FROM orders WHERE tenant_id = " +
                    k(b)) == "repeatable read");
      CHECK(c.value(note_of(a)) == "on s0");  // back to the first leg
      PgResult commit = c.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    SUBCASE("write on s0, read on s1") {
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("UPDATE orders SET note = 'updated' WHERE tenant_id = " + k(a)));
      PgResult read = c.exec(note_of(b));
      INFO(read.describe() << "\nproxy log:\n" << f.log_tail());
      REQUIRE_OK(read);
      CHECK(read.value() == "on s1");
      CHECK(c.value(note_of(a)) == "updated");
      PgResult commit = c.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "updated")});
      PgConn other = f.client();
      CHECK(other.value(note_of(a)) == "updated");
    }
    SUBCASE("read on s0, write on s1 (the written leg is not the first one)") {
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK(c.value(note_of(a)) == "on s0");
      REQUIRE_OK(c.exec(insert(b, "second")));
      CHECK(c.value(note_of(a)) == "on s0");
      PgResult commit = c.exec("END");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "on s1"), row_of(b, "second")});
    }
    INFO("proxy log:\n" << f.log_tail());
    check_none_idle_in_transaction(f);
    // The connection goes on working, on either shard.
    CHECK(c.value(note_of(b)).size() > 0);
  }

  TEST_CASE(
      "psql: one script's transaction reads s1, writes s0 and commits; a second written shard stops it") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(b, "b0")));
    const std::string script = "BEGIN;\nSELECT note FROM orders WHERE tenant_id = " + k(b) + ";\n" +
                               insert(a, "psql") + ";\nSELECT note FROM orders WHERE tenant_id = " + k(a) +
                               ";\nCOMMIT;\n";
    CommandResult ok =
        run_command({psql(), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", f.proxy->conninfo()}, script,
                    std::chrono::seconds(60));
    INFO("psql: " << ok.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE(ok.exit_code == 0);
    CHECK(ok.out == "BEGIN\nb0\nINSERT 0 1\npsql\nCOMMIT\n");
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "psql")});
    const std::string refused =
        "BEGIN;\n" + insert(a, "second") + ";\n" + insert(b, "refused") + ";\nCOMMIT;\n";
    CommandResult bad =
        run_command({psql(), "-X", "-A", "-t", "-d", f.proxy->conninfo()}, refused, std::chrono::seconds(60));
    INFO("psql: " << bad.describe());
    CHECK(contains(bad.err, "two-phase commit"));
    CHECK(contains(bad.out, "ROLLBACK"));  // COMMIT of the failed transaction
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "psql")});
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "b0")});
    check_none_idle_in_transaction(f);
  }

  TEST_CASE("a write on a second shard is refused naming both shards; nothing is committed anywhere") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(insert(a, "first")));
    PgResult read = c.exec(note_of(b));
    INFO(read.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(read);
    CHECK(read.rows() == 0);
    PgResult refused = c.exec(insert(b, "second"));
    INFO(refused.describe());
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "shard s0"));
    CHECK(contains(refused.error(), "shard s1"));
    CHECK(contains(refused.error(), "two-phase commit"));
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
    // Failed on every leg: a statement for either shard is refused until the transaction ends.
    CHECK(c.exec(note_of(a)).sqlstate() == "25P02");
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "ROLLBACK");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1).empty());
    check_none_idle_in_transaction(f);
    REQUIRE_OK(c.exec(insert(b, "later")));
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "later")});
  }

  TEST_CASE(
      "the written leg commits last: its failed COMMIT reaches the client, no shard keeps the transaction") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t b = tenant_on(1, 2);
    PgConn c = f.client();
    // An unsharded table lives on the default shard (s0); its unique check runs at COMMIT.
    REQUIRE_OK(c.exec("CREATE TABLE deferred_unique (v int UNIQUE DEFERRABLE INITIALLY DEFERRED)"));
    REQUIRE_OK(c.exec("BEGIN"));
    PgResult read = c.exec(note_of(b));  // s1 first: a read-only leg
    INFO(read.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(read);
    REQUIRE_OK(c.exec("INSERT INTO deferred_unique VALUES (1), (1)"));  // s0 joins and writes
    PgResult commit = c.exec("COMMIT");
    CHECK(commit.sqlstate() == "23505");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    PgConn s0 = f.setup.shard(0);
    CHECK(s0.value("SELECT count(*) FROM deferred_unique") == "0");
    check_none_idle_in_transaction(f);
    CHECK(c.value(note_of(b) + " UNION ALL SELECT 'ok'") == "ok");  // the connection goes on
  }

  TEST_CASE("ROLLBACK reaches both legs: nothing kept, row locks released, no server idle in transaction") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(a, "a0")));
    REQUIRE_OK(c.exec(insert(b, "b0")));
    REQUIRE_OK(c.exec("BEGIN"));
    PgResult locked = c.exec("SELECT note FROM orders WHERE tenant_id = " + k(b) + " FOR UPDATE");
    INFO(locked.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(locked);
    REQUIRE_OK(c.exec("UPDATE orders SET note = 'changed' WHERE tenant_id = " + k(a)));
    PgResult rollback = c.exec("ROLLBACK");
    REQUIRE_OK(rollback);
    CHECK(rollback.command_tag() == "ROLLBACK");
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "a0")});
    check_none_idle_in_transaction(f);
    // The row lock on s1 is gone: another connection updates the row at once.
    PgConn other = f.client();
    REQUIRE_OK(other.exec("SET statement_timeout = '5s'"));
    PgResult update = other.exec("UPDATE orders SET note = 'b1' WHERE tenant_id = " + k(b));
    CHECK_OK(update);
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "b1")});
  }

  TEST_CASE("a savepoint made before the second leg joined is replayed there: ROLLBACK TO works on both") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(b, "not a number")));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(insert(a, "before savepoint")));
    REQUIRE_OK(c.exec("SAVEPOINT sp"));
    REQUIRE_OK(c.exec(insert(a, "after savepoint")));
    // s1 joins here; its statement fails, so its leg is in a failed state until ROLLBACK TO.
    PgResult failed = c.exec("SELECT note::int FROM orders WHERE tenant_id = " + k(b));
    INFO(failed.describe() << "\nproxy log:\n" << f.log_tail());
    CHECK(failed.sqlstate() == "22P02");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
    PgResult back = c.exec("ROLLBACK TO SAVEPOINT sp");
    REQUIRE_OK(back);
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INTRANS);
    CHECK(c.value(note_of(b)) == "not a number");  // s1 works again after its ROLLBACK TO
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(a)) == "1");
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "before savepoint")});
    check_none_idle_in_transaction(f);
  }

  TEST_CASE("libpq pipeline mode: one transaction's Sync-ended batches on two shards, answers in order") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(a, "a0")));
    REQUIRE_OK(c.exec(insert(b, "b0")));
    REQUIRE_OK(c.exec("BEGIN"));
    PGconn* p = c.get();
    REQUIRE(PQenterPipelineMode(p) == 1);
    auto send = [&](const std::string& sql, const std::string& value) {
      const char* values[1] = {value.c_str()};
      REQUIRE(PQsendQueryParams(p, sql.c_str(), value.empty() ? 0 : 1, nullptr,
                                value.empty() ? nullptr : values, nullptr, nullptr, 0) == 1);
      REQUIRE(PQpipelineSync(p) == 1);
    };
    const std::string read = "SELECT note FROM orders WHERE tenant_id = $1";
    send(read, k(a));                                                         // s0 runs the transaction
    send(read, k(b));                                                         // s1 joins
    send("INSERT INTO orders (tenant_id, note) VALUES ($1, 'piped')", k(b));  // the written shard
    send(read, k(a));                                                         // back on s0
    send("COMMIT", "");
    std::vector<std::string> got;
    for (int i = 0; i < 5; ++i) {
      PGresult* r = PQgetResult(p);
      REQUIRE(r != nullptr);
      std::string item = PQresStatus(PQresultStatus(r));
      const char* detail = "";
      if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) detail = PQgetvalue(r, 0, 0);
      if (PQresultStatus(r) == PGRES_COMMAND_OK) detail = PQcmdStatus(r);
      if (PQresultStatus(r) == PGRES_FATAL_ERROR) detail = PQresultErrorMessage(r);
      item.append(":").append(detail);
      PQclear(r);
      got.push_back(item);
      CHECK(PQgetResult(p) == nullptr);
      PGresult* sync = PQgetResult(p);
      REQUIRE(sync != nullptr);
      CHECK(PQresultStatus(sync) == PGRES_PIPELINE_SYNC);
      PQclear(sync);
    }
    INFO("proxy log:\n" << f.log_tail());
    std::string joined;
    for (const std::string& item : got) joined += item + "\n";
    CHECK(joined ==
          "PGRES_TUPLES_OK:a0\nPGRES_TUPLES_OK:b0\nPGRES_COMMAND_OK:INSERT 0 "
          "1\nPGRES_TUPLES_OK:a0\nPGRES_COMMAND_OK:COMMIT\n");
    REQUIRE(PQexitPipelineMode(p) == 1);
    CHECK(PQtransactionStatus(p) == PQTRANS_IDLE);
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "b0"), row_of(b, "piped")});
    check_none_idle_in_transaction(f);
  }
  TEST_CASE(
      "a server killed on one leg mid-transaction: the client gets an error, no shard keeps the "
      "transaction") {
    PROXY_ONLY();
    ShardedFixture f(two_shards());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(b, "b0")));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(insert(a, "lost")));
    PgResult read = c.exec(note_of(b));
    INFO(read.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(read);
    const std::string pid_s1 =
        c.value("SELECT pg_backend_pid() FROM orders WHERE tenant_id = " + k(b) + " LIMIT 1");
    // Both legs are idle in the transaction now; kill s0's (the parked, written one).
    PgConn s0 = f.setup.shard(0);
    PgResult killed = s0.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND state "
        "LIKE 'idle in transaction%'");
    REQUIRE_OK(killed);
    REQUIRE(killed.rows() == 1);  // the fault fired: exactly the transaction's server on s0
    CHECK(killed.value() == "t");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    PgResult after = c.exec(note_of(b));
    CHECK_FALSE(after.ok());
    check_none_idle_in_transaction(f);
    // s1's server was rolled back and went back to its pool, not closed.
    CHECK(f.setup.shard(1).value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid_s1) == "1");
    CHECK(f.rows_on(0).empty());
    PgConn fresh = f.client();
    REQUIRE_OK(fresh.exec(insert(a, "fresh")));
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "fresh")});
  }

  TEST_CASE("session pooling: one server per shard for the session, its settings on each") {
    PROXY_ONLY();
    ShardedFixture f(two_shards("session"));
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    CHECK(c.value("SELECT 1") == "1");  // the session's first server: the default shard's
    REQUIRE_OK(c.exec("SET statement_timeout = '4321ms'"));
    REQUIRE_OK(c.exec(insert(b, "autocommit")));
    const std::string setting_on_b =
        "SELECT current_setting('statement_timeout') FROM orders WHERE tenant_id = " + k(b) + " LIMIT 1";
    const std::string setting_on_a =
        "SELECT current_setting('statement_timeout') FROM orders WHERE tenant_id = " + k(a) + " LIMIT 1";
    PgResult on_b = c.exec(setting_on_b);
    INFO(on_b.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(on_b);
    CHECK(on_b.value() == "4321ms");
    REQUIRE_OK(c.exec(insert(a, "autocommit")));
    REQUIRE_OK(c.exec("SET statement_timeout = '1234ms'"));  // runs on s0's server and on s1's
    CHECK(c.value(setting_on_b) == "1234ms");
    CHECK(c.value(setting_on_a) == "1234ms");
    // The transaction begins on s0's server; s1's server of the session joins it (its BEGIN is
    // replayed there), so the ROLLBACK undoes the insert on s1 too.
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(insert(b, "rolled back")));
    CHECK(c.value(note_of(a)) == "autocommit");
    PgResult rollback = c.exec("ROLLBACK");
    REQUIRE_OK(rollback);
    CHECK(rollback.command_tag() == "ROLLBACK");
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "autocommit")});
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(insert(b, "in-transaction")));
    CHECK(c.value(note_of(a)) == "autocommit");
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "autocommit"), row_of(b, "in-transaction")});
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "autocommit")});
    check_none_idle_in_transaction(f);

    // Each of the session's servers holds a session-level advisory lock; when the client leaves,
    // both are reset (pool.server_reset_query, DISCARD ALL) and kept, not closed.
    const std::string pid_on_a = "SELECT pg_backend_pid() FROM orders WHERE tenant_id = " + k(a) + " LIMIT 1";
    const std::string pid_on_b = "SELECT pg_backend_pid() FROM orders WHERE tenant_id = " + k(b) + " LIMIT 1";
    const std::string pid_a = c.value(pid_on_a), pid_b = c.value(pid_on_b);
    CHECK(c.value("SELECT pg_advisory_lock(7) FROM orders WHERE tenant_id = " + k(a) + " LIMIT 1").empty());
    CHECK(c.value("SELECT pg_advisory_lock(7) FROM orders WHERE tenant_id = " + k(b) + " LIMIT 1").empty());
    for (int shard : {0, 1}) {  // held now, by the session's own server on each shard
      PgConn direct = f.setup.shard(shard);
      CHECK(direct.value("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " +
                         (shard == 0 ? pid_a : pid_b)) == "1");
    }
    c.reset();
    for (int shard : {0, 1}) {
      PgConn direct = f.setup.shard(shard);
      const std::string& pid = shard == 0 ? pid_a : pid_b;
      std::string locks, alive;
      for (int i = 0; i < 50; ++i) {
        locks = direct.value("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + pid);
        if (locks == "0") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      alive = direct.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid);
      CAPTURE(shard);
      CHECK(locks == "0");
      CHECK(alive == "1");  // reset and kept by its pool
    }
  }
}
