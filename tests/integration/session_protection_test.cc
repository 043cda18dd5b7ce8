// Settings the bucket fence depends on cannot be changed through shardwire in any spelling it can
// see: SET, and set_config() in any letter case and either is_local; a set_config() whose name is
// computed at run time is refused too. A refusal leaves nothing on the pooled server: the next
// client, served by the same server (pool.size 1), still sees the fence on.
#include "it_test.h"

using namespace it;

namespace {

struct Refused {
  std::string sql;
  std::string named;  // what the message must name
};

const std::vector<Refused> kRefused = {
    {"SELECT set_config('session_replication_role', 'replica', false)", "session_replication_role"},
    {"SELECT set_config('SESSION_REPLICATION_ROLE', 'replica', true)", "SESSION_REPLICATION_ROLE"},
    {"select 1, Set_Config('Session_Replication_Role', 'local', false)", "Session_Replication_Role"},
    {"SELECT pg_catalog.set_config(E'session_replication_role', 'replica', false)",
     "session_replication_role"},
    {"SELECT set_config('shardwire.fence', 'off', false)", "shardwire.fence"},
    {"SELECT set_config('session_' || 'replication_role', 'replica', false)", "name the setting literally"},
    {"SELECT 1; SELECT set_config('session_replication_role', 'replica', false)", "session_replication_role"},
    {"SET session_replication_role = replica", "session_replication_role"},
    {"SET Session_Replication_Role TO 'replica'", "session_replication_role"},
};

}  // namespace

TEST_SUITE("session_protection") {
  TEST_CASE("no spelling of set_config or SET switches the fence off, and nothing leaks to the next client") {
    PROXY_ONLY();
    ProxyOptions options;
    options.pool_size = 1;  // every client gets the same server
    ProxyProcess proxy(shared_cluster(), options);
    {
      // An allowed set_config first: the refused texts below share its normalized form, so a
      // statement cache that reused its facts would let them through.
      PgConn c = connect_or_throw(proxy.conninfo());
      CHECK(c.value("SELECT set_config('app.tenant', '5', false)") == "5");
      CHECK(c.value("SELECT set_config('app.tenant', '6', true)") == "6");
    }
    for (const Refused& r : kRefused) {
      CAPTURE(r.sql);
      INFO("proxy log:\n" << proxy.log_tail());
      PgConn c = connect_or_throw(proxy.conninfo());
      PgResult refused = c.exec(r.sql);
      CHECK_FALSE(refused.ok());
      CHECK(refused.sqlstate() == "42501");
      CHECK_MESSAGE(contains(refused.error(), r.named), refused.describe());
      CHECK(c.value("SELECT 'still usable'") == "still usable");
      PgConn next = connect_or_throw(proxy.conninfo());
      CHECK(next.value("SHOW session_replication_role") == "origin");
    }
  }

  TEST_CASE("the extended protocol is refused the same way") {
    PROXY_ONLY();
    ProxyOptions options;
    options.pool_size = 1;
    ProxyProcess proxy(shared_cluster(), options);
    for (const Refused& r : kRefused) {
      if (contains(r.sql, ";")) continue;  // one statement per Parse
      CAPTURE(r.sql);
      INFO("proxy log:\n" << proxy.log_tail());
      PgConn c = connect_or_throw(proxy.conninfo());
      PgResult refused = c.exec_params(r.sql, {});
      CHECK_FALSE(refused.ok());
      CHECK(refused.sqlstate() == "42501");
      CHECK_MESSAGE(contains(refused.error(), r.named), refused.describe());
      CHECK(c.value("SELECT 'still usable'") == "still usable");
      PgConn next = connect_or_throw(proxy.conninfo());
      CHECK(next.value("SHOW session_replication_role") == "origin");
    }
    PgConn c = connect_or_throw(proxy.conninfo());
    PgResult by_parameter =
        c.exec_params("SELECT set_config($1, 'replica', false)", {"session_replication_role"});
    CHECK_FALSE(by_parameter.ok());
    CHECK(by_parameter.sqlstate() == "42501");
    CHECK(c.value("SHOW session_replication_role") == "origin");
  }

  TEST_CASE(
      "session advisory locks and lasting temp tables: pinned in transaction pooling, run in session "
      "pooling, "
      "gone for the next client") {
    PROXY_ONLY();
    const std::vector<std::string> unpoolable = {
        "SELECT pg_advisory_lock(7)",
        "SELECT pg_try_advisory_lock(7, 8)",
        "select PG_ADVISORY_LOCK_SHARED(7)",
        "SELECT 1 WHERE pg_catalog.pg_try_advisory_lock_shared(7)",
        "CREATE TEMP TABLE sw_temp_a (x int)",
        "CREATE TEMPORARY TABLE sw_temp_b AS SELECT 1 AS x",
        "CREATE TEMP TABLE sw_temp_c (x int) ON COMMIT DELETE ROWS",
    };
    for (const std::string mode : {"transaction", "session"}) {
      CAPTURE(mode);
      ProxyOptions options;
      options.pool_mode = mode;
      options.pool_size = 1;
      ProxyProcess proxy(shared_cluster(), options);
      INFO("proxy log:\n" << proxy.log_tail());
      for (const std::string& sql : unpoolable) {
        CAPTURE(sql);
        for (bool extended : {false, true}) {
          CAPTURE(extended);
          {
            PgConn c = connect_or_throw(proxy.conninfo());
            PgResult r = extended ? c.exec_params(sql, {}) : c.exec(sql);
            CHECK_MESSAGE(r.ok(), r.describe());
            CHECK(c.value("SELECT 'still usable'") == "still usable");
          }
          // The client left: its server was reset (pool.server_reset_query) before the next one.
          PgConn next = connect_or_throw(proxy.conninfo());
          CHECK(next.value(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()") ==
                "0");
          CHECK(
              next.value(
                  "SELECT count(*) FROM pg_class WHERE relname LIKE 'sw_temp_%' AND relpersistence = 't'") ==
              "0");
        }
      }
      // What pools fine: transaction-level locks and ON COMMIT DROP temp tables.
      PgConn c = connect_or_throw(proxy.conninfo());
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK_OK(c.exec("SELECT pg_advisory_xact_lock(7)"));
      CHECK_OK(c.exec("CREATE TEMP TABLE sw_temp_d (x int) ON COMMIT DROP"));
      CHECK_OK(c.exec("INSERT INTO sw_temp_d VALUES (1)"));
      CHECK_OK(c.exec("COMMIT"));
    }
  }

  TEST_CASE("startup options cannot set a protected setting in any letter case") {
    PROXY_ONLY();
    ProxyProcess proxy(shared_cluster());
    for (const std::string options :
         {"-c session_replication_role=replica", "-c Session_Replication_Role=replica",
          "--SESSION_REPLICATION_ROLE=replica", "-c shardwire.fence=off", "-c ShardWire.x=1"}) {
      CAPTURE(options);
      ConnectResult c = connect(proxy.conninfo("app", "secret", "sslmode=disable options='" + options + "'"));
      CHECK_FALSE(c.ok);
      CHECK(c.sqlstate == "42501");
      CHECK(contains(c.error, "cannot set"));
    }
    ConnectResult fine =
        connect(proxy.conninfo("app", "secret", "sslmode=disable options='-c work_mem=8MB'"));
    REQUIRE_MESSAGE(fine.ok, fine.error);
    CHECK(fine.conn.value("SHOW session_replication_role") == "origin");
  }
}
