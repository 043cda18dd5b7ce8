// The driver matrix: real client drivers (psycopg 3, psycopg2, asyncpg, node-postgres,
// postgres.js, pgjdbc) run their check scripts from tests/drivers/ through shardwire, in
// transaction and in session pooling, with one shard and with two. Each script asserts every
// value it reads and prints `key=value` per check; this suite compares that output line by line
// and then reads the shards directly: the tenant's rows are all on the shard that owns its bucket
// and nowhere else, the COPY table is on the default shard only.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "harness/jdbc_checks.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "pool_modes.h"

namespace it {
namespace {

const std::string kDriversDir = std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers";
const char* const kPython = "/usr/bin/python3";  // Debian's, which has the python3-* drivers

// The keys a check script prints, in order (tests/drivers/README.md).
struct Checks {
  bool simple = false;   // postgres.js .simple()
  bool rollback = true;  // a rolled-back transaction leaves no row
  bool cursor = true;
  std::vector<std::string> extra;  // after the cursor
};

struct Driver {
  std::string tag;                   // rows' note prefix, copy table suffix
  std::vector<std::string> command;  // followed by URL MODE TENANT TAG
  std::vector<std::string> variant;  // after TAG
  Checks checks;
  std::map<std::string, std::string> values;  // values that differ from the common ones
  // The whole output when it is not the common contract's (the defect reproductions); the
  // script then writes no row that survives.
  std::vector<std::string> keys = {};
};

const std::map<std::string, std::string>& common_values() {
  static const std::map<std::string, std::string> v = {
      {"connect", "ok"},         {"select1", "1"},   {"params", "42|h\u00e9llo|12.50|1704164645|00ff|null"},
      {"prepared", "56"},        {"txn", "3"},       {"batch", "5"},
      {"keyed", "8,8,8,8,8,8"},  {"error", "42P01"}, {"after_error", "1"},
      {"cursor", "66"},          {"copy_in", "3"},   {"copy_out", "1|a,2|b,3|c"},
      {"session_pid", "stable"}, {"rollback", "0"},
  };
  return v;
}

std::vector<std::string> check_keys(const Checks& c) {
  std::vector<std::string> keys = {"connect", "select1"};
  if (c.simple) keys.push_back("simple");
  for (const char* k : {"params", "prepared", "txn", "batch"}) keys.emplace_back(k);
  if (c.rollback) keys.emplace_back("rollback");
  for (const char* k : {"keyed", "error", "after_error"}) keys.emplace_back(k);
  if (c.cursor) keys.emplace_back("cursor");
  keys.insert(keys.end(), c.extra.begin(), c.extra.end());
  return keys;
}

// asyncpg's rollback and cursor, and postgres.js's rollback, are defects() below (their own
// scripts), run with these in every matrix but session pooling with two shards.
std::vector<Driver> drivers() {
  const std::string py = kDriversDir + "/python/";
  const std::string node = kDriversDir + "/node/";
  std::vector<std::string> java = {"java", "-cp", jdbc_classpath(), "JdbcCheck"};
  const std::vector<std::string> copy = {"copy_in", "copy_out"};
  const std::vector<std::string> jdbc = {"copy_in", "copy_out", "txn_merged", "txn_paged"};
  const Checks postgresjs{true, false, true, copy};
  return {
      {"psycopg3",
       {kPython, py + "psycopg3_check.py"},
       {},
       {false,
        true,
        true,
        {"binary_execute", "prepared_cache", "encoding_in_block", "copy_in", "copy_out", "pipeline",
         "txn_merged", "txn_copy"}},
       {{"binary_execute", "8"},
        {"prepared_cache", "1"},
        {"encoding_in_block", "iso8859-15|True|utf-8"},
        {"pipeline", "3,piped!,60"},
        {"txn_merged", "8|-batch-4|14|True"},
        {"txn_copy", "9|True|True"}}},
      {"psycopg2",
       {kPython, py + "psycopg2_check.py"},
       {},
       {false, true, true, {"copy_in", "copy_out", "txn_merged"}},
       {{"txn_merged", "8|-batch-4|14|True"}}},
      {"asyncpg",
       {kPython, py + "asyncpg_check.py"},
       {},
       {false, false, false, {"merged", "txn_merged", "txn_cursor", "copy_in", "copy_out", "codec"}},
       {{"merged", "-batch-4|14|14"},
        {"txn_merged", "-batch-4|14|8"},
        {"txn_cursor", "14,13,12,11,10,3,2,1"},
        {"copy_in", "COPY 3"},
        {"codec", "True"}}},
      {"nodepg", {"node", node + "pg_check.js"}, {}, {}, {}},
      {"pgjs_prepare",
       {"node", node + "postgresjs_check.js"},
       {"prepare"},
       postgresjs,
       {{"simple", "[2,3]"}}},
      {"pgjs_noprepare",
       {"node", node + "postgresjs_check.js"},
       {"noprepare"},
       postgresjs,
       {{"simple", "[2,3]"}}},
      {"jdbc_t0",
       java,
       {"0"},
       {false, true, true, jdbc},
       {{"txn_merged", "8|-batch-4|14"}, {"txn_paged", "14,13,12,11,10,3,2,1"}}},
      {"jdbc_t1",
       java,
       {"1"},
       {false, true, true, jdbc},
       {{"txn_merged", "8|-batch-4|14"}, {"txn_paged", "14,13,12,11,10,3,2,1"}}},
  };
}

std::string expected_output(const Driver& d, const std::string& mode) {
  std::vector<std::string> keys = d.keys.empty() ? check_keys(d.checks) : d.keys;
  if (mode == "session" && d.keys.empty()) keys.push_back("session_pid");
  std::string out;
  for (const auto& key : keys) {
    auto own = d.values.find(key);
    out += key + "=" + (own != d.values.end() ? own->second : common_values().at(key)) + "\n";
  }
  return out + "done\n";
}

bool has_copy(const Driver& d) {
  const auto& e = d.checks.extra;
  return std::find(e.begin(), e.end(), "copy_in") != e.end();
}

// The tenant's rows, read on each shard directly: all 8 on `owner`, none elsewhere (none at all
// for a defect reproduction, whose rows are all rolled back).
void check_rows_on_shards(const ShardedFixture& f, const Driver& d, int64_t tenant, int owner) {
  std::vector<std::string> expected;
  if (d.keys.empty()) {
    for (int i = 0; i < 5; ++i) expected.push_back(row_of(tenant, d.tag + "-batch-" + std::to_string(i)));
    for (int i = 0; i < 3; ++i) expected.push_back(row_of(tenant, d.tag + "-txn-" + std::to_string(i)));
  }
  std::sort(expected.begin(), expected.end());
  const std::string mine = "note LIKE '" + d.tag + "-%'";
  for (int s = 0; s < f.setup.shards(); ++s) {
    std::vector<std::string> rows = f.rows_on(s, mine);
    if (s == owner)
      CHECK_MESSAGE(rows == expected, d.tag << ": rows on owner shard s" << s);
    else
      CHECK_MESSAGE(rows.empty(),
                    d.tag << ": " << rows.size() << " rows on shard s" << s << ", owner is s" << owner);
  }
  if (expected.empty()) return;
  PgConn o = f.setup.shard(owner);
  CHECK_MESSAGE(o.value("SELECT sum(qty) FROM orders WHERE " + mine) == "66", d.tag);
  if (!has_copy(d)) return;
  // copy_<tag> is unsharded: on the default shard s0 only.
  PgConn s0 = f.setup.shard(0);
  CHECK_MESSAGE(
      s0.value("SELECT string_agg(id || '|' || note, ',' ORDER BY id) FROM copy_" + d.tag) == "1|a,2|b,3|c",
      d.tag);
  for (int s = 1; s < f.setup.shards(); ++s) {
    PgConn other = f.setup.shard(s);
    CHECK_MESSAGE(other.value("SELECT to_regclass('copy_" + d.tag + "') IS NULL") == "t",
                  d.tag << " on s" << s);
  }
}

// Every driver against one deployment: `shards` shards, `mode` pooling. The tenant's bucket is on
// the last shard (with two shards: not the default one).
void run_matrix(int shards, const std::string& mode, const std::vector<Driver>& list) {
  REQUIRE_MESSAGE(access((kDriversDir + "/node/node_modules/pg").c_str(), F_OK) == 0,
                  "tests/drivers/node/node_modules is missing: run scripts/install-driver-deps.sh");
  ShardedOptions options;
  options.shards = shards;
  options.proxy.pool_mode = mode;
  ShardedFixture f(options);
  const int owner = shards - 1;
  const int64_t tenant = key_where([&](uint32_t b) { return static_cast<int>(b % shards) == owner; }, 1000);
  const std::string url =
      "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
  for (const Driver& d : list) {
    std::vector<std::string> argv = d.command;
    for (const auto& a : {url, mode, std::to_string(tenant), d.tag}) argv.push_back(a);
    argv.insert(argv.end(), d.variant.begin(), d.variant.end());
    auto start = std::chrono::steady_clock::now();
    CommandOptions no_bytecode;  // nothing written into the source tree
    no_bytecode.env["PYTHONDONTWRITEBYTECODE"] = "1";
    CommandResult r = run_command(argv, "", std::chrono::seconds(90), no_bytecode);
    MESSAGE(d.tag << " (" << mode << ", " << shards << " shard(s)): exit " << r.exit_code
                  << std::string(r.timed_out ? " (timed out)" : "") << " in " << ms_since(start) << " ms");
    CHECK_MESSAGE(r.out == expected_output(d, mode), d.tag << " output differs; stderr:\n"
                                                           << r.err << "\n--- proxy log ---\n"
                                                           << f.log_tail(20));
    CHECK_MESSAGE(r.exit_code == 0, d.tag << ": " << r.describe());
    check_rows_on_shards(f, d, tenant, owner);
  }
}

// Transactions of asyncpg and postgres.js (their own scripts): a rollback, a cursor, a PREPARE
// TRANSACTION (once refused and rolled back, postgres.js waited forever for its next query; now
// prepared, then ROLLBACK PREPARED). They failed through shardwire once and are run with the
// others in every matrix.
std::vector<Driver> defects() {
  const std::string node = kDriversDir + "/node/postgresjs_rollback_check.js";
  const std::string prepare_txn = kDriversDir + "/node/postgresjs_prepare_txn_check.js";
  const std::vector<std::string> rollback = {"connect", "rollback"};
  const std::vector<std::string> prepare_keys = {"connect", "prepare_txn", "rollback", "prepared_xacts"};
  const std::map<std::string, std::string> prepare_values = {{"prepare_txn", "prepared"},
                                                             {"prepared_xacts", "0"}};
  const std::string asyncpg = kDriversDir + "/python/asyncpg_txn_check.py";
  return {
      {"asyncpg_rollback", {kPython, asyncpg}, {"rollback"}, {}, {}, rollback},
      {"asyncpg_cursor", {kPython, asyncpg}, {"cursor"}, {}, {{"cursor", "15"}}, {"connect", "cursor"}},
      {"pgjs_rollback_prepare", {"node", node}, {"prepare"}, {}, {}, rollback},
      {"pgjs_rollback_noprepare", {"node", node}, {"noprepare"}, {}, {}, rollback},
      {"pgjs_2pc_prepare", {"node", prepare_txn}, {"prepare"}, {}, prepare_values, prepare_keys},
      {"pgjs_2pc_noprepare", {"node", prepare_txn}, {"noprepare"}, {}, prepare_values, prepare_keys},
      {"jdbc_txn",
       {"java", "-cp", jdbc_classpath(), "JdbcTxnCheck"},
       {},
       {},
       {{"txn_rollbacks", "14,14,14"}},
       {"connect", "txn_rollbacks"}},
  };
}

// The next result of a pipelined libpq connection; {true, nullptr} when nothing came in time.
std::pair<bool, PGresult*> next_result(PGconn* c, std::chrono::steady_clock::time_point deadline) {
  while (PQisBusy(c)) {
    PQflush(c);
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {true, nullptr};
    pollfd p{PQsocket(c), POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 500)));
    if (!PQconsumeInput(c)) break;
  }
  return {false, PQgetResult(c)};
}

// Status of the next result; "NULL" for the end of a query's results, "TIMEOUT".
std::string next_status(PGconn* c, std::chrono::steady_clock::time_point deadline) {
  auto [timed_out, res] = next_result(c, deadline);
  if (timed_out) return "TIMEOUT";
  if (!res) return "NULL";
  std::string st = PQresStatus(PQresultStatus(res));
  PQclear(res);
  return st;
}

}  // namespace

TEST_SUITE("drivers") {
  // Session pooling with two shards, libpq, simple protocol: the session's first server is on s0
  // (SELECT 1), a keyed INSERT for a tenant on s1 then runs on a second server of the session, in
  // and out of a transaction (0A000 before the session kept one server per shard).
  TEST_CASE("session pooling, two shards: BEGIN then a keyed INSERT for a tenant on s1 (libpq)") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 2;
    options.proxy.pool_mode = "session";
    ShardedFixture f(options);
    const int64_t key = key_where([](uint32_t b) { return b % 2 == 1; });
    const std::string insert = "INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", ";
    PgConn c = f.client();
    // A statement that names no table first: the session's server is then one on s0.
    CHECK(c.value("SELECT 1") == "1");
    CHECK_OK(c.exec(insert + "'autocommit')"));
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK_OK(c.exec(insert + "'in-transaction')"));
    CHECK_OK(c.exec("COMMIT"));
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(key, "autocommit"), row_of(key, "in-transaction")});
    CHECK(f.rows_on(0).empty());
  }
  // Session pooling with two shards: BEGIN, a prepared statement shardwire refuses (its Parse is
  // answered with the refusal), ROLLBACK; the session must go on to another shard afterwards
  // (every later statement for s1 got 0A000 "the transaction is on shard s0").
  TEST_CASE("session pooling, two shards: BEGIN, a refused prepared statement, ROLLBACK, then s1") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 2;
    options.proxy.pool_mode = "session";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(20));
    const int64_t key = key_where([](uint32_t b) { return b % 2 == 1; });
    const std::string insert = "INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", ";
    for (const std::string refused :
         {"PREPARE TRANSACTION 'shardwire_refused'", "SET session_replication_role = replica"}) {
      CAPTURE(refused);
      for (const bool attached : {false, true}) {
        CAPTURE(attached);
        PgConn c = f.client();
        if (attached) CHECK(c.value("SELECT 1") == "1");  // the session's server is one on s0
        REQUIRE_OK(c.exec("BEGIN"));
        CHECK_FALSE(c.prepare("refused", refused).ok());
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
        REQUIRE_OK(c.exec("ROLLBACK"));
        CHECK_OK(c.exec(insert + "'after-refusal')"));
        REQUIRE_OK(c.exec("BEGIN"));
        CHECK_OK(c.exec(insert + "'after-refusal')"));
        REQUIRE_OK(c.exec("COMMIT"));
      }
    }
    CHECK(f.rows_on(1).size() == 8);
  }
  TEST_CASE("drivers through shardwire: transaction pooling, one shard") {
    PROXY_ONLY();
    std::vector<Driver> list = drivers();
    for (Driver& d : defects()) list.push_back(std::move(d));  // rollbacks and cursors
    run_matrix(1, "transaction", list);
  }
  // asyncpg and postgres.js send BEGIN, then Parse + Describe + Flush of the keyed statement and
  // Bind + Execute + Sync: the Bind picks the transaction's shard (s1), not the Flush (0A000 before).
  TEST_CASE("drivers through shardwire: transaction pooling, two shards") {
    PROXY_ONLY();
    std::vector<Driver> list = drivers();
    for (Driver& d : defects()) list.push_back(std::move(d));
    run_matrix(2, "transaction", list);
  }
  TEST_CASE("drivers through shardwire: session pooling, one shard") {
    PROXY_ONLY();
    std::vector<Driver> list = drivers();
    for (Driver& d : defects()) list.push_back(std::move(d));  // rollbacks and cursors
    run_matrix(1, "session", list);
  }
  // The session keeps one server per shard it touched (tenant on s1 after statements on s0, in
  // and out of transactions); each used to fail with 0A000 or a fence 40001.
  TEST_CASE("drivers through shardwire: session pooling, two shards") {
    PROXY_ONLY();
    std::vector<Driver> list = drivers();
    for (Driver& d : defects()) list.push_back(std::move(d));
    run_matrix(2, "session", list);
  }

  // What asyncpg and postgres.js send, with libpq and two shards: the Flush-ended Parse/Describe
  // runs on a server lent for it only, the Bind picks s1 for the transaction and its statement is
  // parsed there again. A Parse that fails in such a batch fails the transaction.
  TEST_CASE("two shards: BEGIN, Parse + Describe + Flush, then Bind for a tenant on s1 runs there") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 2;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(20));
    const int64_t key = key_where([](uint32_t b) { return b % 2 == 1; });
    const std::string k = std::to_string(key);
    for (const std::string name : {"", "ins"}) {
      CAPTURE(name);
      PgConn conn = f.client();
      REQUIRE_OK(conn.exec("BEGIN"));
      PGconn* c = conn.get();
      REQUIRE(PQenterPipelineMode(c) == 1);
      const std::string insert = "INSERT INTO orders (tenant_id, note) VALUES ($1, 'lent" + name + "')";
      REQUIRE(PQsendPrepare(c, name.c_str(), insert.c_str(), 0, nullptr) == 1);
      REQUIRE(PQsendDescribePrepared(c, name.c_str()) == 1);
      REQUIRE(PQsendFlushRequest(c) == 1);
      REQUIRE(PQflush(c) == 0);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // ParseComplete
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // the description
      CHECK(next_status(c, deadline) == "NULL");
      const char* value = k.c_str();
      REQUIRE(PQsendQueryPrepared(c, name.c_str(), 1, &value, nullptr, nullptr, 0) == 1);
      REQUIRE(PQpipelineSync(c) == 1);
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // INSERT 0 1
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
      REQUIRE(PQexitPipelineMode(c) == 1);
      CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS);
      CHECK(conn.value("SELECT count(*) FROM orders WHERE tenant_id = " + k + " AND note = 'lent" + name +
                       "'") == "1");  // in it, on s1
      REQUIRE_OK(conn.exec("COMMIT"));
    }
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(key, "lent"), row_of(key, "lentins")});
    CHECK(f.rows_on(0).empty());

    PgConn conn = f.client();
    REQUIRE_OK(conn.exec("BEGIN"));
    PGconn* c = conn.get();
    REQUIRE(PQenterPipelineMode(c) == 1);
    REQUIRE(PQsendPrepare(c, "", "SELEC 1", 0, nullptr) == 1);
    REQUIRE(PQsendFlushRequest(c) == 1);
    REQUIRE(PQflush(c) == 0);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    CHECK(next_status(c, deadline) == "PGRES_FATAL_ERROR");  // 42601
    CHECK(next_status(c, deadline) == "NULL");
    REQUIRE(PQpipelineSync(c) == 1);
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
    REQUIRE(PQexitPipelineMode(c) == 1);
    CHECK(PQtransactionStatus(c) == PQTRANS_INERROR);
    CHECK(conn.exec("SELECT 1").sqlstate() == "25P02");
    REQUIRE_OK(conn.exec("ROLLBACK"));
    CHECK(conn.value("SELECT 1") == "1");
  }
  // What asyncpg and postgres.js send, with libpq and no sharding: BEGIN (simple query), then
  // Parse + Describe(statement) + Flush of an INSERT, then Bind + Execute + Sync, then ROLLBACK.
  // The row must be gone, as it is on PostgreSQL (SHARDWIRE_IT_DIRECT=1 runs this case too).
  TEST_CASE(
      "BEGIN, then an INSERT sent as Parse + Describe + Flush and Bind + Execute + Sync, then ROLLBACK") {
    for_each_pool_mode([&](Target& t) {
      const std::string table = unique_name("drivers_rollback");
      PgConn conn = t.connect_or_throw();
      REQUIRE_OK(conn.exec("CREATE TABLE " + table + " (v int)"));
      REQUIRE_OK(conn.exec("BEGIN"));
      PGconn* c = conn.get();
      REQUIRE(PQenterPipelineMode(c) == 1);
      const std::string insert = "INSERT INTO " + table + " VALUES ($1)";
      REQUIRE(PQsendPrepare(c, "ins", insert.c_str(), 0, nullptr) == 1);
      REQUIRE(PQsendDescribePrepared(c, "ins") == 1);
      REQUIRE(PQsendFlushRequest(c) == 1);
      REQUIRE(PQflush(c) == 0);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // ParseComplete
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // the description
      CHECK(next_status(c, deadline) == "NULL");
      const char* one = "1";
      REQUIRE(PQsendQueryPrepared(c, "ins", 1, &one, nullptr, nullptr, 0) == 1);
      REQUIRE(PQpipelineSync(c) == 1);
      CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // INSERT 0 1
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
      REQUIRE(PQexitPipelineMode(c) == 1);
      CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS);
      REQUIRE_OK(conn.exec("ROLLBACK"));
      CHECK(conn.value("SELECT count(*) FROM " + table) == "0");
      CHECK_OK(conn.exec("DROP TABLE " + table));
    });
  }

  // psycopg prepares a statement inside a transaction as libpq's PQprepare does: Parse + Sync on
  // its own (no Bind: it picks no shard), then Bind + Execute + Sync. The ROLLBACK must undo the
  // INSERT, in both pool modes (in session pooling the row stayed: the BEGIN never reached the
  // server). Then DEALLOCATE of the protocol-level name, as psycopg's statement cache evicts one.
  TEST_CASE("BEGIN, PQprepare (Parse + Sync alone), PQexecPrepared INSERT, ROLLBACK; DEALLOCATE") {
    for_each_pool_mode([&](Target& t) {
      const std::string table = unique_name("drivers_prepare_rollback");
      PgConn admin = shared_cluster().admin("app");
      REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (v int)"));
      for (const bool extended_begin : {false, true}) {
        CAPTURE(extended_begin);
        PgConn conn = t.connect_or_throw();  // BEGIN is its first statement
        const std::string name = extended_begin ? "ins_x" : "ins_s";
        REQUIRE_OK(extended_begin ? conn.exec_params("BEGIN", {}) : conn.exec("BEGIN"));
        REQUIRE_OK(conn.prepare(name, "INSERT INTO " + table + " VALUES ($1)"));
        CHECK(conn.exec_prepared(name, {"1"}).command_tag() == "INSERT 0 1");
        CHECK(PQtransactionStatus(conn.get()) == PQTRANS_INTRANS);
        REQUIRE_OK(extended_begin ? conn.exec_params("ROLLBACK", {}) : conn.exec("ROLLBACK"));
        CHECK(conn.value("SELECT count(*) FROM " + table) == "0");
        PgResult deallocated =
            extended_begin ? conn.exec_params("DEALLOCATE " + name, {}) : conn.exec("DEALLOCATE " + name);
        CHECK_OK(deallocated);
        CHECK(deallocated.command_tag() == "DEALLOCATE");
        CHECK(conn.exec_prepared(name, {"2"}).sqlstate() == "26000");
      }
      CHECK_OK(admin.exec("DROP TABLE " + table));
    });
  }
}

}  // namespace it
