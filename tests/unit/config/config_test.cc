#include "config/config.h"

#include <doctest/doctest.h>

#include <string>

using namespace sw::config;
using namespace std::chrono_literals;

namespace {

const std::string kData = std::string(SHARDWIRE_TEST_DATA) + "/unit/config/data/";

// Six valid lines; cases append from line 7 on.
const std::string kHead =
    "auth:\n"                                                                          // 1
    "  method: scram-sha-256\n"                                                        // 2
    "  users: [ { name: app, password: secret }, { name: admin, password: pw } ]\n"    // 3
    "shards:\n"                                                                        // 4
    "  - { name: s0, dsn: \"host=127.0.0.1 port=5433 dbname=app user=postgres\" }\n"   // 5
    "  - { name: s1, dsn: \"host=127.0.0.1 port=5434 dbname=app user=postgres\" }\n";  // 6

// Loads `yaml` as "shardwire.yaml" and checks the error's file, line, key and message.
void expect_error(const std::string& yaml, int line, const std::string& key, const std::string& message) {
  try {
    load_string(yaml, "shardwire.yaml");
    FAIL("loaded without error: " << yaml);
  } catch (const ConfigError& e) {
    INFO("what(): " << std::string(e.what()));
    CHECK(e.file() == "shardwire.yaml");
    CHECK(e.line() == line);
    CHECK(e.key() == key);
    std::string prefix = "shardwire.yaml" + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                         (key.empty() ? "" : key + ": ");
    CHECK(std::string(e.what()).rfind(prefix, 0) == 0);
    CHECK(std::string(e.what()).find(message) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("the full example configuration (data/full.yaml) loads") {
  Config c = load_file(kData + "full.yaml");
  CHECK(c.file == kData + "full.yaml");
  CHECK(c.listen.host == "127.0.0.1");
  CHECK(c.listen.port == 6432);
  CHECK(c.listen.max_client_connections == 10000);
  CHECK_FALSE(c.listen.reuse_port);
  CHECK_FALSE(c.listen.tls.enabled());
  CHECK(c.workers == 1);
  CHECK(c.admin.database == "shardwire");
  REQUIRE(c.admin.users.size() == 1);
  CHECK(c.admin.users[0] == "admin");
  CHECK(c.metrics.listen == "127.0.0.1:9930");
  CHECK(c.auth.method == AuthMethod::ScramSha256);
  REQUIRE(c.auth.users.size() == 2);
  CHECK(c.auth.find("app")->password == "secret");
  CHECK(c.auth.find("admin")->password == "adminpw");
  CHECK(c.auth.find("nobody") == nullptr);
  CHECK(c.pool.mode == PoolMode::Transaction);
  CHECK(c.pool.size == 20);
  CHECK(c.pool.idle_timeout == 60s);
  CHECK(c.pool.query_wait_timeout == 5s);
  CHECK(c.catalog.dsn == "host=127.0.0.1 port=5432 dbname=shardwire user=postgres");
  REQUIRE(c.shards.size() == 2);
  CHECK(c.shards[0].name == "s0");
  CHECK(c.shards[0].conn.port == 5433);
  CHECK(c.shards[0].conn.dbname == "app");
  CHECK(c.shards[0].conn.user == "postgres");
  CHECK(c.shards[1].conn.port == 5434);
  CHECK(c.find_shard("s1") == &c.shards[1]);
  CHECK(c.find_shard("s9") == nullptr);
  CHECK(c.sharding.buckets == 4096);
  CHECK(c.sharding.default_shard == "s0");
  REQUIRE(c.sharding.tables.size() == 1);
  CHECK(c.sharding.tables[0].name == "orders");
  CHECK(c.sharding.tables[0].key == "tenant_id");
  CHECK(c.sharding.tables[0].type == "bigint");
  CHECK(c.sharding.tables[0].version_column == "row_version");
  CHECK(c.mover.copy_rows_per_sec == 50000);
  CHECK(c.mover.rollback_window == 24h);
  CHECK(c.cutover.queue_timeout == 2s);
  CHECK(c.cutover.queue_max == 10000);
  CHECK(c.cutover.drain_timeout == 5s);
  CHECK(c.cutover.drain_action == DrainAction::Abort);
  CHECK(c.fanout.max_rows_buffered == 1000);
  CHECK(c.fanout.max_groups == 100000);
  CHECK(c.fanout.max_distinct_values == 1000000);
  CHECK(c.database == "app");  // the first shard's dbname
}

TEST_CASE("block style loads the same config as flow style") {
  Config flow = load_file(kData + "full.yaml");
  Config block = load_file(kData + "block.yaml");
  ConfigDiff d = diff(flow, block);
  CHECK(d.changed.empty());
  CHECK(d.need_restart.empty());
}

TEST_CASE("defaults of a minimal config") {
  Config c = load_string(
      "auth: { method: trust, users: [ { name: app } ] }\n"
      "shards: [ { name: a, dsn: 'host=db1' }, { name: b, dsn: 'host=db2' } ]\n",
      "min.yaml");
  CHECK(c.listen.host == "127.0.0.1");
  CHECK(c.listen.port == 6432);
  CHECK(c.workers == 1);
  CHECK(c.log_level == "info");
  CHECK(c.max_message_size == 256ull << 20);
  CHECK(c.statement_cache == 16384);
  CHECK(c.shutdown_timeout == 25s);
  CHECK(c.admin.database == "shardwire");
  CHECK(c.admin.users.empty());
  CHECK(c.metrics.listen.empty());
  CHECK(c.auth.login_timeout == 60s);
  CHECK(c.auth.find("app")->password.empty());
  CHECK(c.pool.mode == PoolMode::Transaction);
  CHECK(c.pool.size == 20);
  CHECK(c.pool.server_lifetime == 3600s);
  CHECK(c.pool.server_reset_query == "DISCARD ALL");
  CHECK(c.catalog.dsn.empty());
  CHECK(c.sharding.buckets == 4096);
  CHECK(c.sharding.default_shard == "a");  // the first shard
  CHECK(c.sharding.directory_lease == 30s);
  CHECK(c.sharding.cross_shard_transactions == CrossShardTransactions::TwoPhase);
  CHECK(c.mover.rollback_window == 24h);
  CHECK(c.mover.max_concurrent == 2);
  CHECK(c.mover.copy_streams == 1);
  CHECK(c.cutover.queue_max == 10000);
  CHECK(c.database == "postgres");  // the first shard's DSN names no dbname
  CHECK(c.shards[0].conn.host == "db1");
  CHECK(c.shards[0].conn.port == 5432);
}

TEST_CASE("values in every accepted spelling") {
  Config c =
      load_string(kHead +
                      "workers: 64\n"
                      "log_level: debug\n"
                      "max_message_size: 1GB\n"
                      "statement_cache: 0\n"
                      "shutdown_timeout: 90s\n"
                      "database: appdb\n"
                      "listen: { host: 0.0.0.0, port: 1 }\n"
                      "metrics: { listen: \"[::1]:9930\" }\n"
                      "pool: { mode: session, size: 1, idle_timeout: 250ms, "
                      "server_lifetime: 10m, server_connect_timeout: 3, server_reset_query: 'RESET ALL' }\n"
                      "sharding:\n"
                      "  buckets: 1048576\n"
                      "  directory_lease: 1h\n"
                      "  cross_shard_transactions: refuse\n"
                      "  tables:\n"
                      "    - { name: a, key: k, type: int }\n"
                      "    - { name: b, key: k, type: int2 }\n"
                      "    - { name: c, key: k, type: int4 }\n"
                      "    - { name: d, key: k, type: int8 }\n"
                      "    - { name: e, key: k, type: varchar }\n"
                      "    - { name: f, key: k, type: uuid }\n"
                      "    - { name: g, key: k }\n"
                      "mover: { rollback_wal_budget: 2GB, user: mover, password: pw }\n"
                      "cutover: { queue_max: 0 }\n",
                  "shardwire.yaml");
  CHECK(c.workers == 64);
  CHECK(c.log_level == "debug");
  CHECK(c.max_message_size == 1ull << 30);
  CHECK(c.statement_cache == 0);
  CHECK(c.shutdown_timeout == 90s);
  CHECK(c.database == "appdb");
  CHECK(c.listen.host == "0.0.0.0");
  CHECK(c.listen.port == 1);
  CHECK(c.metrics.listen == "[::1]:9930");
  CHECK(c.pool.mode == PoolMode::Session);
  CHECK(c.pool.idle_timeout == 250ms);
  CHECK(c.pool.server_lifetime == 10min);
  CHECK(c.pool.server_connect_timeout == 3s);
  CHECK(c.pool.server_reset_query == "RESET ALL");
  CHECK(c.sharding.buckets == 1048576);
  CHECK(c.sharding.directory_lease == 1h);
  CHECK(c.sharding.cross_shard_transactions == CrossShardTransactions::Refuse);
  REQUIRE(c.sharding.tables.size() == 7);
  CHECK(c.sharding.tables[0].type == "integer");
  CHECK(c.sharding.tables[1].type == "smallint");
  CHECK(c.sharding.tables[2].type == "integer");
  CHECK(c.sharding.tables[3].type == "bigint");
  CHECK(c.sharding.tables[4].type == "varchar");
  CHECK(c.sharding.tables[5].type == "uuid");
  CHECK(c.sharding.tables[6].type == "bigint");
  CHECK(c.mover.rollback_wal_budget == 2ll << 30);
  CHECK(c.mover.user == "mover");
  CHECK(c.cutover.queue_max == 0);
}

TEST_CASE("TLS files are resolved against the config file's directory") {
  Config c = load_file(kData + "tls.yaml");
  CHECK(c.listen.tls.enabled());
  CHECK(c.listen.tls.cert_file == kData + "tls/server.crt");
  CHECK(c.listen.tls.key_file == kData + "tls/server.key");
}

TEST_CASE("the documented error format") {
  try {
    load_string(kHead + "pool: { size: abc }\n", "shardwire.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "shardwire.yaml:7: pool.size: must be a positive integer, got \"abc\"");
  }
}

TEST_CASE("bad values name file, line and key") {
  expect_error(kHead + "listen:\n  port: 70000\n", 8, "listen.port",
               "must be an integer between 1 and 65535, got \"70000\"");
  expect_error(kHead + "workers: 0\n", 7, "workers", "between 1 and 64");
  expect_error(kHead + "workers: 65\n", 7, "workers", "between 1 and 64");
  expect_error(kHead + "statement_cache: -1\n", 7, "statement_cache", "between 0 and 1048576");
  expect_error(kHead + "pool: { mode: transaction, size: -1 }\n", 7, "pool.size",
               "must be a positive integer, got \"-1\"");
  expect_error(kHead + "pool:\n  mode: statement\n", 8, "pool.mode",
               "must be one of transaction | session, got \"statement\"");
  expect_error(kHead + "pool:\n  idle_timeout: 5x\n", 8, "pool.idle_timeout", "must be a duration");
  expect_error(kHead + "cutover:\n  drain_timeout: 0s\n", 8, "cutover.drain_timeout",
               "must be greater than zero");
  expect_error(kHead + "fanout:\n  max_groups: 0\n", 8, "fanout.max_groups", "between 1 and");
  expect_error(kHead + "fanout:\n  max_distinct_values: 0\n", 8, "fanout.max_distinct_values",
               "between 1 and");
  expect_error(kHead + "cutover:\n  drain_timeout: 2s\n  drain_action: kill\n", 9, "cutover.drain_action",
               "must be one of abort | terminate, got \"kill\"");
  expect_error(kHead + "sharding:\n  cross_shard_transactions: 2pc\n", 8, "sharding.cross_shard_transactions",
               "must be one of two_phase | refuse, got \"2pc\"");
  expect_error(kHead + "sharding: { buckets: 0 }\n", 7, "sharding.buckets", "between 1 and 1048576");
  expect_error(kHead + "sharding:\n  buckets: 2000000\n", 8, "sharding.buckets", "between 1 and 1048576");
  expect_error(kHead + "max_message_size: 256XB\n", 7, "max_message_size", "must be a size like");
  expect_error(kHead + "max_message_size: 2GB\n", 7, "max_message_size", "between 1 byte");
  expect_error(kHead + "log_level: verbose\n", 7, "log_level", "must be one of debug | info | warn | error");
  expect_error(kHead + "metrics: { listen: \"9930\" }\n", 7, "metrics.listen", "must be \"host:port\"");
  expect_error(kHead + "metrics: { listen: \"localhost:99999\" }\n", 7, "metrics.listen",
               "must be \"host:port\"");
  expect_error(kHead + "listen: { host: \"\" }\n", 7, "listen.host", "must not be empty");
  expect_error(kHead + "listen:\n  reuse_port: yes\n", 8, "listen.reuse_port",
               "must be one of true | false, got \"yes\"");
  expect_error(kHead + "mover: { max_concurrent: many }\n", 7, "mover.max_concurrent", "got \"many\"");
  expect_error(kHead + "mover: { max_concurrent: -1 }\n", 7, "mover.max_concurrent", "between 0");
  expect_error(kHead + "mover: { copy_streams: 0 }\n", 7, "mover.copy_streams", "between 1");
  expect_error(kHead + "pool: { size: [1, 2] }\n", 7, "pool.size", "must be a single value, got a list");
}

TEST_CASE("unknown keys, shapes and YAML syntax") {
  expect_error(kHead + "listn: { port: 1 }\n", 7, "listn", "unknown key (did you mean \"listen\"?)");
  expect_error(kHead + "pool:\n  size: 3\n  sise: 4\n", 9, "pool.sise",
               "unknown key (did you mean \"size\"?)");
  expect_error(kHead + "pool:\n  frobnicate: 1\n", 8, "pool.frobnicate", "unknown key");
  expect_error(kHead + "workers: 2\nworkers: 3\n", 8, "workers", "duplicate key (first at line 7)");
  expect_error(kHead + "pool: 5\n", 7, "pool", "must be a mapping, got a scalar");
  expect_error(kHead + "sharding:\n  tables: { name: t }\n", 8, "sharding.tables",
               "must be a list, got a mapping");
  expect_error(kHead + "pool: { size: 3\n", 8, "", "YAML syntax error");
  expect_error("- just\n- a list\n", 1, "(document)", "must be a mapping, got a list");
}

TEST_CASE("auth errors") {
  expect_error(kHead + "admin: { users: [admin, root] }\n", 7, "admin.users[1]",
               "\"root\" is not one of auth.users");
  expect_error(
      "auth:\n"
      "  method: md6\n",
      2, "auth.method", "(did you mean \"md5\"?)");
  expect_error(
      "auth:\n"
      "  users:\n"
      "    - name: app\n"
      "      password: a\n"
      "    - password: b\n",
      5, "auth.users[1].name", "is required");
  expect_error(
      "auth:\n"
      "  method: md5\n"
      "  users:\n"
      "    - { name: app }\n",
      4, "auth.users[0].password", "is required unless auth.method is trust");
  expect_error(
      "auth:\n"
      "  method: trust\n"
      "  users:\n"
      "    - { name: app }\n"
      "    - { name: bob }\n"
      "    - { name: app }\n",
      6, "auth.users[2].name", "duplicate user \"app\" (first at line 4)");
  expect_error(
      "auth:\n"
      "  method: md5\n"
      "  users:\n"
      "    - name: app\n"
      "      password: \"SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy\"\n",
      5, "auth.users[0].password", "cannot be used with auth.method md5");
  expect_error(
      "auth:\n"
      "  users:\n"
      "    - name: app\n"
      "      password: \"SCRAM-SHA-256$garbage\"\n",
      4, "auth.users[0].password", "malformed SCRAM-SHA-256 verifier");
}

TEST_CASE("shard and sharding errors") {
  const std::string auth = "auth: { method: trust, users: [ { name: app } ] }\n";
  expect_error(auth, 0, "shards", "at least one shard is required");
  expect_error(auth + "shards: []\n", 2, "shards", "at least one shard is required");
  expect_error(auth +
                   "shards:\n"
                   "  - { name: s0, dsn: 'host=a' }\n"
                   "  - { name: s1, dsn: 'host=b' }\n"
                   "  - { name: s0, dsn: 'host=c' }\n",
               5, "shards[2].name", "duplicate shard name \"s0\" (first at line 3)");
  expect_error(auth + "shards:\n  - { name: \"\", dsn: 'host=a' }\n", 3, "shards[0].name",
               "must not be empty");
  expect_error(auth + "shards:\n  - { name: \"s 0\", dsn: 'host=a' }\n", 3, "shards[0].name",
               "may hold only");
  expect_error(auth + "shards:\n  - { name: s0 }\n", 3, "shards[0].dsn", "is required");
  expect_error(auth + "shards:\n  - name: s0\n    dsn: 'host=a'\n    weight: 2\n", 5, "shards[0].weight",
               "unknown key");
  expect_error(kHead + "sharding:\n  default_shard: s9\n", 8, "sharding.default_shard",
               "no shard named \"s9\" (shards: s0, s1)");
  expect_error(kHead +
                   "sharding:\n"
                   "  tables:\n"
                   "    - { name: orders, key: tenant_id }\n"
                   "    - { name: orders, key: id }\n",
               10, "sharding.tables[1].name", "duplicate sharded table \"orders\"");
  expect_error(kHead +
                   "sharding:\n"
                   "  tables:\n"
                   "    - { name: orders, key: tenant_id }\n"
                   "  reference_tables: [plans, app.orders]\n",
               10, "sharding.reference_tables[1]",
               "table \"app.orders\" is both a reference table and sharded (sharding.tables[0] at line 9)");
  expect_error(kHead + "sharding:\n  reference_tables:\n    - plans\n    - public.plans\n", 10,
               "sharding.reference_tables[1]",
               "duplicate reference table \"public.plans\" (first at line 9)");
  expect_error(kHead + "sharding:\n  reference_tables: [{ name: plans }]\n", 8,
               "sharding.reference_tables[0]", "must be a name, got a mapping");
  expect_error(kHead + "sharding:\n  tables:\n    - { name: orders }\n", 9, "sharding.tables[0].key",
               "is required");
  expect_error(kHead + "sharding:\n  tables:\n    - { name: orders, key: k, type: float }\n", 9,
               "sharding.tables[0].type", "must be one of smallint");
  expect_error(kHead + "database: shardwire\n", 7, "database", "the admin console database \"shardwire\"");
}

TEST_CASE("DSN errors name the key and never echo the DSN") {
  const std::string auth = "auth: { method: trust, users: [ { name: app } ] }\n";
  auto check_hidden = [&](const std::string& dsn, const std::string& message) {
    std::string yaml = auth + "shards:\n  - name: s0\n    dsn: \"" + dsn + "\"\n";
    expect_error(yaml, 4, "shards[0].dsn", message);
    try {
      load_string(yaml, "shardwire.yaml");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("hunter2") == std::string::npos);
    }
  };
  check_hidden("host=a port=99999 password=hunter2", "port must be an integer 1..65535");
  check_hidden("host=a password=hunter2 sslmode=sometimes", "sslmode must be one of");
  check_hidden("host=a dbnmae=app password=hunter2", "unknown keyword \"dbnmae\"");
  check_hidden("host=a password='hunter2", "unterminated quoted value");
  check_hidden("host=a password=hun ter2", "missing \"=\" after a keyword");
  expect_error(kHead + "catalog: { dsn: 'port=0' }\n", 7, "catalog.dsn", "port must be");
}

TEST_CASE("TLS errors") {
  const std::string rest =
      "auth: { method: trust, users: [ { name: app } ] }\nshards: [ { name: s0, dsn: 'host=a' } "
      "]\n";
  expect_error("listen:\n  tls:\n    cert_file: server.crt\n" + rest, 3, "listen.tls",
               "needs both cert_file and key_file");
  expect_error("listen:\n  tls: { cert_file: /nonexistent/a.crt, key_file: /nonexistent/a.key }\n" + rest, 2,
               "listen.tls.cert_file", "file not found: \"/nonexistent/a.crt\"");
}

TEST_CASE("load_file reports unreadable files") {
  try {
    load_file(kData + "does-not-exist.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == kData + "does-not-exist.yaml");
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
}
