// The console's tables, built from a hand-made snapshot, config and directory: pgbouncer 1.18's
// column names and order, the values in each row, secrets kept out of SHOW CONFIG.
#include "admin/tables.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser/analyze.h"
#include "router/bucket_hash.h"

using namespace sw;
using namespace sw::admin;

namespace {

const char* const kSecrets[] = {"app-secret-pw", "admin-secret-pw", "catalog-secret-pw", "shard-secret-pw",
                                "mover-secret-pw"};

const std::string kYaml =
    "listen: { port: 6543 }\n"
    "admin: { users: [admin] }\n"
    "auth:\n"
    "  method: md5\n"
    "  users: [ { name: app, password: app-secret-pw }, { name: admin, password: admin-secret-pw } ]\n"
    "pool: { size: 7, idle_timeout: 250ms }\n"
    "catalog: { dsn: \"host=cat dbname=shardwire user=postgres password=catalog-secret-pw\" }\n"
    "shards:\n"
    "  - { name: s0, dsn: \"host=db0 port=5433 dbname=app user=postgres password=shard-secret-pw\" }\n"
    "  - { name: s1, dsn: \"host=db1 port=5434 dbname=app\" }\n"
    "  - { name: s2, dsn: \"host=db2 port=5435 dbname=app\" }\n"
    "  - { name: s3, dsn: \"host=db3 port=5436 dbname=app\" }\n"
    "sharding: { buckets: 8, tables: [ { name: orders, key: tenant_id } ], reference_tables: [plans] }\n"
    "mover: { user: mover, password: mover-secret-pw }\n";

const config::Config& test_config() {
  static const config::Config config = config::load_string(kYaml, "shardwire.yaml");
  return config;
}

// 8 buckets on s0, s1 and s3 (s2 is configured but not in the directory yet); s3 owns none;
// bucket 4 (on s0) is MIGRATING since version 9.
router::Directory test_directory() {
  std::vector<router::BucketEntry> buckets(8);
  for (uint32_t b = 0; b < 8; ++b)
    buckets[b] = {static_cast<uint16_t>(b % 2), router::BucketState::Active, 1};
  buckets[4] = {0, router::BucketState::Migrating, 9};
  return router::Directory(9, {"s0", "s1", "s3"}, buckets);
}

stats::PoolInfo pool(std::string shard, std::string user, int base) {
  stats::PoolInfo p;
  p.shard = std::move(shard);
  p.user = std::move(user);
  p.cl_active = base;
  p.cl_waiting = base + 1;
  p.sv_active = base + 2;
  p.sv_idle = base + 3;
  p.sv_login = base + 4;
  return p;
}

stats::Snapshot test_snapshot() {
  stats::Snapshot s;
  s.workers = 2;
  s.pools = {pool("s1", "app", 100), pool("s0", "report", 10), pool("s0", "app", 1)};
  s.pools[2].maxwait_us = 2500123;
  // traffic: s0 = app + report, s1 = app. {queries, transactions, query_time_us, xact_time_us,
  // wait_time_us, bytes_received, bytes_sent}
  using traffic = stats::PoolTraffic;
  s.pools[2].traffic = traffic{{10, 5, 0, 0}, {4, 0, 0, 0}, 3000, 8000, 400, 1000, 20000};
  s.pools[1].traffic = traffic{{0, 0, 5, 0}, {0, 0, 0, 6}, 2000, 2000, 600, 500, 10000};
  s.pools[0].traffic = traffic{{1, 0, 0, 0}, {1, 0, 0, 0}, 77, 77, 0, 0, 0};
  s.client_states = {1, 1, 1, 1};
  const stats::ClientState states[] = {stats::ClientState::Login, stats::ClientState::Idle,
                                       stats::ClientState::Active, stats::ClientState::Waiting};
  for (int i = 0; i < 4; ++i) {
    stats::ClientInfo c;
    c.id = 40 + static_cast<uint64_t>(i);
    c.worker = i % 2;
    c.user = "app";
    c.database = "app";
    c.state = states[i];
    c.addr = {"10.0.0.9", 50000 + i};
    c.local = {"127.0.0.1", 6543};
    c.shard = "s0";
    s.clients.push_back(c);
  }
  s.clients[2].server = 7;
  s.clients[2].connect_time_us = 1700000000ll * 1000000;
  s.clients[2].request_time_us = 1700000060ll * 1000000 + 5;
  s.clients[2].tls = true;
  s.clients[2].application_name = "psql";
  s.clients[3].wait_us = 3000042;
  const stats::ServerState server_states[] = {stats::ServerState::Login, stats::ServerState::Idle,
                                              stats::ServerState::Active};
  for (int i = 0; i < 3; ++i) {
    stats::ServerInfo sv;
    sv.id = 5 + static_cast<uint64_t>(i);
    sv.worker = 1;
    sv.user = "app";
    sv.shard = "s0";
    sv.state = server_states[i];
    sv.addr = {"db0", 5433};
    sv.local = {"10.0.0.1", 40000 + i};
    sv.remote_pid = 1000 + i;
    s.servers.push_back(sv);
  }
  s.servers[2].client = 42;
  s.servers[2].connect_time_us = 1700000000ll * 1000000;
  return s;
}

std::string names(const ResultTable& table) {
  std::string out;
  for (const auto& column : table.columns()) {
    if (!out.empty()) out += ',';
    out += column.name;
  }
  return out;
}

// Row `i` as text, NULL as "<null>".
std::vector<std::string> row(const ResultTable& table, size_t i) {
  REQUIRE(i < table.size());
  std::vector<std::string> out;
  for (const auto& v : table.row(i)) out.push_back(v ? *v : "<null>");
  return out;
}

using Row = std::vector<std::string>;

// The table encodes (each row has one value per column) and has `rows` rows.
void check_shape(const ResultTable& table, size_t rows) {
  CHECK(table.size() == rows);
  for (size_t i = 0; i < table.size(); ++i) CHECK(table.row(i).size() == table.columns().size());
  CHECK(table.encode()[0] == 'T');
}

const std::string kSocketColumns =
    "type,user,database,state,addr,port,local_addr,local_port,connect_time,request_time,wait,wait_us,"
    "close_needed,ptr,link,remote_pid,tls,application_name,id,shard,worker,pinned";

}  // namespace

TEST_CASE("SHOW DATABASES: one row per shard and one for the console") {
  ResultTable t = databases_table(test_config(), test_snapshot(), true);
  CHECK(names(t) ==
        "name,host,port,database,force_user,pool_size,min_pool_size,reserve_pool,pool_mode,"
        "max_connections,current_connections,paused,disabled");
  check_shape(t, 5);
  // s0: 3+4+5 (app) + 12+13+14 (report) server connections
  CHECK(row(t, 0) ==
        Row{"s0", "db0", "5433", "app", "postgres", "7", "0", "0", "transaction", "0", "51", "1", "0"});
  CHECK(row(t, 1) ==
        Row{"s1", "db1", "5434", "app", "<null>", "7", "0", "0", "transaction", "0", "309", "1", "0"});
  CHECK(row(t, 2)[10] == "0");
  CHECK(row(t, 4) == Row{"shardwire", "<null>", "6543", "shardwire", "shardwire", "0", "0", "0", "statement",
                         "0", "0", "0", "0"});
  CHECK(row(databases_table(test_config(), test_snapshot(), false), 0)[11] == "0");
}

TEST_CASE("SHOW POOLS: sorted by shard and user, maxwait in seconds and microseconds") {
  ResultTable t = pools_table(test_config(), test_snapshot());
  CHECK(names(t) ==
        "database,user,cl_active,cl_waiting,cl_active_cancel_req,cl_waiting_cancel_req,sv_active,"
        "sv_active_cancel,sv_being_canceled,sv_idle,sv_used,sv_tested,sv_login,maxwait,maxwait_us,"
        "pool_mode,cl_pinned");
  check_shape(t, 3);
  CHECK(row(t, 0) == Row{"s0", "app", "1", "2", "0", "0", "3", "0", "0", "4", "0", "0", "5", "2", "500123",
                         "transaction", "0"});
  CHECK(row(t, 1) == Row{"s0", "report", "10", "11", "0", "0", "12", "0", "0", "13", "0", "0", "14", "0", "0",
                         "transaction", "0"});
  CHECK(row(t, 2)[0] == "s1");
  CHECK(row(t, 2)[2] == "100");
}

TEST_CASE("SHOW CLIENTS: every state, links and times") {
  ResultTable t = clients_table(test_snapshot());
  CHECK(names(t) == kSocketColumns);
  check_shape(t, 4);
  CHECK(row(t, 0)[3] == "login");
  CHECK(row(t, 1)[3] == "idle");
  CHECK(row(t, 3)[3] == "waiting");
  CHECK(row(t, 2) == Row{"C",
                         "app",
                         "app",
                         "active",
                         "10.0.0.9",
                         "50002",
                         "127.0.0.1",
                         "6543",
                         "2023-11-14 22:13:20 UTC",
                         "2023-11-14 22:14:20 UTC",
                         "0",
                         "0",
                         "0",
                         "c42",
                         "s7",
                         "0",
                         "TLS",
                         "psql",
                         "42",
                         "s0",
                         "0",
                         ""});
  Row waiting = row(t, 3);
  CHECK(waiting[8] == "<null>");  // never connected: no time
  CHECK(waiting[10] == "3");
  CHECK(waiting[11] == "42");
  CHECK(waiting[13] == "c43");
  CHECK(waiting[14] == "");  // no server
  CHECK(waiting[16] == "");  // no TLS
  CHECK(waiting[20] == "1");
}

TEST_CASE("SHOW SERVERS") {
  ResultTable t = servers_table(test_snapshot());
  CHECK(names(t) == kSocketColumns);
  check_shape(t, 3);
  CHECK(row(t, 0)[3] == "login");
  CHECK(row(t, 1)[3] == "idle");
  // database: the shard (the pool target, as in SHOW POOLS)
  CHECK(row(t, 2) ==
        Row{"S",      "app", "s0", "active", "db0", "5433", "10.0.0.1", "40002", "2023-11-14 22:13:20 UTC",
            "<null>", "0",   "0",  "0",      "s7",  "c42",  "1002",     "",      "",
            "7",      "s0",  "1",  ""});
  CHECK(row(t, 0)[14] == "");
}

TEST_CASE("SHOW STATS: per shard, summed over users, averaged over uptime") {
  ResultTable t = stats_table(test_snapshot(), 10.0);
  CHECK(names(t) ==
        "database,total_xact_count,total_query_count,total_received,total_sent,total_xact_time,"
        "total_query_time,total_wait_time,avg_xact_count,avg_query_count,avg_recv,avg_sent,"
        "avg_xact_time,avg_query_time,avg_wait_time");
  check_shape(t, 2);
  // s0: xacts 4+6, queries 15+5, received 1500, sent 30000, xact time 10000, query time 5000, wait 1000
  CHECK(row(t, 0) == Row{"s0", "10", "20", "1500", "30000", "10000", "5000", "1000", "1", "2", "150", "3000",
                         "1000", "250", "100"});
  CHECK(row(t, 1) == Row{"s1", "1", "1", "0", "0", "77", "77", "0", "0", "0", "0", "0", "77", "77", "0"});
  // No uptime yet: no rates, and no division by zero.
  ResultTable fresh = stats_table(test_snapshot(), 0);
  CHECK(row(fresh, 0)[8] == "0");
  CHECK(row(fresh, 0)[11] == "0");
  stats::Snapshot idle;
  idle.pools = {pool("s0", "app", 0)};
  CHECK(row(stats_table(idle, 5), 0) ==
        Row{"s0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0", "0"});
}

TEST_CASE("SHOW STATS_TOTALS") {
  ResultTable t = stats_totals_table(test_snapshot());
  CHECK(names(t) ==
        "database,xact_count,query_count,bytes_received,bytes_sent,xact_time,query_time,wait_time");
  check_shape(t, 2);
  CHECK(row(t, 0) == Row{"s0", "10", "20", "1500", "30000", "10000", "5000", "1000"});
  CHECK(row(t, 1) == Row{"s1", "1", "1", "0", "0", "77", "77", "0"});
}

TEST_CASE("SHOW LISTS and SHOW USERS") {
  ResultTable lists = lists_table(test_config(), test_snapshot());
  CHECK(names(lists) == "list,items");
  check_shape(lists, 12);
  std::vector<Row> expected = {{"databases", "5"},    {"users", "2"},          {"pools", "3"},
                               {"free_clients", "0"}, {"used_clients", "3"},   {"login_clients", "1"},
                               {"free_servers", "0"}, {"used_servers", "360"}, {"dns_names", "0"},
                               {"dns_zones", "0"},    {"dns_queries", "0"},    {"dns_pending", "0"}};
  for (size_t i = 0; i < expected.size(); ++i) CHECK(row(lists, i) == expected[i]);

  ResultTable users = users_table(test_config());
  CHECK(names(users) == "name,pool_mode");
  check_shape(users, 2);
  CHECK(row(users, 0) == Row{"app", "transaction"});
  CHECK(row(users, 1) == Row{"admin", "transaction"});
}

TEST_CASE("SHOW CONFIG hides every password") {
  ResultTable t = config_table(test_config());
  CHECK(names(t) == "key,value,default,changeable");
  REQUIRE(t.size() > 10);
  for (size_t i = 0; i < t.size(); ++i) {
    for (const std::string& cell : row(t, i)) {
      for (const char* secret : kSecrets) {
        CAPTURE(cell);
        CHECK(cell.find(secret) == std::string::npos);
      }
    }
  }
  auto find = [&](const std::string& key) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (*t.row(i)[0] == key) return row(t, i);
    }
    FAIL("no key " << key);
    return Row{};
  };
  CHECK(find("pool.size") == Row{"pool.size", "7", "20", "yes"});
  CHECK(find("pool.idle_timeout") == Row{"pool.idle_timeout", "250ms", "1m", "yes"});
  CHECK(find("listen.port") == Row{"listen.port", "6543", "6432", "no"});
  CHECK(find("workers")[3] == "no");
  CHECK(find("mover.password") == Row{"mover.password", "********", "", "yes"});
  CHECK(find("auth.users")[1] == "app,admin");
  CHECK(find("shards")[1].find("s0: host=db0 port=5433 dbname=app user=postgres") != std::string::npos);
}

TEST_CASE("SHOW SHARDS: buckets, migrating and state") {
  router::Directory directory = test_directory();
  ResultTable t = shards_table(test_config(), &directory);
  CHECK(names(t) == "name,host,port,database,buckets,migrating,state,superuser");
  check_shape(t, 4);
  CHECK(row(t, 0) == Row{"s0", "db0", "5433", "app", "4", "1", "migrating", "<null>"});
  CHECK(row(t, 1) == Row{"s1", "db1", "5434", "app", "4", "0", "serving", "<null>"});
  CHECK(row(t, 2) == Row{"s2", "db2", "5435", "app", "0", "0", "new", "<null>"});
  CHECK(row(t, 3) == Row{"s3", "db3", "5436", "app", "0", "0", "empty", "<null>"});
  ResultTable checked = shards_table(test_config(), &directory, {{"s0", "yes"}, {"s1", "no"}});
  CHECK(row(checked, 0)[7] == "yes");
  CHECK(row(checked, 1)[7] == "no");
  CHECK(row(checked, 2)[7] == "<null>");

  ResultTable none = shards_table(test_config(), nullptr);
  for (size_t i = 0; i < none.size(); ++i) CHECK(row(none, i)[6] == "new");
}

TEST_CASE("SHOW SHARDS lists a shard only the catalog names as not configured") {
  std::vector<router::BucketEntry> entries(8);
  for (uint32_t b = 0; b < 8; ++b) entries[b].shard = static_cast<uint16_t>(b % 3);
  entries[5].state = router::BucketState::Migrating;  // buckets 2 and 5 are on s9
  router::Directory directory(4, {"s0", "s1", "s9"}, entries, 2);
  ResultTable t = shards_table(test_config(), &directory);
  check_shape(t, 5);
  CHECK(row(t, 4) == Row{"s9", "<null>", "<null>", "<null>", "2", "1", "not configured", "<null>"});
}

TEST_CASE("SHOW BUCKETS: all, one shard, unknown shard") {
  router::Directory directory = test_directory();
  auto all = buckets_table(directory, "");
  REQUIRE(all.is_ok());
  CHECK(names(*all) == "bucket,shard,state,version");
  check_shape(*all, 8);
  CHECK(row(*all, 1) == Row{"1", "s1", "ACTIVE", "1"});

  auto s0 = buckets_table(directory, "s0");
  REQUIRE(s0.is_ok());
  check_shape(*s0, 4);
  CHECK(row(*s0, 0) == Row{"0", "s0", "ACTIVE", "1"});
  CHECK(row(*s0, 2) == Row{"4", "s0", "MIGRATING", "9"});
  CHECK(row(*s0, 3) == Row{"6", "s0", "ACTIVE", "1"});

  auto s3 = buckets_table(directory, "s3");
  REQUIRE(s3.is_ok());
  CHECK(s3->size() == 0);

  for (const char* unknown : {"s2", "S0", "nope"}) {
    auto missing = buckets_table(directory, unknown);
    REQUIRE_FALSE(missing.is_ok());
    CHECK(missing.status().sqlstate == "42704");
    CHECK(missing.status().fault == Fault::Client);
    CHECK(missing.status().message.find(unknown) != std::string::npos);
  }
}

TEST_CASE("SHOW ROUTE for a keyed statement, a default one and a refused one") {
  router::Directory directory = test_directory();
  auto rules = router::RoutingRules::from_config(test_config().sharding);
  REQUIRE(rules.is_ok());
  auto route_of = [&](const std::string& sql) {
    auto facts = parser::analyze(sql);
    REQUIRE_MESSAGE(facts.is_ok(), sql);
    return router::route_query(**facts, nullptr, directory, *rules, router::Explain::Yes);
  };

  auto bucket = router::bucket_of_text_value(router::KeyType::Int8, "7", 8);
  REQUIRE(bucket.is_ok());
  const std::string shard = directory.shard_name(directory.bucket(*bucket).shard);

  router::Route read = route_of("SELECT * FROM orders WHERE tenant_id = 7");
  ResultTable t = route_table(read, directory);
  CHECK(names(t) == "kind,shard,buckets,table,writes,reason,directory_version,summary");
  check_shape(t, 1);
  Row r = row(t, 0);
  CHECK(r[0] == "shard");
  CHECK(r[1] == shard);
  CHECK(r[2] == std::to_string(*bucket));
  CHECK(r[3] == "orders");
  CHECK(r[4] == "f");
  CHECK(r[5] == read.reason);
  CHECK(r[5] == "by the key tenant_id of orders");
  CHECK(r[6] == "9");
  CHECK(r[7] == router::route_summary(read, directory));
  CHECK(r[7].rfind("shard " + shard + " buckets " + std::to_string(*bucket), 0) == 0);

  Row write = row(route_table(route_of("INSERT INTO orders (tenant_id) VALUES (7)"), directory), 0);
  CHECK(write[0] == "shard");
  CHECK(write[4] == "t");

  Row plain = row(route_table(route_of("SELECT 1"), directory), 0);
  CHECK(plain[0] == "default");
  CHECK(plain[1] == "s0");
  CHECK(plain[2] == "");

  Row scatter = row(route_table(route_of("SELECT * FROM orders"), directory), 0);
  CHECK(scatter[0] == "scatter");
  CHECK(scatter[1] == "<null>");

  // INSERT ... SELECT of a table into itself on every shard: the reason names what each runs.
  router::Route copied = route_of("INSERT INTO orders (tenant_id, id) SELECT tenant_id, id + 1 FROM orders");
  REQUIRE(copied.insert_select);
  Row insert_select = row(route_table(copied, directory), 0);
  CHECK(insert_select[0] == "scatter");
  CHECK(insert_select[4] == "t");
  CHECK(insert_select[5] == copied.reason + "; each shard runs: " + copied.shard_sql);
  CHECK(insert_select[7].find(" insert-select") != std::string::npos);

  router::Route refused =
      route_of("SELECT * FROM orders o JOIN orders p ON o.parent_id = p.id WHERE o.tenant_id = 2");
  REQUIRE(refused.kind == router::RouteKind::Error);
  Row error = row(route_table(refused, directory), 0);
  CHECK(error[0] == "error");
  CHECK(error[1] == "<null>");
  CHECK(error[5] == "0A000 " + refused.error.message);
}

TEST_CASE("SHOW ROUTE of reference tables: any shard for reads, every shard for writes") {
  router::Directory directory = test_directory();
  auto rules = router::RoutingRules::from_config(test_config().sharding);
  REQUIRE(rules.is_ok());
  auto route_of = [&](const std::string& sql) {
    auto facts = parser::analyze(sql);
    REQUIRE_MESSAGE(facts.is_ok(), sql);
    return router::route_query(**facts, nullptr, directory, *rules);
  };
  Row read = row(route_table(route_of("SELECT * FROM plans"), directory), 0);
  CHECK(read[0] == "default");
  CHECK(read[1] == "s0");
  CHECK(read[7] == "default s0 any-shard");
  Row write = row(route_table(route_of("UPDATE plans SET price = 2 WHERE id = 1"), directory), 0);
  CHECK(write[0] == "all-shards");
  CHECK(write[3] == "plans");
  CHECK(write[4] == "t");
  CHECK(write[7] == "all-shards s0,s1,s3 reference-write plans");
}

TEST_CASE("VERIFY REFERENCE: rows and checksum per shard, NULL where missing") {
  ResultTable t = verify_reference_table(
      {{"s0", true, 3, "77", true}, {"s1", true, 2, "70", false}, {"s2", false, 0, "", false}});
  CHECK(names(t) == "shard,rows,checksum,matches");
  check_shape(t, 3);
  CHECK(row(t, 0) == Row{"s0", "3", "77", "t"});
  CHECK(row(t, 1) == Row{"s1", "2", "70", "f"});
  CHECK(row(t, 2) == Row{"s2", "<null>", "<null>", "f"});
}

TEST_CASE("SHOW HELP, VERSION, STATE, DIRECTORY, ROUTERS") {
  ResultTable help = help_table();
  CHECK(names(help) == "command,description");
  check_shape(help, kHelpCount);
  CHECK(row(help, 0) == Row{"SHOW HELP", "this list"});

  ResultTable version = version_table();
  check_shape(version, 1);
  CHECK(row(version, 0)[0].rfind("shardwire ", 0) == 0);

  ProxyState state;
  state.paused = true;
  state.started_at_us = 1700000000ll * 1000000;
  ResultTable st = state_table(state);
  CHECK(names(st) == "key,value");
  check_shape(st, 5);
  CHECK(row(st, 0) == Row{"active", "no"});
  CHECK(row(st, 1) == Row{"paused", "yes"});
  CHECK(row(st, 3) == Row{"shutting_down", "no"});
  CHECK(row(st, 4) == Row{"started_at", "2023-11-14 22:13:20 UTC"});
  CHECK(row(state_table(ProxyState{}), 0) == Row{"active", "yes"});

  DirectoryStatus status;
  status.directory = std::make_shared<const router::Directory>(test_directory());
  status.source = "catalog";
  status.loaded_at_us = stats::wall_clock_us() - 2000000;
  status.lease_valid = false;
  ResultTable dir = directory_table(status);
  CHECK(names(dir) == "version,source,loaded_at,age_seconds,lease,buckets,shards");
  check_shape(dir, 1);
  Row d = row(dir, 0);
  CHECK(d[0] == "9");
  CHECK(d[1] == "catalog");
  CHECK(std::stod(d[3]) == doctest::Approx(2.0).epsilon(0.05));
  CHECK(d[4] == "expired");
  CHECK(d[5] == "8");
  CHECK(d[6] == "3");
  CHECK(row(directory_table(DirectoryStatus{}), 0) ==
        Row{"<null>", "", "<null>", "0.000", "valid", "<null>", "<null>"});

  std::vector<catalog::RegisteredRouter> routers(1);
  routers[0] = {"r1", "10.0.0.5", 6432, 321, 9, "2023-11-14 22:13:20+00", "2023-11-14 22:14:20+00", 1.25};
  ResultTable rt = routers_table(routers);
  CHECK(names(rt) == "id,host,port,pid,directory_version,started_at,heartbeat_at,heartbeat_age_seconds");
  check_shape(rt, 1);
  CHECK(row(rt, 0) == Row{"r1", "10.0.0.5", "6432", "321", "9", "2023-11-14 22:13:20+00",
                          "2023-11-14 22:14:20+00", "1.250"});
}

TEST_CASE("SHOW TRANSACTIONS: one row per (gid, shard), owner NULL for a gid of another form") {
  std::vector<twopc::InDoubtTransaction> rows = {
      {"shardwire_00000000000000aa_0_1", "s0", "2026-12-02 13:00:00+00", 7.5, "commit", "00000000000000aa"},
      {"shardwire_00000000000000aa_0_1", "s1", "2026-12-02 13:00:01+00", 6.25, "commit", "00000000000000aa"},
      {"shardwire_odd", "s1", "2026-12-02 13:00:02+00", 0.5, "none", ""}};
  ResultTable t = transactions_table(rows);
  CHECK(names(t) == "gid,shard,prepared,age_s,decision,owner");
  check_shape(t, 3);
  CHECK(row(t, 0) == Row{"shardwire_00000000000000aa_0_1", "s0", "2026-12-02 13:00:00+00", "7.500", "commit",
                         "00000000000000aa"});
  CHECK(row(t, 1)[1] == "s1");
  CHECK(row(t, 2) == Row{"shardwire_odd", "s1", "2026-12-02 13:00:02+00", "0.500", "none", "<null>"});
  check_shape(transactions_table({}), 0);
}

TEST_CASE("SHOW MIGRATIONS: why a planned migration waits; rollback windows hold no mover slot") {
  using catalog::MigrationState;
  auto migration = [](int64_t id, MigrationState state) {
    catalog::Migration m;
    m.id = id;
    m.state = state;
    m.source = "s0";
    m.target = "s1";
    m.buckets = {static_cast<uint32_t>(id)};
    return m;
  };
  std::vector<catalog::Migration> all = {
      migration(1, MigrationState::RollbackWindow), migration(2, MigrationState::RollbackWindow),
      migration(3, MigrationState::Cleaning), migration(4, MigrationState::Planned)};
  // Two windows and a cleanup: every slot is free.
  CHECK(waiting_reason(all[3], all, 2) == "for the mover to start it (it looks every second)");
  all[0].state = MigrationState::Copying;
  all[1].state = MigrationState::CuttingOver;
  CHECK(waiting_reason(all[3], all, 2) ==
        "for a mover slot: migration(s) 1, 2 copy, catch up or cut over (mover.max_concurrent = 2; rollback "
        "windows hold none)");
  CHECK(waiting_reason(all[3], all, 3) == "for the mover to start it (it looks every second)");
  all.push_back(migration(5, MigrationState::Planned));
  CHECK(waiting_reason(all[4], all, 3) ==
        "for a mover slot: 1 planned migration(s) before it (mover.max_concurrent = 3)");
  CHECK(waiting_reason(all[4], all, 0) ==
        "mover.max_concurrent is 0 on this instance: an instance with a mover must run it");
  all[4].paused = true;
  CHECK(waiting_reason(all[4], all, 3) == "paused: RESUME MIGRATION 5");
  CHECK(waiting_reason(all[0], all, 2).empty());  // not planned

  ResultTable table = migrations_table(all, 2);
  const std::string encoded = table.encode();
  CHECK(encoded.find("waiting") != std::string::npos);
  CHECK(encoded.find("for a mover slot: migration(s) 1, 2") != std::string::npos);
}

TEST_CASE("SHOW MIGRATIONS has each move's bytes, rate and eta; SHOW REBALANCE one row for all of them") {
  catalog::Migration copying;
  copying.id = 7;
  copying.state = catalog::MigrationState::Copying;
  copying.buckets = {1, 2};
  copying.rows_copied = 500;
  copying.rows_total = 2000;
  copying.bytes_copied = 50000;
  copying.copy_seconds = 2.0;
  catalog::Migration planned;
  planned.id = 8;
  planned.buckets = {3, 4};
  const std::vector<catalog::Migration> all = {copying, planned};

  ResultTable shown = migrations_table(all, 2);
  check_shape(shown, 2);
  const std::string columns = names(shown);
  CHECK(columns.rfind(",waiting,bytes_copied,bytes_total,rows_per_sec,bytes_per_sec,eta_seconds") ==
        columns.size() -
            std::string(",waiting,bytes_copied,bytes_total,rows_per_sec,bytes_per_sec,eta_seconds").size());
  Row first = row(shown, 0);
  CHECK(Row(first.end() - 5, first.end()) == Row{"50000", "200000", "250.000", "25000.000", "6.000"});
  Row second = row(shown, 1);
  CHECK(Row(second.end() - 5, second.end()) == Row{"0", "0", "<null>", "<null>", "<null>"});

  ResultTable total = rebalance_progress_table(all);
  check_shape(total, 1);
  CHECK(names(total) ==
        "migrations,planned,copying,copied,rows_copied,rows_total,bytes_copied,bytes_total,percent,rows_per_"
        "sec,"
        "bytes_per_sec,eta_seconds");
  // rows_total: 2000 + the planned 2 buckets at 1000 rows a bucket; eta: 3500 rows at 250 rows/s.
  CHECK(row(total, 0) == Row{"2", "1", "1", "0", "500", "4000", "50000", "400000", "12.500", "250.000",
                             "25000.000", "14.000"});
}
