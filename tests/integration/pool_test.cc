// Pooling: 500 short-lived connections, session state replayed across servers in transaction mode,
// prepared statements in transaction mode, LISTEN/NOTIFY in session mode, a session-mode server
// reset (DISCARD ALL) and reused when its client leaves, query_wait_timeout,
// idle_timeout, server_lifetime, clients that vanish mid-query or mid-transaction.
#include <atomic>
#include <mutex>
#include <random>
#include <set>

#include "it_test.h"

using namespace it;

namespace {

// A database of its own, so pg_stat_activity counts only this test's servers.
ProxyOptions own_db_options(const std::string& prefix) {
  ProxyOptions o;
  o.dbname = unique_name(prefix);
  shared_cluster().create_database(o.dbname);
  return o;
}

// Steers a client's next transaction onto a chosen server: `n` (= pool.size) holders each take a
// server inside a transaction, then holder i%n commits, so its server is the only free one.
struct Rotation {
  std::vector<PgConn> holders;
  explicit Rotation(const Target& t, int n) {
    for (int i = 0; i < n; ++i) holders.push_back(t.connect_or_throw());
  }
  // Returns the backend pid of the server left free.
  std::string free_one(int i) {
    std::vector<std::string> pids;
    for (auto& h : holders) {
      REQUIRE_OK(h.exec("BEGIN"));
      pids.push_back(h.value("SELECT pg_backend_pid()"));
    }
    size_t k = static_cast<size_t>(i) % holders.size();
    REQUIRE_OK(holders[k].exec("COMMIT"));
    return pids[k];
  }
  void release_all(int i) {
    size_t k = static_cast<size_t>(i) % holders.size();
    for (size_t j = 0; j < holders.size(); ++j)
      if (j != k) REQUIRE_OK(holders[j].exec("COMMIT"));
  }
};

}  // namespace

TEST_SUITE("pool") {
  TEST_CASE("500 short-lived connections") {
    ProxyOptions o = own_db_options("conns");
    o.pool_size = 10;
    Target t(shared_cluster(), o);
    std::atomic<int> ok{0}, failed{0};
    std::mutex mu;
    std::string first_error;
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int th = 0; th < 5; ++th) {
      threads.emplace_back([&, th] {
        for (int i = 0; i < 100; ++i) {
          ConnectResult c = t.connect("sslmode=disable", 30s);
          std::string err;
          if (!c.ok) {
            err = "connect: " + c.error;
          } else {
            PgResult r = c.conn.exec("SELECT " + std::to_string(th * 1000 + i), 30s);
            if (!r.ok() || r.value() != std::to_string(th * 1000 + i)) err = "query: " + r.describe();
          }
          if (err.empty()) {
            ++ok;
          } else {
            ++failed;
            std::lock_guard<std::mutex> lock(mu);
            if (first_error.empty()) first_error = err;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    INFO("first error: " << first_error);
    INFO("proxy log:\n" << t.log_tail());
    CHECK(ok == 500);
    CHECK(failed == 0);
    CHECK(ms_since(start) < 120000);
    int servers = shared_cluster().count_backends(o.dbname);
    CHECK(servers <= 10);  // pool.size bounds the servers
    ConnectResult after = t.connect();
    CHECK_MESSAGE(after.ok, after.error);
  }

  TEST_CASE(
      "transaction mode: SET and application_name are replayed on whichever server runs the next "
      "transaction") {
    ProxyOptions o = own_db_options("replay");
    o.pool_size = 3;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw("sslmode=disable application_name=it_app_a");
    PgConn b = t.connect_or_throw("sslmode=disable application_name=it_app_b");
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE_OK(a.exec("SET statement_timeout = '1234ms'"));
    REQUIRE_OK(a.exec("SET search_path = it_schema_a, public"));
    REQUIRE_OK(b.exec("SET statement_timeout = '2222ms'"));
    REQUIRE_OK(b.exec("SET application_name = 'it_app_b2'"));
    Rotation rot(t, 3);
    std::set<std::string> a_servers;
    const std::string probe =
        "SELECT pg_backend_pid(), current_setting('statement_timeout'), current_setting('application_name'), "
        "current_setting('search_path')";
    for (int i = 0; i < 12; ++i) {
      std::string free_server = rot.free_one(i);
      PgResult ra = a.exec(probe);
      rot.release_all(i);
      REQUIRE_MESSAGE(ra.ok(), ra.describe());
      a_servers.insert(ra.value(0, 0));
      if (!t.direct()) CHECK_MESSAGE(ra.value(0, 0) == free_server, "a did not run on the only free server");
      CHECK(ra.value(0, 1) == "1234ms");
      CHECK(ra.value(0, 2) == "it_app_a");
      CHECK(ra.value(0, 3) == "it_schema_a, public");
      PgResult rb = b.exec(probe);
      REQUIRE_MESSAGE(rb.ok(), rb.describe());
      CHECK(rb.value(0, 1) == "2222ms");
      CHECK(rb.value(0, 2) == "it_app_b2");
      CHECK(rb.value(0, 3) == "\"$user\", public");
    }
    if (!t.direct())
      CHECK_MESSAGE(a_servers.size() == 3,
                    "client a did not visit all three servers; replay was not exercised");

    // pg_stat_activity of the server running a's transaction shows a's application_name.
    REQUIRE_OK(a.exec("BEGIN"));
    std::string pid = a.value("SELECT pg_backend_pid()");
    PgConn admin = shared_cluster().admin("postgres");
    CHECK(admin.value("SELECT application_name FROM pg_stat_activity WHERE pid = " + pid) == "it_app_a");
    REQUIRE_OK(a.exec("COMMIT"));

    // RESET ALL goes back to the startup values everywhere.
    REQUIRE_OK(a.exec("RESET ALL"));
    for (int i = 0; i < 6; ++i) {
      rot.free_one(i);
      PgResult ra = a.exec(probe);
      rot.release_all(i);
      REQUIRE_MESSAGE(ra.ok(), ra.describe());
      CHECK(ra.value(0, 1) == "0");
      CHECK(ra.value(0, 2) == "it_app_a");
      CHECK(ra.value(0, 3) == "\"$user\", public");
    }
  }

  TEST_CASE("transaction mode: startup options (-c settings) apply to every transaction") {
    ProxyOptions o;
    o.pool_size = 2;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw("sslmode=disable options='-c statement_timeout=4321 -c work_mem=7MB'");
    INFO("proxy log:\n" << t.log_tail());
    Rotation rot(t, 2);
    std::set<std::string> servers;
    for (int i = 0; i < 6; ++i) {
      rot.free_one(i);
      PgResult r = a.exec(
          "SELECT current_setting('statement_timeout'), current_setting('work_mem'), pg_backend_pid()");
      rot.release_all(i);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == "4321ms");
      CHECK(r.value(0, 1) == "7MB");
      servers.insert(r.value(0, 2));
    }
    if (!t.direct()) CHECK(servers.size() == 2);
  }

  TEST_CASE("transaction mode: named prepared statements work whichever server runs them") {
    ProxyOptions o;
    o.pool_size = 3;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE_OK(a.prepare("double_it", "SELECT $1::int * 2, pg_backend_pid()"));
    REQUIRE_OK(a.prepare("concat_it", "SELECT $1::text || $2::text"));
    PgResult dup = a.prepare("double_it", "SELECT 1");
    CHECK(dup.sqlstate() == "42P05");  // already exists, as PostgreSQL says
    Rotation rot(t, 3);
    std::set<std::string> servers;
    for (int i = 0; i < 12; ++i) {
      rot.free_one(i);
      PgResult r = a.exec_prepared("double_it", {std::to_string(i)});
      rot.release_all(i);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == std::to_string(i * 2));
      servers.insert(r.value(0, 1));
      PgResult c = a.exec_prepared("concat_it", {"x", std::to_string(i)});
      REQUIRE_MESSAGE(c.ok(), c.describe());
      CHECK(c.value() == 'x' + std::to_string(i));
    }
    if (!t.direct())
      CHECK_MESSAGE(servers.size() == 3, "prepared statements did not visit all three servers");
    CHECK(a.exec_prepared("never_prepared", {}).sqlstate() == "26000");
    // Inside a transaction too.
    REQUIRE_OK(a.exec("BEGIN"));
    CHECK(a.exec_prepared("double_it", {"21"}).value() == "42");
    REQUIRE_OK(a.exec("COMMIT"));
  }

  TEST_CASE("pool.size caps the servers of all workers together, and capacity follows the clients") {
    ProxyOptions o = own_db_options("cap");
    o.workers = 2;
    o.pool_size = 3;
    o.query_wait_timeout = "20s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    // pool.size clients in transactions at once are all served promptly, whichever worker has them.
    for (int round = 0; round < 5; ++round) {
      std::vector<PgConn> clients;
      for (int i = 0; i < o.pool_size; ++i) clients.push_back(t.connect_or_throw());
      for (auto& c : clients) {
        auto start = std::chrono::steady_clock::now();
        REQUIRE_OK(c.exec("BEGIN", 10s));
        REQUIRE_OK(c.exec("SELECT 1", 10s));
        // Waiting for a server would take up to query_wait_timeout (20 s); 10 s only leaves room
        // for a slow machine.
        CHECK_MESSAGE(ms_since(start) < 10000,
                      "waited for a server although the pool had room (round " << round << ")");
      }
      for (auto& c : clients) REQUIRE_OK(c.exec("COMMIT", 10s));
    }
    // 9 clients at once never use more than pool.size servers.
    std::vector<PgConn> clients;
    for (int i = 0; i < 9; ++i) clients.push_back(t.connect_or_throw());
    for (auto& c : clients) REQUIRE(c.send("SELECT pg_backend_pid(), pg_sleep(0.3)"));
    std::set<std::string> pids;
    int most = 0;
    for (auto& c : clients) {
      most = std::max(most, shared_cluster().count_backends(o.dbname));
      PgResult r = c.wait_result(30s);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      pids.insert(r.value(0, 0));
    }
    INFO("servers used: " << pids.size() << ", most connected at once: " << most);
    // The cap is on servers connected at once. Capacity moves between workers by closing an idle
    // server on one and opening one on the other, so over the run more than 3 pids may appear.
    CHECK(most <= 3);
    CHECK(shared_cluster().count_backends(o.dbname) <= 3);
  }

  TEST_CASE("session mode: LISTEN/NOTIFY, and one server per client") {
    ProxyOptions o;
    o.pool_mode = "session";
    o.pool_size = 5;
    Target t(shared_cluster(), o);
    PgConn listener = t.connect_or_throw(), notifier = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    std::string channel = unique_name("chan");
    REQUIRE_OK(listener.exec("LISTEN " + channel));
    REQUIRE_OK(notifier.exec("NOTIFY " + channel + ", 'hello-1'"));
    auto n1 = listener.wait_notify(5s);
    REQUIRE_MESSAGE(n1.has_value(), "no notification within 5 s");
    CHECK(n1->first == channel);
    CHECK(n1->second == "hello-1");
    // Delivered at commit, not before.
    REQUIRE_OK(notifier.exec("BEGIN"));
    REQUIRE_OK(notifier.exec("SELECT pg_notify('" + channel + "', 'hello-2')"));
    CHECK_FALSE(listener.wait_notify(300ms).has_value());
    REQUIRE_OK(notifier.exec("COMMIT"));
    auto n2 = listener.wait_notify(5s);
    REQUIRE(n2.has_value());
    CHECK(n2->second == "hello-2");
    // The listener keeps its server across transactions.
    std::string pid = listener.value("SELECT pg_backend_pid()");
    for (int i = 0; i < 10; ++i) {
      PgConn other = t.connect_or_throw();
      CHECK(other.value("SELECT 1") == "1");
      CHECK(listener.value("SELECT pg_backend_pid()") == pid);
    }
    // Session state stays without replay.
    REQUIRE_OK(listener.exec("SET work_mem = '3MB'"));
    CHECK(listener.value("SHOW work_mem") == "3MB");
  }

  TEST_CASE("session mode: a server whose client left is reset (DISCARD ALL) and reused, not closed") {
    PROXY_ONLY();
    ProxyOptions o;
    o.pool_mode = "session";
    o.pool_size = 1;
    o.workers = 1;  // one pool: the next client meets the same server
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    const std::string channel = unique_name("reset_chan");
    const std::string table = unique_name("reset_tmp");
    std::string pid;
    {
      PgConn a = t.connect_or_throw();
      pid = a.value("SELECT pg_backend_pid()");
      REQUIRE_OK(a.exec("SET work_mem = '7MB'"));
      REQUIRE_OK(a.exec("PREPARE left_behind AS SELECT 1"));
      REQUIRE_OK(a.exec("CREATE TEMP TABLE " + table + " (x int)"));
      REQUIRE(a.value("SELECT pg_advisory_lock(4242)") == "");
      REQUIRE_OK(a.exec("LISTEN " + channel));
    }
    PgConn b = t.connect_or_throw();
    CHECK(b.value("SELECT pg_backend_pid()") == pid);
    CHECK(b.value("SHOW work_mem") == "4MB");
    CHECK(b.exec("EXECUTE left_behind").sqlstate() == "26000");
    CHECK(b.value("SELECT to_regclass('pg_temp." + table + "') IS NULL") == "t");
    CHECK(b.value("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()") ==
          "0");
    CHECK(b.value("SELECT count(*) FROM pg_listening_channels()") == "0");
    // The client's own state works as before.
    REQUIRE_OK(b.exec("PREPARE left_behind AS SELECT 2"));
    CHECK(b.value("EXECUTE left_behind") == "2");
  }

  TEST_CASE("query_wait_timeout: a client waiting for the only server gets a clear error, not a hang") {
    PROXY_ONLY();
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.query_wait_timeout = "1s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    PgConn holder = t.connect_or_throw();
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE(holder.value("SELECT 'holding'") == "holding");

    auto start = std::chrono::steady_clock::now();
    std::string error;
    ConnectResult waiter = t.connect("sslmode=disable", 15s);
    if (!waiter.ok) {
      error = waiter.error;  // the proxy may need a server to finish the login
    } else {
      PgResult r = waiter.conn.exec("SELECT 'should-not-run'", 15s);
      CHECK_FALSE(r.timed_out());
      CHECK_FALSE(r.ok());
      error = r.error();
    }
    long long took = ms_since(start);
    INFO("waiting client's error after " << took << " ms: " << error);
    CHECK(took >= 800);
    CHECK(took < 5000);
    CHECK(contains(lower(error), "timeout"));

    REQUIRE_OK(holder.exec("COMMIT"));
    ConnectResult next = t.connect();
    REQUIRE_MESSAGE(next.ok, next.error);
    CHECK(next.conn.value("SELECT 'served'") == "served");
  }

  TEST_CASE("idle_timeout closes idle server connections") {
    PROXY_ONLY();
    ProxyOptions o = own_db_options("idle");
    o.pool_size = 5;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.idle_timeout = "1s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    std::vector<PgConn> clients;
    for (int i = 0; i < 4; ++i) {
      clients.push_back(t.connect_or_throw());
      REQUIRE_OK(clients.back().exec("BEGIN"));
      REQUIRE_OK(clients.back().exec("SELECT 1"));
    }
    CHECK(shared_cluster().count_backends(o.dbname) == 4);
    for (auto& c : clients) REQUIRE(c.exec("COMMIT").ok());
    // Clients stay connected; their servers are idle in the pool and must be closed.
    int count = -1;
    bool closed =
        wait_until([&] { return (count = shared_cluster().count_backends(o.dbname)) == 0; }, 10s, 100ms);
    INFO("servers still connected: " << count);
    CHECK(closed);
    CHECK(clients[0].value("SELECT 'reconnects'") == "reconnects");
  }

  TEST_CASE("server_lifetime retires old server connections") {
    PROXY_ONLY();
    ProxyOptions o = own_db_options("lifetime");
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.server_lifetime = "1s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    PgConn a = t.connect_or_throw();
    std::string first = a.value("SELECT pg_backend_pid()");
    std::set<std::string> pids;
    auto start = std::chrono::steady_clock::now();
    while (ms_since(start) < 4000) {
      pids.insert(a.value("SELECT pg_backend_pid()"));
      sleep_ms(100);
    }
    CHECK(pids.size() >= 2);
    PgConn admin = shared_cluster().admin("postgres");
    CHECK(wait_until(
        [&] { return admin.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + first) == "0"; },
        5s));
    CHECK(shared_cluster().count_backends(o.dbname) <= 1);
  }

  TEST_CASE("a client that disconnects mid-query does not leak its server") {
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.query_wait_timeout = "15s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    std::string marker = unique_name("leak_marker");
    {
      PgConn a = t.connect_or_throw();
      REQUIRE(a.send("SELECT pg_sleep(60), '" + marker + "'"));
      sleep_ms(300);
    }  // PQfinish: Terminate + close while the query runs
    auto start = std::chrono::steady_clock::now();
    PgConn b = t.connect_or_throw();
    PgResult r = b.exec("SELECT 'b-got-a-server'", 20s);
    CHECK_MESSAGE(r.ok(), r.describe());  // a leaked server: query_wait_timeout's error after 15 s
    MESSAGE("the next client got a server after " << ms_since(start) << " ms");
    if (t.direct()) return;  // PostgreSQL itself finishes the sleep
    PgConn admin = shared_cluster().admin("postgres");
    CHECK_MESSAGE(
        wait_until(
            [&] {
              return admin.value(
                         "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE "
                         "'%" +
                         marker + "%' AND pid <> pg_backend_pid()") == "0";
            },
            10s),
        "the abandoned query is still running on a server");
  }

  TEST_CASE("a client that disconnects inside a transaction: its work is rolled back and the server reused") {
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.query_wait_timeout = "15s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    std::string table = unique_name("abandoned");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    {
      PgConn a = t.connect_or_throw();
      REQUIRE_OK(a.exec("BEGIN"));
      REQUIRE_OK(a.exec("INSERT INTO " + table + " VALUES (1)"));
    }
    PgConn b = t.connect_or_throw();
    PgResult r = b.exec("SELECT count(*), now() = statement_timestamp() FROM " + table, 20s);
    REQUIRE_MESSAGE(r.ok(), r.describe());
    CHECK(r.value(0, 0) == "0");
    CHECK(r.value(0, 1) == "t");  // not inside a's leftover transaction
    REQUIRE_OK(b.exec("INSERT INTO " + table + " VALUES (2)"));
    CHECK(admin.value("SELECT string_agg(id::text, ',') FROM " + table) == "2");
    admin.exec("DROP TABLE " + table);
  }

}  // TEST_SUITE
