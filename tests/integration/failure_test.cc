// Server failures: pg_terminate_backend mid-transaction and while idle in the pool, a client-aborted
// COPY, and the whole shard restarting. Clients get errors (never hangs) and the pool recovers.
#include "it_test.h"

using namespace it;

TEST_SUITE("failure") {
  TEST_CASE("pg_terminate_backend on the serving backend mid-transaction") {
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    o.query_wait_timeout = "10s";
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    PgConn a = t.connect_or_throw();
    REQUIRE_OK(a.exec("BEGIN"));
    std::string pid = a.value("SELECT pg_backend_pid()");
    PgConn admin = shared_cluster().admin("postgres");
    REQUIRE(admin.value("SELECT pg_terminate_backend(" + pid + ")") == "t");

    auto start = std::chrono::steady_clock::now();
    PgResult r = a.exec("SELECT 'must-fail'", 15s);
    INFO("a after terminate: " << r.describe());
    CHECK_FALSE(r.timed_out());  // an error, not a hang (15 s)
    CHECK_FALSE(r.ok());
    MESSAGE("the statement on the terminated backend failed after " << ms_since(start) << " ms");

    // The pool recovers: with pool.size 1 this needs a new server.
    PgConn b = t.connect_or_throw();
    PgResult rb = b.exec("SELECT 'recovered', pg_backend_pid()", 15s);
    REQUIRE_MESSAGE(rb.ok(), rb.describe());
    CHECK(rb.value(0, 1) != pid);
    for (int i = 0; i < 20; ++i) CHECK(b.value("SELECT " + std::to_string(i)) == std::to_string(i));
    // Whatever a's connection does next, it does not hang.
    PgResult after = a.exec("ROLLBACK", 15s);
    CHECK_FALSE(after.timed_out());
  }

  TEST_CASE("a pooled server terminated while idle is not handed to the next transaction") {
    PROXY_ONLY();
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    PgConn a = t.connect_or_throw();
    std::string pid = a.value("SELECT pg_backend_pid()");  // now idle in the pool
    PgConn admin = shared_cluster().admin("postgres");
    REQUIRE(admin.value("SELECT pg_terminate_backend(" + pid + ")") == "t");
    REQUIRE(wait_until(
        [&] { return admin.value("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == "0"; }, 5s));
    sleep_ms(300);
    PgResult r = a.exec("SELECT 'after-idle-terminate', pg_backend_pid()", 15s);
    CHECK_MESSAGE(r.ok(), r.describe());
    if (r.ok()) CHECK(r.value(0, 1) != pid);
  }

  TEST_CASE("a client-aborted COPY does not leave a broken server in the pool") {
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    INFO("proxy log:\n" << t.log_tail());
    std::string table = unique_name("copy_abort");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    PgConn a = t.connect_or_throw(), b = t.connect_or_throw();
    REQUIRE(a.exec("COPY " + table + " FROM STDIN").status() == PGRES_COPY_IN);
    std::string rows = "1\n2\n3\n";
    REQUIRE(PQputCopyData(a.get(), rows.data(), static_cast<int>(rows.size())) == 1);
    REQUIRE(PQputCopyEnd(a.get(), "aborted by test") == 1);
    CHECK(a.wait_result(10s).sqlstate() == "57014");
    CHECK(b.value("SELECT count(*) FROM " + table) == "0");
    CHECK(a.value("SELECT 'a-ok'") == "a-ok");
    // A COPY whose client disappears mid-stream.
    {
      PgConn c = t.connect_or_throw();
      REQUIRE(c.exec("COPY " + table + " FROM STDIN").status() == PGRES_COPY_IN);
      REQUIRE(PQputCopyData(c.get(), rows.data(), static_cast<int>(rows.size())) == 1);
      PQflush(c.get());
    }
    PgResult rb = b.exec("SELECT count(*) FROM " + table, 20s);
    CHECK_MESSAGE(rb.ok(), rb.describe());
    if (rb.ok()) CHECK(rb.value() == "0");
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("the shard restarts: clients get errors, not hangs, then the pool recovers") {
    PgCluster cluster;  // its own server, so stopping it affects nothing else
    ProxyOptions o;
    o.pool_size = 4;
    o.server_connect_timeout = "2s";
    o.query_wait_timeout = "5s";
    Target t(cluster, o);
    INFO("proxy log:\n" << t.log_tail());
    PgConn a = t.connect_or_throw();
    REQUIRE(a.value("SELECT 'before'") == "before");
    cluster.stop();

    auto start = std::chrono::steady_clock::now();
    PgResult r = a.exec("SELECT 'during'", 20s);
    INFO("a while the shard is down: " << r.describe());
    CHECK_FALSE(r.timed_out());  // an error, not a hang (20 s)
    CHECK_FALSE(r.ok());
    MESSAGE("a statement while the shard is down failed after " << ms_since(start) << " ms");
    start = std::chrono::steady_clock::now();
    ConnectResult c = t.connect("sslmode=disable", 20s);
    if (c.ok) {
      PgResult rc = c.conn.exec("SELECT 'during'", 20s);
      INFO("new client while the shard is down: " << rc.describe());
      CHECK_FALSE(rc.timed_out());
      CHECK_FALSE(rc.ok());
    } else {
      CHECK_FALSE(c.timed_out);
    }
    MESSAGE("a new client while the shard is down was refused after " << ms_since(start) << " ms");

    cluster.start();
    std::string last_error;
    bool back = wait_until(
        [&] {
          ConnectResult n = t.connect("sslmode=disable", 10s);
          if (!n.ok) {
            last_error = n.error;
            return false;
          }
          PgResult q = n.conn.exec("SELECT 'after'", 10s);
          last_error = q.describe();
          return q.ok();
        },
        20s, 200ms);
    INFO("last error: " << last_error);
    REQUIRE(back);
    PgConn d = t.connect_or_throw();
    for (int i = 0; i < 20; ++i) CHECK(d.value("SELECT " + std::to_string(i)) == std::to_string(i));
  }

}  // TEST_SUITE
