// The admin console: psql against the virtual database `shardwire`, pgbouncer's tables with
// pgbouncer's columns, who may log in, RELOAD, PAUSE/RESUME, KILL_CLIENT, and the sharding views.
#include <sstream>
#include <thread>

#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

ShardedOptions admin_options() {
  ShardedOptions options;
  options.proxy.users.push_back({"admin", "adminpw"});
  options.proxy.extra_yaml = "admin:\n  database: shardwire\n  users: [admin]\n";
  return options;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

struct Console {
  PgConn conn;
  PgResult run(const std::string& command) { return conn.exec(command, 20s); }
};

Console console(const ShardedFixture& f, const std::string& user = "admin",
                const std::string& password = "adminpw") {
  ConnectResult r = connect(f.proxy->conninfo(user, password, "sslmode=disable dbname=shardwire"));
  if (!r.ok) throw std::runtime_error("admin connect: " + r.error + "\n" + f.log_tail());
  return Console{std::move(r.conn)};
}

// pgbouncer 1.18's columns, in order; shardwire's extras follow them.
const std::vector<std::pair<std::string, std::string>> kPgbouncerColumns = {
    {"SHOW DATABASES",
     "name,host,port,database,force_user,pool_size,min_pool_size,reserve_pool,pool_mode,"
     "max_connections,current_connections,paused,disabled"},
    {"SHOW POOLS",
     "database,user,cl_active,cl_waiting,cl_active_cancel_req,cl_waiting_cancel_req,sv_active,"
     "sv_active_cancel,sv_being_canceled,sv_idle,sv_used,sv_tested,sv_login,maxwait,maxwait_us,pool_mode"},
    {"SHOW CLIENTS",
     "type,user,database,state,addr,port,local_addr,local_port,connect_time,request_time,wait,"
     "wait_us,close_needed,ptr,link,remote_pid,tls,application_name"},
    {"SHOW SERVERS",
     "type,user,database,state,addr,port,local_addr,local_port,connect_time,request_time,wait,"
     "wait_us,close_needed,ptr,link,remote_pid,tls,application_name"},
    {"SHOW STATS",
     "database,total_xact_count,total_query_count,total_received,total_sent,total_xact_time,"
     "total_query_time,total_wait_time,avg_xact_count,avg_query_count,avg_recv,avg_sent,"
     "avg_xact_time,avg_query_time,avg_wait_time"},
    {"SHOW STATS_TOTALS",
     "database,xact_count,query_count,bytes_received,bytes_sent,xact_time,query_time,wait_time"},
    {"SHOW LISTS", "list,items"},
    {"SHOW USERS", "name,pool_mode"},
    {"SHOW CONFIG", "key,value,default,changeable"},
    {"SHOW VERSION", "version"},
    {"SHOW STATE", "key,value"},
    {"SHOW HELP", "command,description"},
    {"SHOW SHARDS", "name,host,port,database,buckets,migrating,state,superuser"},
    {"SHOW BUCKETS", "bucket,shard,state,version"},
    {"SHOW DIRECTORY", "version,source,loaded_at,age_seconds,lease,buckets,shards"},
    {"SHOW ROUTERS", "id,host,port,pid,directory_version,started_at,heartbeat_at,heartbeat_age_seconds"},
    {"SHOW SEQUENCES", "shard,slot,bigint_first,bigint_last,integer_first,integer_last,assigned_at"},
};

int row_of(const PgResult& r, int col, const std::string& value) {
  for (int i = 0; i < r.rows(); ++i)
    if (r.value(i, col) == value) return i;
  return -1;
}

}  // namespace

TEST_SUITE("admin") {
  TEST_CASE("every SHOW command answers with the documented columns; psql renders them") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    INFO("proxy log:\n" << f.log_tail());
    PgConn app = f.client();
    REQUIRE_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (7, 'x')"));
    REQUIRE_OK(app.exec("SELECT note FROM orders"));  // a scatter read
    Console admin = console(f);
    for (const auto& entry : kPgbouncerColumns) {
      const auto& command = entry.first;  // not a structured binding: doctest's macros capture it
      const auto& columns = entry.second;
      PgResult r = admin.run(command);
      REQUIRE_MESSAGE(r.ok(), command << " -> " << r.describe());
      CHECK_MESSAGE(join(r.names()).rfind(columns, 0) == 0, command << " columns: " << join(r.names()));
    }
    // Rows that must be there.
    PgResult pools = admin.run("SHOW POOLS");
    CHECK(pools.rows() >= 1);
    PgResult clients = admin.run("SHOW CLIENTS");
    CHECK(clients.rows() == 2);  // the app client and this console
    CHECK(row_of(clients, 1, "admin") >= 0);
    PgResult stats = admin.run("SHOW STATS_TOTALS");
    long long queries = 0;
    for (int i = 0; i < stats.rows(); ++i) queries += std::stoll(stats.value(i, 2));
    CHECK(queries >= 2 + 3);  // the insert, the scatter count on 3 shards (and CREATE TABLE)
    // The harness's shard login `app` is a superuser: shardwire warns at start and SHOW SHARDS says so.
    CHECK(f.proxy->wait_for_log("a superuser, who can drop the bucket fence trigger", 10s));
    PgResult shards = admin.run("SHOW SHARDS");
    REQUIRE(shards.rows() == 3);
    for (int i = 0; i < 3; ++i) {
      CHECK_MESSAGE(std::stoi(shards.value(i, 4)) >= 1365, "shard buckets: " << shards.value(i, 4));
      CHECK_MESSAGE(shards.value(i, 7) == "yes", "superuser column of " << shards.value(i, 0));
    }
    CHECK(admin.run("SHOW BUCKETS s1").rows() == 1365);
    CHECK(admin.run("SHOW BUCKETS").rows() == 4096);
    CHECK(admin.run("SHOW BUCKETS nope").sqlstate() == "42704");
    PgResult directory = admin.run("SHOW DIRECTORY");
    CHECK(directory.value(0, 1) == "catalog");
    CHECK(directory.value(0, 4) == "valid");
    PgResult routers = admin.run("SHOW ROUTERS");
    CHECK(routers.rows() == 1);
    PgResult route = admin.run("SHOW ROUTE SELECT * FROM orders WHERE tenant_id = 7");
    REQUIRE(route.ok());
    CHECK(route.value(0, 0) == "shard");
    CHECK(route.value(0, 1) == ShardedSetup::shard_name(shard_of_key(7)));
    CHECK(route.value(0, 2) == std::to_string(bucket_of_key(7)));
    PgResult config = admin.run("SHOW CONFIG");
    int users_row = row_of(config, 0, "auth.users");
    REQUIRE(users_row >= 0);
    CHECK(config.value(users_row, 1) == "app,admin");
    for (const auto& row : config.data())
      for (const auto& value : row)
        CHECK_MESSAGE(!contains(value, "secret"), "a password is shown: " << value);

    // psql renders a table (aligned output with the header line).
    CommandOptions with_password;
    with_password.env["PGPASSWORD"] = "adminpw";
    CommandResult psql_out =
        run_command({psql(), "-X", "-h", "127.0.0.1", "-p", std::to_string(f.proxy->port()), "-U", "admin",
                     "-d", "shardwire", "-c", "SHOW POOLS"},
                    {}, 20s, with_password);
    CHECK_MESSAGE(psql_out.exit_code == 0, psql_out.err);
    CHECK(contains(psql_out.out, "cl_active"));
    CHECK(contains(psql_out.out, "row"));
  }

  TEST_CASE("only admin users may log in; bad commands get 08P01 with a hint") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    ConnectResult app = connect(f.proxy->conninfo("app", "secret", "sslmode=disable dbname=shardwire"));
    CHECK_FALSE(app.ok);
    CHECK(contains(app.error, "admin.users"));
    ConnectResult wrong = connect(f.proxy->conninfo("admin", "nope", "sslmode=disable dbname=shardwire"));
    CHECK_FALSE(wrong.ok);
    CHECK(contains(wrong.error, "password authentication failed"));
    Console admin = console(f);
    for (const char* bad :
         {"SHOW NOTHING", "SELECT 1", "PAUSE now", "KILL_CLIENT x", "SHOW POOLS; SHOW STATS", ""}) {
      PgResult r = admin.run(bad);
      if (std::string(bad).empty()) continue;  // libpq sends nothing useful for an empty query
      CHECK_MESSAGE(r.sqlstate() == "08P01", bad << " -> " << r.describe());
    }
    CHECK(admin.run("show version;").ok());  // case and a trailing semicolon do not matter
    // The extended protocol is refused, and the console still works afterwards.
    PgResult extended = admin.conn.exec_params("SHOW VERSION", {});
    CHECK(extended.sqlstate() == "08P01");
    CHECK(admin.run("SHOW VERSION").ok());
  }

  TEST_CASE("RELOAD applies a good file and refuses a broken one, which keeps the running config") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    Console admin = console(f);
    std::string good = f.proxy->config_text();
    std::string bigger = good;
    size_t at = bigger.find("  size: ");
    REQUIRE(at != std::string::npos);
    bigger.replace(at, bigger.find('\n', at) - at, "  size: 7");
    f.proxy->write_config(bigger);
    REQUIRE_OK(admin.run("RELOAD"));
    PgResult config = admin.run("SHOW CONFIG");
    CHECK(config.value(row_of(config, 0, "pool.size"), 1) == "7");

    std::string broken = bigger;
    broken.replace(broken.find("  size: 7"), 9, "  size: many");
    f.proxy->write_config(broken);
    PgResult refused = admin.run("RELOAD");
    CHECK_FALSE(refused.ok());
    CHECK(contains(refused.error(), "pool.size"));
    CHECK(contains(refused.error(), "running configuration stays"));
    config = admin.run("SHOW CONFIG");
    CHECK(config.value(row_of(config, 0, "pool.size"), 1) == "7");
    PgConn app = f.client();
    CHECK(app.value("SELECT 'still-serving'") == "still-serving");
  }

  TEST_CASE("PAUSE waits for open transactions and holds new ones until RESUME") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    Console admin = console(f);
    PgConn busy = f.client();
    REQUIRE_OK(busy.exec("BEGIN"));
    REQUIRE_OK(busy.exec("INSERT INTO orders (tenant_id) VALUES (1)"));  // holds a server now

    REQUIRE(admin.conn.send("PAUSE"));
    sleep_ms(300);
    CHECK_MESSAGE(admin.conn.wait_result(100ms).timed_out(), "PAUSE returned while a transaction was open");
    REQUIRE_OK(busy.exec("COMMIT"));
    PgResult paused = admin.conn.wait_result(10s);
    CHECK_MESSAGE(paused.ok(), paused.describe());
    CHECK(paused.command_tag() == "PAUSE");
    CHECK(admin.run("SHOW STATE").value(1, 1) == "yes");

    PgConn held = f.client();  // logging in works while paused; queries wait
    REQUIRE(held.send("SELECT count(*) FROM orders WHERE tenant_id = 1"));
    CHECK_MESSAGE(held.wait_result(500ms).timed_out(), "a new transaction ran while paused");
    PgResult waiting = admin.run("SHOW CLIENTS");
    bool someone_waits = false;
    for (int i = 0; i < waiting.rows(); ++i)
      someone_waits = someone_waits || waiting.value(i, 3) == "waiting";
    CHECK(someone_waits);
    REQUIRE_OK(admin.run("RESUME"));
    PgResult released = held.wait_result(10s);
    REQUIRE_MESSAGE(released.ok(), released.describe());
    CHECK(released.value() == "1");
    CHECK(admin.run("RESUME").sqlstate() == "55000");
  }

  TEST_CASE("KILL_CLIENT ends exactly that client") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    Console admin = console(f);
    PgConn victim = f.client("sslmode=disable application_name=victim");
    PgConn bystander = f.client("sslmode=disable application_name=bystander");
    REQUIRE_OK(victim.exec("SELECT 1"));
    PgResult clients = admin.run("SHOW CLIENTS");
    int row = row_of(clients, 17, "victim");
    REQUIRE(row >= 0);
    std::string id = clients.value(row, 18);
    REQUIRE_OK(admin.run("KILL_CLIENT " + id));
    PgResult gone = victim.exec("SELECT 1", 5s);
    CHECK_FALSE(gone.ok());
    CHECK(bystander.value("SELECT 'alive'") == "alive");
    CHECK(admin.run("KILL_CLIENT " + id).sqlstate() == "42704");
    PgResult after = admin.run("SHOW CLIENTS");
    CHECK(row_of(after, 17, "victim") < 0);
    CHECK(row_of(after, 17, "bystander") >= 0);
  }

  TEST_CASE("RECONNECT replaces every server once it is released") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    Console admin = console(f);
    PgConn app = f.client();
    std::string before = app.value("SELECT pg_backend_pid()");
    REQUIRE_OK(admin.run("RECONNECT"));
    std::string after = app.value("SELECT pg_backend_pid()");
    CHECK(before != after);
    CHECK(app.value("SELECT 'served'") == "served");
  }

  TEST_CASE("SHUTDOWN WAIT_FOR_CLIENTS refuses new clients and exits when the last one leaves") {
    PROXY_ONLY();
    ShardedFixture f(admin_options());
    PgConn app = f.client();
    {
      Console admin = console(f);
      REQUIRE_OK(admin.run("SHUTDOWN WAIT_FOR_CLIENTS"));
    }
    CHECK(wait_until([&] { return !connect(f.proxy->conninfo(), 2s).ok; }, 5s));
    CHECK(app.value("SELECT 'still-served'") == "still-served");
    CHECK(f.proxy->running());
    app.reset();
    auto code = f.proxy->wait_exit(10s);
    REQUIRE(code.has_value());
    CHECK(*code == 0);
  }

}  // TEST_SUITE
