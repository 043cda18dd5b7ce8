// Two-phase commit through shardwire, a catalog and real shards. A transaction written on two
// shards commits on both (simple and extended protocol, transaction and session pooling, with a
// read-only third leg); under sharding.cross_shard_transactions: refuse the second write is
// refused; a PREPARE TRANSACTION that fails on one shard (a deferred unique violation there)
// rolls back every shard and the client gets that error naming the shard. The client's own
// PREPARE TRANSACTION of a transaction on one shard runs there and COMMIT / ROLLBACK PREPARED find
// it (integration.client_two_phase has the rest); of a transaction on two shards it is refused
// (0A000) and rolled back. Named prepared BEGIN, SAVEPOINT, COMMIT and ROLLBACK (pgjdbc's S_n),
// parsed in a batch the proxy answers itself, work when later bound by name on either shard. No
// prepared transaction is ever left behind (pg_prepared_xacts is checked on every shard).
#include <thread>

#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

constexpr int kTwoShards = 2;
constexpr int kBalance = 100;

std::string k(int64_t key) { return std::to_string(key); }
// The balance (orders.qty) of `tenant`, read on its shard directly.
long long balance_on(const ShardedFixture& f, int shard, int64_t tenant) {
  PgConn c = f.setup.shard(shard);
  return std::stoll(c.value("SELECT coalesce(sum(qty), -1) FROM orders WHERE tenant_id = " + k(tenant)));
}

// Prepared transactions of shardwire's (gid prefix) on the shards, summed.
long long shardwire_prepared(const ShardedFixture& f, int shards) {
  long long n = 0;
  for (int i = 0; i < shards; ++i) {
    PgConn c = f.setup.shard(i);
    n +=
        std::stoll(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' "
                           "AND database = current_database()"));
  }
  return n;
}

void open_account(PgConn& c, int64_t tenant) {
  PgResult r = c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(tenant) + ", 'account', " +
                      std::to_string(kBalance) + ")");
  if (!r.ok()) throw std::runtime_error("open account: " + r.describe());
}

ShardedOptions with_two_shards(ShardedOptions options) {
  options.shards = kTwoShards;
  return options;
}

// Two shards through shardwire, an account on each: a on s0, b on s1.
struct TwoAccounts {
  explicit TwoAccounts(const ShardedOptions& options) : f(with_two_shards(options)) {
    open_account(c, a);
    open_account(c, b);
  }
  ShardedFixture f;
  int64_t a = tenant_on(0, kTwoShards);
  int64_t b = tenant_on(1, kTwoShards);
  PgConn c = f.client();
};

std::string debit(int64_t tenant, int amount) {
  return "UPDATE orders SET qty = qty - " + std::to_string(amount) + " WHERE tenant_id = " + k(tenant);
}
std::string credit(int64_t tenant, int amount) {
  return "UPDATE orders SET qty = qty + " + std::to_string(amount) + " WHERE tenant_id = " + k(tenant);
}

// Prepared transactions named `gid` in the shards' cluster; rolled back (directly on their
// database) so that a failing run leaves no locks behind for the other tests.
long long count_and_clean_prepared(const ShardedFixture& f, const std::string& gid) {
  long long found = 0;
  for (int i = 0; i < kTwoShards; ++i) {
    PgConn c = f.setup.shard(i);
    PgResult r = c.exec("SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + gid +
                        "' AND database = current_database()");
    if (!r.ok()) throw std::runtime_error("pg_prepared_xacts: " + r.describe());
    long long here = std::stoll(r.value(0, 0));
    if (here > 0) (void)c.exec("ROLLBACK PREPARED '" + gid + "'");
    found += here;
  }
  return found;
}

// Parses `name` as `sql` and runs it in one pipelined batch, Parse Bind Describe Execute Sync: the
// batch pgjdbc sends the first time it server-prepares a statement (COMMIT and BEGIN too). The
// statement's command tag, or its error.
std::string parse_and_run_named(PgConn& c, const std::string& name, const std::string& sql) {
  PGconn* p = c.get();
  if (PQenterPipelineMode(p) != 1) return "error: no pipeline mode";
  if (PQsendPrepare(p, name.c_str(), sql.c_str(), 0, nullptr) != 1 ||
      PQsendQueryPrepared(p, name.c_str(), 0, nullptr, nullptr, nullptr, 0) != 1 || PQpipelineSync(p) != 1)
    return std::string("error: send: ") + PQerrorMessage(p);
  std::string outcome = "error: no result";
  for (int i = 0, ends = 0; i < 3 && ends <= 2;) {  // the Parse's result, the statement's, the Sync
    PGresult* r = PQgetResult(p);
    if (r == nullptr) {  // the end of one statement's results (more: the connection is gone)
      ++ends;
      continue;
    }
    ++i;
    if (PQresultStatus(r) == PGRES_FATAL_ERROR) outcome = std::string("error: ") + PQresultErrorMessage(r);
    if (i == 2 && PQresultStatus(r) == PGRES_COMMAND_OK) outcome = PQcmdStatus(r);
    PQclear(r);
  }
  PQexitPipelineMode(p);
  return outcome;
}

// A named statement prepared earlier, run again (Bind Describe Execute Sync): its tag or error.
std::string run_named(PgConn& c, const std::string& name) {
  PgResult r = c.exec_prepared(name, {});
  return r.ok() ? r.command_tag() : "error: " + r.describe();
}
}  // namespace

TEST_SUITE("two_phase") {
  TEST_CASE("the client's PREPARE TRANSACTION on one shard runs there; COMMIT PREPARED finds it") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = kTwoShards;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const int64_t key = key_where([](uint32_t bucket) { return bucket % kTwoShards == 1; });  // on s1
    const std::string gid = unique_name("sw_gid");
    PgConn c = f.client();

    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'two-phase')"));
    PgResult prepared = c.exec("PREPARE TRANSACTION '" + gid + "'");
    CHECK_MESSAGE(prepared.ok(), prepared.describe());
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(f.rows_on(1, "note = 'two-phase'").empty());
    CHECK_OK(c.exec("COMMIT PREPARED '" + gid + "'"));
    CHECK(f.rows_on(1, "note = 'two-phase'") == std::vector<std::string>{row_of(key, "two-phase")});
    // The extended protocol alike: an empty transaction is prepared too.
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK_OK(c.exec_params("PREPARE TRANSACTION '" + gid + "'", {}));
    CHECK_OK(c.exec_params("ROLLBACK PREPARED '" + gid + "'", {}));
    CHECK(count_and_clean_prepared(f, gid) == 0);

    for (const char* finish : {"COMMIT PREPARED", "ROLLBACK PREPARED", "commit prepared"}) {
      PgResult r = c.exec(std::string(finish) + " '" + gid + "'");
      CHECK(r.sqlstate() == "42704");  // finished already: PostgreSQL's "does not exist"
    }
    // The session carries on: a keyed write in autocommit lands on its shard.
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'after')"));
    CHECK(f.rows_on(1, "note = 'after'") == std::vector<std::string>{row_of(key, "after")});
    CHECK(count_and_clean_prepared(f, gid) == 0);
  }
}  // TEST_SUITE

TEST_SUITE("two_phase") {
  TEST_CASE("a transfer written on two shards commits on both; a third shard only read commits too") {
    PROXY_ONLY();
    for (const char* pool_mode : {"transaction", "session"}) {
      CAPTURE(pool_mode);
      ShardedOptions options;
      options.proxy.pool_mode = pool_mode;
      options.proxy.log_level = "debug";  // a committed two-phase commit is logged at debug level
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const int64_t a = tenant_on(0, kShards), b = tenant_on(1, kShards), r = tenant_on(2, kShards);
      PgConn c = f.client();
      for (int64_t t : {a, b, r}) open_account(c, t);

      // Simple protocol: debit on s0, read on s2, credit on s1.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec(debit(a, 10)));
      PgResult read = c.exec("SELECT qty FROM orders WHERE tenant_id = " + k(r));
      REQUIRE_OK(read);
      CHECK(read.value(0, 0) == std::to_string(kBalance));
      REQUIRE_OK(c.exec(credit(b, 10)));
      PgResult commit = c.exec("COMMIT");
      REQUIRE_OK(commit);
      CHECK(commit.command_tag() == "COMMIT");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      CHECK(balance_on(f, 0, a) == kBalance - 10);
      CHECK(balance_on(f, 1, b) == kBalance + 10);

      // Extended protocol, the other way round.
      REQUIRE_OK(c.exec_params("BEGIN", {}));
      REQUIRE_OK(c.exec_params("UPDATE orders SET qty = qty - $1 WHERE tenant_id = $2", {"7", k(b)}));
      REQUIRE_OK(c.exec_params("UPDATE orders SET qty = qty + $1 WHERE tenant_id = $2", {"7", k(a)}));
      PgResult extended = c.exec_params("COMMIT", {});
      REQUIRE_OK(extended);
      CHECK(extended.command_tag() == "COMMIT");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      CHECK(balance_on(f, 0, a) == kBalance - 3);
      CHECK(balance_on(f, 1, b) == kBalance + 3);

      // The client's own PREPARE TRANSACTION in a transaction on two shards is refused; it rolls back.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec(debit(a, 1)));
      REQUIRE_OK(c.exec(credit(b, 1)));
      PgResult prepare = c.exec("PREPARE TRANSACTION 'client_gid'");
      CHECK(prepare.sqlstate() == "0A000");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);  // rolled back on both shards
      for (int i = 0; i < kShards; ++i) CHECK(f.idle_in_transaction(i) == 0);
      REQUIRE_OK(c.exec("ROLLBACK"));
      CHECK(balance_on(f, 0, a) == kBalance - 3);
      CHECK(balance_on(f, 1, b) == kBalance + 3);
      // The same sent in the extended protocol (postgres.js): rolled back on both shards too.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec(debit(a, 1)));
      REQUIRE_OK(c.exec(credit(b, 1)));
      PgResult extended_prepare = c.exec_params("PREPARE TRANSACTION 'client_gid'", {});
      CHECK(extended_prepare.sqlstate() == "0A000");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      for (int i = 0; i < kShards; ++i) CHECK(f.idle_in_transaction(i) == 0);
      CHECK(balance_on(f, 0, a) == kBalance - 3);
      CHECK(balance_on(f, 1, b) == kBalance + 3);

      // The session goes on: a one-shard transaction commits without two-phase commit.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec(debit(r, 5)));
      REQUIRE_OK(c.exec("COMMIT"));
      CHECK(balance_on(f, 2, r) == kBalance - 5);
      CHECK(shardwire_prepared(f, kShards) == 0);
      for (int i = 0; i < kShards; ++i) CHECK(f.idle_in_transaction(i) == 0);
      CHECK(f.proxy->wait_for_log("two-phase commit shardwire_", std::chrono::seconds(5)));
    }
  }

  TEST_CASE("COMMIT latency: one shard, one written of two, two written (two-phase commit)") {
    PROXY_ONLY();
    ShardedOptions options;
    TwoAccounts accounts(options);
    ShardedFixture& f = accounts.f;
    PgConn& c = accounts.c;
    const int64_t a = accounts.a, b = accounts.b;
    INFO("proxy log:\n" << f.log_tail());
    constexpr int kRounds = 200;
    // Mean microseconds of the COMMIT of kRounds transactions running `statements`.
    auto mean_commit_us = [&](const std::vector<std::string>& statements) {
      std::chrono::steady_clock::duration total{};
      for (int i = 0; i < kRounds; ++i) {
        REQUIRE_OK(c.exec("BEGIN"));
        for (const std::string& sql : statements) REQUIRE_OK(c.exec(sql));
        const auto started = std::chrono::steady_clock::now();
        PgResult commit = c.exec("COMMIT");
        total += std::chrono::steady_clock::now() - started;
        REQUIRE_OK(commit);
        REQUIRE(commit.command_tag() == "COMMIT");
      }
      return std::chrono::duration_cast<std::chrono::microseconds>(total).count() / kRounds;
    };
    const long long one_shard = mean_commit_us({debit(a, 1), credit(a, 1)});
    const long long one_written =
        mean_commit_us({debit(a, 1), "SELECT qty FROM orders WHERE tenant_id = " + k(b), credit(a, 1)});
    const long long two_written = mean_commit_us({debit(a, 1), credit(b, 1)});
    MESSAGE("mean COMMIT latency over " << kRounds << " transactions: one shard " << one_shard
                                        << " us, two shards one written " << one_written
                                        << " us, two written (two-phase commit) " << two_written << " us");
    CHECK(balance_on(f, 0, a) == kBalance - kRounds);
    CHECK(balance_on(f, 1, b) == kBalance + kRounds);
    CHECK(shardwire_prepared(f, kTwoShards) == 0);
  }

  TEST_CASE("under cross_shard_transactions: refuse a write on a second shard is refused; nothing commits") {
    PROXY_ONLY();
    ShardedOptions options;
    options.cross_shard_transactions = "refuse";
    TwoAccounts accounts(options);
    ShardedFixture& f = accounts.f;
    PgConn& c = accounts.c;
    const int64_t a = accounts.a, b = accounts.b;
    INFO("proxy log:\n" << f.log_tail());
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(debit(a, 10)));
    PgResult refused = c.exec(credit(b, 10));
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "sharding.cross_shard_transactions is refuse"));
    CHECK(contains(refused.error(), "shard s0"));
    CHECK(contains(refused.error(), "shard s1"));
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "ROLLBACK");
    CHECK(balance_on(f, 0, a) == kBalance);
    CHECK(balance_on(f, 1, b) == kBalance);
    CHECK(shardwire_prepared(f, kTwoShards) == 0);
  }

  TEST_CASE("without catalog.dsn a write on a second shard is refused: two-phase commit needs the catalog") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = kTwoShards;
    ShardedSetup setup(shared_cluster(), options);
    setup.init_or_throw();  // the shards' schema; the proxy below runs without the catalog
    ProxyOptions proxy = setup.proxy_options();
    const std::string catalog = "catalog:\n  dsn: " + yaml_quote(setup.catalog_dsn()) + "\n";
    const size_t at = proxy.extra_yaml.find(catalog);
    REQUIRE(at != std::string::npos);
    proxy.extra_yaml.erase(at, catalog.size());
    ProxyProcess shardwire(setup.cluster(), proxy);
    INFO("proxy log:\n" << shardwire.log_tail());
    ConnectResult login = connect(shardwire.conninfo());
    REQUIRE_MESSAGE(login.ok, login.error);
    PgConn c = std::move(login.conn);
    REQUIRE_OK(c.exec(kCreateOrders));
    const int64_t a = tenant_on(0, kTwoShards), b = tenant_on(1, kTwoShards);
    open_account(c, a);
    open_account(c, b);
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(debit(a, 10)));
    PgResult refused = c.exec(credit(b, 10));
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "two-phase commit needs catalog.dsn"));
    REQUIRE_OK(c.exec("ROLLBACK"));
    PgConn s0 = setup.shard(0), s1 = setup.shard(1);
    CHECK(s0.value("SELECT qty FROM orders WHERE tenant_id = " + k(a)) == std::to_string(kBalance));
    CHECK(s1.value("SELECT qty FROM orders WHERE tenant_id = " + k(b)) == std::to_string(kBalance));
  }

  TEST_CASE("a PREPARE TRANSACTION that fails on one shard rolls back both; the client gets its error") {
    PROXY_ONLY();
    ShardedOptions options;
    TwoAccounts accounts(options);
    ShardedFixture& f = accounts.f;
    PgConn& c = accounts.c;
    const int64_t a = accounts.a, b = accounts.b;
    INFO("proxy log:\n" << f.log_tail());
    // On s1 only: a deferred unique constraint, checked when the transaction prepares.
    PgConn s1 = f.setup.shard(1);
    REQUIRE_OK(
        s1.exec("ALTER TABLE orders ADD CONSTRAINT one_note_per_tenant UNIQUE (tenant_id, note) "
                "DEFERRABLE INITIALLY DEFERRED"));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(debit(a, 10)));
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(b) + ", 'dup', 1), (" + k(b) +
                      ", 'dup', 2)"));
    PgResult commit = c.exec("COMMIT");
    INFO(commit.describe());
    CHECK_FALSE(commit.ok());
    CHECK(commit.sqlstate() == "23505");
    CHECK(contains(commit.error(), "PREPARE TRANSACTION on shard s1"));
    CHECK(contains(commit.error(), "rolled back on every shard"));
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(balance_on(f, 0, a) == kBalance);
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note = 'dup'") == "0");
    CHECK(shardwire_prepared(f, kTwoShards) == 0);
    for (int i = 0; i < kTwoShards; ++i) CHECK(f.idle_in_transaction(i) == 0);
    // The session goes on, and the next transfer commits.
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec(debit(a, 10)));
    REQUIRE_OK(c.exec(credit(b, 10)));
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(balance_on(f, 0, a) == kBalance - 10);
    CHECK(balance_on(f, 1, b) == kBalance + 10);
  }
  TEST_CASE("named prepared BEGIN, SAVEPOINT, COMMIT and ROLLBACK around writes on two shards (pgjdbc's)") {
    PROXY_ONLY();
    for (const std::string pool_mode : {"transaction", "session"}) {
      CAPTURE(pool_mode);
      ShardedOptions options;
      options.proxy.pool_mode = pool_mode;
      TwoAccounts accounts(options);
      ShardedFixture& f = accounts.f;
      PgConn& c = accounts.c;
      const int64_t a = accounts.a, b = accounts.b;
      INFO("proxy log:\n" << f.log_tail());
      // A new session's first batch: the proxy answers BEGIN and ROLLBACK with no server at all.
      PgConn fresh = f.client();
      CHECK(parse_and_run_named(fresh, "S_1", "BEGIN") == "BEGIN");
      CHECK(parse_and_run_named(fresh, "S_2", "ROLLBACK") == "ROLLBACK");
      CHECK(run_named(fresh, "S_1") == "BEGIN");
      REQUIRE_OK(fresh.exec(credit(b, 2)));
      CHECK(run_named(fresh, "S_2") == "ROLLBACK");
      CHECK(balance_on(f, 1, b) == kBalance);
      // First use: each statement is parsed in the batch that runs it; the proxy answers the
      // BEGIN, and the COMMIT batch starts two-phase commit, so no server parses either there.
      CHECK(parse_and_run_named(c, "S_1", "BEGIN") == "BEGIN");
      REQUIRE_OK(c.exec(debit(a, 10)));
      CHECK(parse_and_run_named(c, "S_2", "SAVEPOINT sp") == "SAVEPOINT");
      REQUIRE_OK(c.exec(credit(b, 10)));
      CHECK(parse_and_run_named(c, "S_3", "COMMIT") == "COMMIT");
      CHECK(balance_on(f, 0, a) == kBalance - 10);
      CHECK(balance_on(f, 1, b) == kBalance + 10);
      // Later uses bind the names only, whichever shard's server runs them.
      CHECK(run_named(c, "S_1") == "BEGIN");
      REQUIRE_OK(c.exec(credit(b, 1)));
      CHECK(run_named(c, "S_2") == "SAVEPOINT");
      REQUIRE_OK(c.exec(debit(a, 1)));
      CHECK(run_named(c, "S_3") == "COMMIT");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      CHECK(balance_on(f, 0, a) == kBalance - 11);
      CHECK(balance_on(f, 1, b) == kBalance + 11);
      // ROLLBACK the same way: first parsed in its batch, then bound by name.
      for (int round = 0; round < 2; ++round) {
        CAPTURE(round);
        CHECK(run_named(c, "S_1") == "BEGIN");
        REQUIRE_OK(c.exec(debit(a, 5)));
        REQUIRE_OK(c.exec(credit(b, 5)));
        CHECK((round == 0 ? parse_and_run_named(c, "S_4", "ROLLBACK") : run_named(c, "S_4")) == "ROLLBACK");
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      }
      CHECK(balance_on(f, 0, a) == kBalance - 11);
      CHECK(balance_on(f, 1, b) == kBalance + 11);
      CHECK(shardwire_prepared(f, kTwoShards) == 0);
      for (int i = 0; i < kTwoShards; ++i) CHECK(f.idle_in_transaction(i) == 0);
    }
  }
}  // TEST_SUITE
