// settings(): the flat key list behind the reload diff and SHOW CONFIG. Keys in file order, no
// duplicates, secrets only in `value`; diff() names exactly the changed keys.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "config/config.h"

using namespace sw::config;

namespace {

const std::string kBase =
    "listen: { host: 127.0.0.1, port: 6432 }\n"
    "workers: 2\n"
    "admin: { users: [admin] }\n"
    "auth:\n"
    "  method: md5\n"
    "  users: [ { name: app, password: app-pw-1 }, { name: admin, password: admin-pw-1 } ]\n"
    "pool: { size: 10, idle_timeout: 250ms }\n"
    "catalog: { dsn: 'host=cat dbname=shardwire user=postgres password=catalog-pw-1' }\n"
    "shards:\n"
    "  - { name: s0, dsn: 'host=a port=5433 dbname=app user=postgres password=shard-pw-1' }\n"
    "  - { name: s1, dsn: 'host=b dbname=app sslmode=require' }\n"
    "sharding: { tables: [ { name: orders, key: tenant_id, version_column: v } ], reference_tables: [plans, "
    "app.countries] }\n"
    "mover: { user: mover, password: mover-pw-1 }\n";

Config load(const std::string& yaml) { return load_string(yaml, "shardwire.yaml"); }

Config load_with(const std::string& from, const std::string& to) {
  std::string yaml = kBase;
  size_t at = yaml.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return load(yaml.replace(at, from.size(), to));
}

const Setting& get(const std::vector<Setting>& list, const std::string& key) {
  for (const auto& s : list) {
    if (s.key == key) return s;
  }
  FAIL("no setting " << key);
  static const Setting none;
  return none;
}

// The keys, in the order the loader reads them (config_load.cc) and the example configuration writes them.
const std::vector<std::string> kKeys = {"listen.host",
                                        "listen.port",
                                        "listen.max_client_connections",
                                        "listen.reuse_port",
                                        "listen.tls.cert_file",
                                        "listen.tls.key_file",
                                        "workers",
                                        "log_level",
                                        "max_message_size",
                                        "statement_cache",
                                        "shutdown_timeout",
                                        "database",
                                        "admin.database",
                                        "admin.users",
                                        "metrics.listen",
                                        "auth.method",
                                        "auth.users",
                                        "auth.login_timeout",
                                        "pool.mode",
                                        "pool.size",
                                        "pool.idle_timeout",
                                        "pool.query_wait_timeout",
                                        "pool.server_lifetime",
                                        "pool.server_connect_timeout",
                                        "pool.server_reset_query",
                                        "pool.max_pinned_clients",
                                        "catalog.dsn",
                                        "shards",
                                        "sharding.buckets",
                                        "sharding.default_shard",
                                        "sharding.tables",
                                        "sharding.reference_tables",
                                        "sharding.directory_lease",
                                        "sharding.cross_shard_transactions",
                                        "mover.copy_rows_per_sec",
                                        "mover.copy_streams",
                                        "mover.rollback_window",
                                        "mover.rollback_wal_budget",
                                        "mover.max_concurrent",
                                        "mover.user",
                                        "mover.password",
                                        "cutover.queue_timeout",
                                        "cutover.queue_max",
                                        "cutover.drain_timeout",
                                        "cutover.drain_action",
                                        "fanout.max_rows_buffered",
                                        "fanout.max_groups",
                                        "fanout.max_distinct_values",
                                        "fanout.max_scroll_bytes"};

}  // namespace

TEST_CASE("settings lists every key once, in file order") {
  for (const Config& config : {load(kBase), Config{}}) {
    std::vector<Setting> list = settings(config);
    std::vector<std::string> keys;
    std::set<std::string> unique;
    for (const auto& s : list) {
      keys.push_back(s.key);
      CHECK_MESSAGE(unique.insert(s.key).second, "duplicate " << s.key);
    }
    CHECK(keys == kKeys);
  }
}

TEST_CASE("values and what SHOW CONFIG shows") {
  std::vector<Setting> list = settings(load(kBase));
  CHECK(get(list, "listen.port").shown == "6432");
  CHECK(get(list, "workers").value == "2");
  CHECK(get(list, "auth.method").shown == "md5");
  CHECK(get(list, "auth.users").shown == "app,admin");
  CHECK(get(list, "admin.users").shown == "admin");
  CHECK(get(list, "pool.mode").shown == "transaction");
  CHECK(get(list, "shards").shown ==
        "s0: host=a port=5433 dbname=app user=postgres; s1: host=b port=5432 dbname=app sslmode=require");
  CHECK(get(list, "sharding.default_shard").shown == "s0");
  CHECK(get(list, "sharding.tables").shown == "orders(tenant_id bigint, version v)");
  CHECK(get(list, "sharding.reference_tables").shown == "plans,app.countries");
  CHECK(get(list, "mover.user").shown == "mover");
  CHECK(get(list, "mover.password").shown == "********");
  CHECK(get(list, "catalog.dsn").shown.find("not shown") != std::string::npos);
  // No secret anywhere: mover.password and catalog.dsn show nothing when unset.
  std::vector<Setting> defaults = settings(Config{});
  CHECK(get(defaults, "mover.password").shown.empty());
  CHECK(get(defaults, "catalog.dsn").shown.empty());
  CHECK(get(defaults, "shards").shown.empty());
}

TEST_CASE("shown never holds a password; value changes when one does") {
  const char* const secrets[] = {"app-pw-1", "admin-pw-1", "catalog-pw-1", "shard-pw-1", "mover-pw-1"};
  std::vector<Setting> base = settings(load(kBase));
  for (const auto& s : base) {
    for (const char* secret : secrets) {
      CAPTURE(s.key);
      CHECK(s.shown.find(secret) == std::string::npos);
    }
  }
  struct Change {
    const char* from;
    const char* to;
    const char* key;
  };
  for (const Change& change :
       {Change{"app-pw-1", "app-pw-2", "auth.users"}, Change{"admin-pw-1", "admin-pw-2", "auth.users"},
        Change{"catalog-pw-1", "catalog-pw-2", "catalog.dsn"}, Change{"shard-pw-1", "shard-pw-2", "shards"},
        Change{"mover-pw-1", "mover-pw-2", "mover.password"}}) {
    CAPTURE(change.from);
    std::vector<Setting> after = settings(load_with(change.from, change.to));
    REQUIRE(after.size() == base.size());
    for (size_t i = 0; i < base.size(); ++i) {
      CAPTURE(base[i].key);
      CHECK(after[i].shown == base[i].shown);  // nothing visible changes
      CHECK((after[i].value != base[i].value) == (base[i].key == change.key));
      CHECK(after[i].shown.find(change.to) == std::string::npos);
    }
    ConfigDiff d = diff(load(kBase), load_with(change.from, change.to));
    CHECK(d.changed == std::vector<std::string>{change.key});
    // The catalog DSN is the directory watcher's, read once at start.
    CHECK(d.need_restart == (std::string(change.key) == "catalog.dsn"
                                 ? std::vector<std::string>{"catalog.dsn"}
                                 : std::vector<std::string>{}));
  }
}

TEST_CASE(
    "diff reports exactly the changed keys; listen.*, workers, statement_cache, catalog.dsn and the lease "
    "need a restart") {
  struct Case {
    const char* from;
    const char* to;
    std::vector<std::string> changed;
    std::vector<std::string> restart;
  };
  const Case cases[] = {
      {"host: 127.0.0.1", "host: 0.0.0.0", {"listen.host"}, {"listen.host"}},
      {"port: 6432", "port: 6433", {"listen.port"}, {"listen.port"}},
      {"port: 6432",
       "port: 6432, max_client_connections: 5",
       {"listen.max_client_connections"},
       {"listen.max_client_connections"}},
      {"port: 6432", "port: 6432, reuse_port: true", {"listen.reuse_port"}, {"listen.reuse_port"}},
      {"workers: 2", "workers: 3", {"workers"}, {"workers"}},
      {"workers: 2\n",
       "workers: 2\nlog_level: debug\nmax_message_size: 1MB\n",
       {"log_level", "max_message_size"},
       {}},
      {"admin: { users: [admin] }", "admin: { users: [admin, app] }", {"admin.users"}, {}},
      {"method: md5", "method: scram-sha-256", {"auth.method"}, {}},
      {"size: 10, idle_timeout: 250ms",
       "size: 11, idle_timeout: 250ms, mode: session",
       {"pool.mode", "pool.size"},
       {}},
      {"sslmode=require", "sslmode=disable", {"shards"}, {}},
      {"version_column: v", "version_column: w", {"sharding.tables"}, {}},
      {"reference_tables: [plans,", "reference_tables: [plans, rates,", {"sharding.reference_tables"}, {}},
      {"mover: { user: mover,",
       "mover: { max_concurrent: 3, user: mover2,",
       {"mover.max_concurrent", "mover.user"},
       {}},
      {"workers: 2\n",
       "workers: 4\nmetrics: { listen: '127.0.0.1:9930' }\n",
       {"workers", "metrics.listen"},
       {"workers"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.to);
    ConfigDiff d = diff(load(kBase), load_with(c.from, c.to));
    CHECK(d.changed == c.changed);
    CHECK(d.need_restart == c.restart);
    // and back again
    ConfigDiff back = diff(load_with(c.from, c.to), load(kBase));
    CHECK(back.changed == c.changed);
  }
  // the restart flags themselves
  for (const Setting& s : settings(load(kBase))) {
    CAPTURE(s.key);
    CHECK(s.restart == (s.key.rfind("listen.", 0) == 0 || s.key == "workers" || s.key == "statement_cache" ||
                        s.key == "catalog.dsn" || s.key == "sharding.directory_lease"));
  }
}

TEST_CASE("durations are shown in the largest whole unit") {
  std::vector<Setting> list = settings(load(kBase));
  CHECK(get(list, "pool.query_wait_timeout").shown == "5s");
  CHECK(get(list, "pool.idle_timeout").shown == "250ms");
  CHECK(get(list, "mover.rollback_window").shown == "24h");
  CHECK(get(list, "pool.server_lifetime").shown == "1h");
  CHECK(get(list, "auth.login_timeout").shown == "1m");
  CHECK(get(list, "cutover.queue_timeout").shown == "2s");

  Config c;
  c.pool.idle_timeout = std::chrono::milliseconds(1500);
  c.pool.query_wait_timeout = std::chrono::milliseconds(0);
  c.pool.server_lifetime = std::chrono::minutes(90);
  c.cutover.drain_timeout = std::chrono::seconds(90);
  std::vector<Setting> odd = settings(c);
  CHECK(get(odd, "pool.idle_timeout").shown == "1500ms");
  CHECK(get(odd, "pool.query_wait_timeout").shown == "0s");
  CHECK(get(odd, "pool.server_lifetime").shown == "90m");
  CHECK(get(odd, "cutover.drain_timeout").shown == "90s");
  // Every shown duration reads back as the same duration.
  using namespace std::chrono_literals;
  const std::pair<const char*, Duration> durations[] = {
      {"pool.idle_timeout", 1500ms},  {"pool.query_wait_timeout", 0ms}, {"pool.server_lifetime", 90min},
      {"cutover.drain_timeout", 90s}, {"mover.rollback_window", 24h},   {"sharding.directory_lease", 30s}};
  for (const auto& entry : durations) {
    const std::string key = entry.first;
    CAPTURE(key);
    CHECK(get(odd, key).value == get(odd, key).shown);
    CHECK(parse_duration(get(odd, key).shown) == entry.second);
  }
}
