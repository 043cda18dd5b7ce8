// COPY FROM STDIN into a sharded table and writes of a reference table inside a client's
// transaction and in session pooling, on 3 real shards with a catalog (two-phase commit): the
// runner joins the transaction's legs, so the client's COMMIT commits every shard it wrote
// (two-phase when several did) and ROLLBACK leaves nothing anywhere; a failure inside the
// transaction fails it as PostgreSQL does (25P02 until ROLLBACK). Checked on every shard
// directly, with pg_prepared_xacts empty and no server left idle in a transaction.
#include "it_test.h"

#include "harness/jdbc_checks.h"
#include "harness/process.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreatePlans = "CREATE TABLE plans (id int PRIMARY KEY, name text NOT NULL)";

ShardedOptions options(const std::string& pool_mode, const std::string& cross_shard = "") {
  ShardedOptions o;
  o.cross_shard_transactions = cross_shard;
  o.reference_tables = "[plans]";
  if (!pool_mode.empty()) o.proxy.pool_mode = pool_mode;
  return o;
}

struct Deployment {
  ShardedFixture f;
  explicit Deployment(const std::string& pool_mode = "", const std::string& cross_shard = "")
      : f(options(pool_mode, cross_shard)) {
    PgConn c = f.client();
    PgResult r = c.exec(kCreatePlans);
    if (!r.ok())
      throw std::runtime_error(std::string(kCreatePlans) + ": " + r.describe() + "\n" + f.log_tail());
    for (int s = 0; s < kShards; ++s) {
      PgConn shard = f.setup.shard(s);
      PgResult seeded = shard.exec("INSERT INTO plans VALUES (1, 'free')");
      if (!seeded.ok()) throw std::runtime_error("seed plans: " + seeded.describe());
    }
  }
  std::string plans_on(int shard) const {
    PgConn c = f.setup.shard(shard);
    return c.value("SELECT coalesce(string_agg(id || '=' || name, ',' ORDER BY id), '') FROM plans");
  }
  long long prepared_on(int shard) const {
    PgConn c = f.setup.shard(shard);
    return std::stoll(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()"));
  }
  long long orders_on(int shard, const std::string& where) const {
    PgConn c = f.setup.shard(shard);
    return std::stoll(c.value("SELECT count(*) FROM orders WHERE " + where));
  }
  // Nothing prepared and no server idle in a transaction on any shard.
  void check_clean() const {
    for (int s = 0; s < kShards; ++s) {
      INFO("shard " << s);
      CHECK(prepared_on(s) == 0);
      CHECK(f.idle_in_transaction(s) == 0);
    }
  }
};

struct CopyOutcome {
  bool ok = false;
  std::string tag;
  std::string sqlstate;
};

// Runs a COPY FROM STDIN and sends `data` in one CopyData, then CopyDone.
CopyOutcome copy_in(PgConn& conn, const std::string& sql, const std::string& data) {
  CopyOutcome out;
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_IN) {
    const char* state = PQresultErrorField(started, PG_DIAG_SQLSTATE);
    out.sqlstate = state ? state : "";
    PQclear(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return out;
  }
  PQclear(started);
  PQputCopyData(conn.get(), data.data(), static_cast<int>(data.size()));
  PQputCopyEnd(conn.get(), nullptr);
  while (PGresult* result = PQgetResult(conn.get())) {
    if (PQresultStatus(result) == PGRES_COMMAND_OK) {
      out.ok = true;
      out.tag = PQcmdStatus(result);
    } else {
      const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
      out.sqlstate = state ? state : "";
    }
    PQclear(result);
  }
  return out;
}

// "note\ttenant" rows, two keys on every shard, notes `tag`-<i>.
std::string rows_on_every_shard(const std::string& tag, std::vector<int64_t>* keys) {
  std::string data;
  for (int s = 0; s < kShards; ++s) {
    for (int64_t from : {int64_t{1000}, int64_t{5000}}) {
      const int64_t key = tenant_on(s, kShards, from + 100 * s);
      keys->push_back(key);
      data += tag + "-" + std::to_string(keys->size()) + "\t" + std::to_string(key) + "\n";
    }
  }
  return data;
}

// Rows tagged `tag` the client's own transaction sees, one key at a time (each read goes to its
// key's shard: a keyless read would scatter, which a transaction does not).
long long seen_in_transaction(PgConn& c, const std::vector<int64_t>& keys, const std::string& tag) {
  long long n = 0;
  for (int64_t key : keys)
    n += std::stoll(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(key) +
                            " AND note LIKE '" + tag + "-%'"));
  return n;
}

const std::string kDriverCheck =
    std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/python/every_shard_write_check.py";

}  // namespace

TEST_SUITE("every_shard_write") {
  TEST_CASE("COPY inside BEGIN (first or after an INSERT) commits with the transaction, or rolls back") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    for (bool insert_first : {false, true}) {
      for (bool commit : {true, false}) {
        INFO("insert first " << insert_first << " commit " << commit);
        const std::string tag = std::string(insert_first ? "i" : "c") + (commit ? "C" : "R");
        std::vector<int64_t> keys;
        const std::string data = rows_on_every_shard(tag, &keys);
        const int64_t single = tenant_on(1, kShards, 9000);
        REQUIRE_OK(c.exec("BEGIN"));
        if (insert_first)
          REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(single) + ", '" +
                            tag + "-single')"));
        CopyOutcome copied = copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", data);
        REQUIRE_MESSAGE(copied.ok, copied.sqlstate);
        CHECK(copied.tag == "COPY " + std::to_string(keys.size()));
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_INTRANS);
        if (!insert_first)
          REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(single) + ", '" +
                            tag + "-single')"));
        // The transaction sees its own rows, on every shard.
        keys.push_back(single);
        CHECK(seen_in_transaction(c, keys, tag) == static_cast<long long>(keys.size()));
        REQUIRE_OK(c.exec(commit ? "COMMIT" : "ROLLBACK"));
        for (int s = 0; s < kShards; ++s) {
          INFO("shard " << s);
          const long long expected = commit ? 2 + (s == 1 ? 1 : 0) : 0;
          CHECK(d.orders_on(s, "note LIKE '" + tag + "-%'") == expected);
          CHECK(d.f.misplaced_on(s) == 0);
        }
        d.check_clean();
      }
    }
  }

  TEST_CASE("a bad row in a COPY inside BEGIN fails the transaction: 25P02 after, nothing after ROLLBACK") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    for (bool insert_first : {false, true}) {
      INFO("insert first " << insert_first);
      const std::string tag = insert_first ? "bi" : "bc";
      std::vector<int64_t> keys;
      const std::string data = rows_on_every_shard(tag, &keys) + tag + "-bad\tnot-a-number\n";
      const int64_t single = tenant_on(2, kShards, 9100);
      REQUIRE_OK(c.exec("BEGIN"));
      if (insert_first)
        REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(single) + ", '" +
                          tag + "-single')"));
      CopyOutcome copied = copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", data);
      CHECK_FALSE(copied.ok);
      CHECK(copied.sqlstate == "22P02");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
      PgResult after = c.exec("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(single));
      CHECK(after.sqlstate() == "25P02");
      PgResult insert = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" +
                               std::to_string(keys.front()) + ", '" + tag + "-late')");
      CHECK(insert.sqlstate() == "25P02");
      REQUIRE_OK(c.exec("ROLLBACK"));
      CHECK(c.value("SELECT 1") == "1");
      for (int s = 0; s < kShards; ++s)
        CHECK_MESSAGE(d.orders_on(s, "note LIKE '" + tag + "-%'") == 0, "s" << s);
      d.check_clean();
    }
  }

  TEST_CASE("a reference write inside a transaction that wrote a sharded row commits on every shard") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    const int64_t tenant = tenant_on(2, kShards, 300);
    for (bool commit : {false, true}) {
      INFO("commit " << commit);
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(
          c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'ref-tx')"));
      PgResult inserted = c.exec("INSERT INTO plans VALUES (2, 'pro') RETURNING name");
      REQUIRE_MESSAGE(inserted.ok(), inserted.describe());
      CHECK(inserted.rows() == 1);
      CHECK(inserted.value(0, 0) == "pro");
      CHECK(c.value("SELECT string_agg(name, ',' ORDER BY id) FROM plans") == "free,pro");
      REQUIRE_OK(c.exec(commit ? "COMMIT" : "ROLLBACK"));
      for (int s = 0; s < kShards; ++s) {
        INFO("shard " << s);
        CHECK(d.plans_on(s) == (commit ? "1=free,2=pro" : "1=free"));
        CHECK(d.orders_on(s, "note = 'ref-tx'") == (commit && s == 2 ? 1 : 0));
      }
      d.check_clean();
    }
    // In the extended protocol with parameters, inside a transaction that wrote on s1.
    const int64_t other = tenant_on(1, kShards, 700);
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, 'ref-ext')",
                             {std::to_string(other)}));
    PgResult extended =
        c.exec_params("UPDATE plans SET name = $1 WHERE id = $2", {std::string("pro+"), std::string("2")});
    REQUIRE_MESSAGE(extended.ok(), extended.describe());
    CHECK(extended.command_tag() == "UPDATE 1");
    REQUIRE_OK(c.exec("COMMIT"));
    for (int s = 0; s < kShards; ++s) {
      INFO("shard " << s);
      CHECK(d.plans_on(s) == "1=free,2=pro+");
      CHECK(d.orders_on(s, "note = 'ref-ext'") == (s == 1 ? 1 : 0));
    }
    d.check_clean();
    REQUIRE_OK(c.exec("UPDATE plans SET name = 'pro' WHERE id = 2"));
    // A reference write that fails on one shard (its copy differs) fails the transaction.
    REQUIRE_OK(d.f.setup.shard(0).exec("INSERT INTO plans VALUES (3, 'only-on-s0')"));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("UPDATE plans SET name = 'free!' WHERE id = 1"));
    PgResult failed = c.exec("INSERT INTO plans VALUES (3, 'team')");
    CHECK(failed.sqlstate() == "23505");
    CHECK(contains(failed.error(), "the transaction is aborted"));
    CHECK(c.exec("SELECT count(*) FROM plans").sqlstate() == "25P02");
    REQUIRE_OK(c.exec("ROLLBACK"));
    for (int s = 0; s < kShards; ++s)
      CHECK_MESSAGE(d.plans_on(s) == (s == 0 ? "1=free,2=pro,3=only-on-s0" : "1=free,2=pro"), "s" << s);
    d.check_clean();
  }

  TEST_CASE("in session pooling COPY and reference writes use the session's servers, in and out of BEGIN") {
    PROXY_ONLY();
    Deployment d("session");
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    REQUIRE_OK(c.exec("INSERT INTO plans VALUES (2, 'pro')"));  // on its own: committed at once
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro", "s" << s);
    std::vector<int64_t> keys;
    CopyOutcome alone =
        copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", rows_on_every_shard("sa", &keys));
    REQUIRE_MESSAGE(alone.ok, alone.sqlstate);
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.orders_on(s, "note LIKE 'sa-%'") == 2, "s" << s);
    for (bool commit : {false, true}) {
      INFO("commit " << commit);
      const std::string tag = commit ? "sC" : "sR";
      keys.clear();
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("UPDATE plans SET name = '" + tag + "' WHERE id = 2"));
      CopyOutcome copied =
          copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", rows_on_every_shard(tag, &keys));
      REQUIRE_MESSAGE(copied.ok, copied.sqlstate);
      CHECK(seen_in_transaction(c, keys, tag) == static_cast<long long>(keys.size()));
      REQUIRE_OK(c.exec(commit ? "COMMIT" : "ROLLBACK"));
      for (int s = 0; s < kShards; ++s) {
        INFO("shard " << s);
        CHECK(d.plans_on(s) == (commit ? "1=free,2=sC" : "1=free,2=pro"));
        CHECK(d.orders_on(s, "note LIKE '" + tag + "-%'") == (commit ? 2 : 0));
        CHECK(d.prepared_on(s) == 0);
      }
    }
    // The session's servers still work, and still see the committed rows.
    CHECK(c.value("SELECT name FROM plans WHERE id = 2") == "sC");
    // Failures: outside a transaction the session's servers are rolled back and kept; inside one
    // the transaction fails (25P02) until ROLLBACK, which leaves nothing.
    REQUIRE_OK(d.f.setup.shard(1).exec("INSERT INTO plans VALUES (7, 'only-on-s1')"));
    PgResult failed = c.exec("INSERT INTO plans VALUES (7, 'seven')");
    CHECK(failed.sqlstate() == "23505");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(c.value("SELECT count(*) FROM plans") == "2");
    keys.clear();
    const std::string bad = rows_on_every_shard("sB", &keys) + "sB-x\tnot-a-key\n";
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("UPDATE plans SET name = 'sB' WHERE id = 2"));
    CopyOutcome copied = copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", bad);
    CHECK(copied.sqlstate == "22P02");
    CHECK(c.exec("SELECT 1").sqlstate() == "25P02");
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(c.value("SELECT name FROM plans WHERE id = 2") == "sC");
    for (int s = 0; s < kShards; ++s) {
      INFO("shard " << s);
      CHECK(d.orders_on(s, "note LIKE 'sB-%'") == 0);
      CHECK(d.plans_on(s).find("2=sC") != std::string::npos);
      CHECK(d.prepared_on(s) == 0);
    }
  }

  TEST_CASE("psycopg 3, asyncpg and pgjdbc: COPY and a parameterized reference INSERT in a transaction") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      Deployment d(mode);
      INFO("pool mode " << mode << "\nproxy log:\n" << d.f.log_tail(40));
      std::string tenants;
      for (int s = 0; s < kShards; ++s)
        tenants += (s ? "," : "") + std::to_string(tenant_on(s, kShards, 400));
      const std::string url =
          "postgresql://app:secret@127.0.0.1:" + std::to_string(d.f.proxy->port()) + "/app?sslmode=disable";
      int plan = 10;
      for (const std::string driver : {"psycopg", "asyncpg", "pgjdbc"}) {
        INFO("driver " << driver);
        CommandOptions no_bytecode;  // nothing written into the source tree
        no_bytecode.env["PYTHONDONTWRITEBYTECODE"] = "1";
        const std::vector<std::string> argv =
            driver == "pgjdbc"
                ? std::vector<std::string>{"java",
                                           "-cp",
                                           jdbc_classpath(),
                                           "EveryShardWriteCheck",
                                           url,
                                           std::to_string(plan),
                                           tenants,
                                           driver}
                : std::vector<std::string>{
                      "/usr/bin/python3", kDriverCheck, url, std::to_string(plan), tenants, driver, driver};
        CommandResult r = run_command(argv, "", std::chrono::seconds(90), no_bytecode);
        CHECK_MESSAGE(r.exit_code == 0, r.describe());
        CHECK(contains(r.out, "seen_" + driver + "-c=3\n"));
        CHECK(contains(r.out, "seen_" + driver + "-r=0\n"));
        CHECK(contains(r.out, "done\n"));
        for (int s = 0; s < kShards; ++s) {
          INFO("shard " << s);
          CHECK(d.orders_on(s, "note = '" + driver + "-c'") == 1);
          CHECK(d.orders_on(s, "note = '" + driver + "-r'") == 0);
          CHECK(contains(d.plans_on(s), std::to_string(plan) + "=" + driver + "-c"));
          CHECK_FALSE(contains(d.plans_on(s), std::to_string(plan + 1) + "="));
          CHECK(d.prepared_on(s) == 0);
        }
        plan += 10;
      }
    }
  }

  TEST_CASE("COPY into a reference table: the same rows on every shard, in and out of a transaction") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    CopyOutcome alone = copy_in(c, "COPY plans FROM STDIN", "2\tpro\n3\tteam\n");
    REQUIRE_MESSAGE(alone.ok, alone.sqlstate);
    CHECK(alone.tag == "COPY 2");  // one shard's count: the copies are equal
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team", "s" << s);
    d.check_clean();
    for (bool commit : {false, true}) {
      INFO("commit " << commit);
      const int64_t tenant = tenant_on(1, kShards, 800);
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(
          c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'ref-copy')"));
      CopyOutcome copied =
          copy_in(c, "COPY plans (id, name) FROM STDIN WITH (FORMAT csv)", "4,\"big, co\"\n");
      REQUIRE_MESSAGE(copied.ok, copied.sqlstate);
      CHECK(copied.tag == "COPY 1");
      CHECK(c.value("SELECT name FROM plans WHERE id = 4") == "big, co");
      REQUIRE_OK(c.exec(commit ? "COMMIT" : "ROLLBACK"));
      for (int s = 0; s < kShards; ++s) {
        INFO("shard " << s);
        CHECK(d.plans_on(s) == (commit ? "1=free,2=pro,3=team,4=big, co" : "1=free,2=pro,3=team"));
        CHECK(d.orders_on(s, "note = 'ref-copy'") == (commit && s == 1 ? 1 : 0));
      }
      d.check_clean();
    }
    // A row one shard's copy refuses: nothing on any shard.
    REQUIRE_OK(d.f.setup.shard(2).exec("INSERT INTO plans VALUES (5, 'only-on-s2')"));
    CopyOutcome refused = copy_in(c, "COPY plans FROM STDIN", "5\tfive\n6\tsix\n");
    CHECK_FALSE(refused.ok);
    CHECK(refused.sqlstate == "23505");
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.plans_on(s).find("6=") == std::string::npos, "s" << s);
    CHECK(copy_in(c, "COPY plans FROM '/tmp/plans.txt'", "").sqlstate == "0A000");
    d.check_clean();
  }

  TEST_CASE(
      "under cross_shard_transactions: refuse a COPY onto a second written shard fails the transaction") {
    PROXY_ONLY();
    Deployment d("", "refuse");
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgConn c = d.f.client();
    const int64_t tenant = tenant_on(1, kShards, 900);
    std::vector<int64_t> keys;
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'rf-single')"));
    CopyOutcome copied =
        copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", rows_on_every_shard("rf", &keys));
    CHECK_FALSE(copied.ok);
    CHECK(copied.sqlstate == "0A000");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
    REQUIRE_OK(c.exec("ROLLBACK"));
    // Rows for the transaction's one written shard only: allowed.
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'rf-single')"));
    CopyOutcome same =
        copy_in(c, "COPY orders (note, tenant_id) FROM STDIN", "rf-same\t" + std::to_string(tenant) + "\n");
    REQUIRE_MESSAGE(same.ok, same.sqlstate);
    REQUIRE_OK(c.exec("COMMIT"));
    for (int s = 0; s < kShards; ++s) {
      INFO("shard " << s);
      CHECK(d.orders_on(s, "note LIKE 'rf-%'") == (s == 1 ? 2 : 0));
    }
    d.check_clean();
  }
}
