// Startup parameters and `options` (-c name=value, --name=value, backslash-escaped spaces) reach
// every server with PostgreSQL's own meaning: list settings stay lists, escaped spaces stay in the
// value. Runs through libpq and through psql with PGOPTIONS, in both pool modes.
#include <memory>

#include "it_test.h"

using namespace it;

namespace {

std::string options_conn(const std::string& options) { return "sslmode=disable options='" + options + "'"; }

// A client that logged in with its own application_name and DateStyle (as PGDATESTYLE sends it).
const char* kOwnDefaults = "sslmode=disable application_name=x options='-c DateStyle=Postgres,\\\\ MDY'";

// Runs `sql` on `c` while `holder` keeps the server `c` used last busy, so in transaction
// pooling `c` is served by another server (pool.size 2, one worker).
PgResult on_other_server(PgConn& c, PgConn& holder, const std::string& sql) {
  PgResult begin = holder.exec("BEGIN");
  if (!begin.ok()) return begin;
  PgResult r = c.exec(sql);
  PgResult commit = holder.exec("COMMIT");
  return commit.ok() ? r : commit;
}

// A proxy in pool mode `mode`; with `pool_size`, that many servers per pool and one worker (so
// that every client shares the same pools).
ProxyOptions in_mode(const char* mode, int pool_size = 0) {
  ProxyOptions o;
  o.pool_mode = mode;
  if (pool_size > 0) {
    o.pool_size = pool_size;
    o.workers = 1;
  }
  return o;
}

}  // namespace

TEST_SUITE("startup_options") {
  TEST_CASE("-c search_path=a,public is two schemas, as PostgreSQL reads it") {
    for (const char* mode : {"transaction", "session"}) {
      Target t(shared_cluster(), in_mode(mode));
      INFO("pool mode " << std::string(mode) << "; proxy log:\n" << t.log_tail());
      std::string schema = unique_name("sp");
      PgConn admin = t.connect_or_throw();
      REQUIRE_OK(admin.exec("CREATE SCHEMA IF NOT EXISTS " + schema));
      PgConn c = t.connect_or_throw(options_conn("-c search_path=" + schema + ",public"));
      for (int i = 0; i < 3; ++i) {  // each transaction may run on another server
        CHECK(c.value("SHOW search_path") == schema + ",public");
        CHECK(c.value("SELECT current_schemas(false)::text") == "{" + schema + ",public}");
      }
      REQUIRE_OK(admin.exec("DROP SCHEMA " + schema));
    }
  }

  TEST_CASE("escaped spaces, --name=value and -cname=value forms") {
    Target t(shared_cluster());
    INFO("proxy log:\n" << t.log_tail());
    PgConn c = t.connect_or_throw(
        options_conn("-c application_name=a\\\\ b\\\\ c --statement-timeout=4s -cwork_mem=3MB"));
    PgResult r = c.exec(
        "SELECT current_setting('application_name'), current_setting('statement_timeout'), "
        "current_setting('work_mem')");
    REQUIRE_MESSAGE(r.ok(), r.describe());
    CHECK(r.value(0, 0) == "a b c");
    CHECK(r.value(0, 1) == "4s");
    CHECK(r.value(0, 2) == "3MB");
  }

  TEST_CASE("a value with a quote and a backslash arrives unchanged") {
    Target t(shared_cluster());
    INFO("proxy log:\n" << t.log_tail());
    PgConn c = t.connect_or_throw("sslmode=disable application_name='it\\'s a\\\\b'");
    CHECK(c.value("SELECT current_setting('application_name')") == "it's a\\b");
  }

  // PostgreSQL reports each setting in its own spelling from the first ParameterStatus on.
  TEST_CASE("ParameterStatus at login is what the server reports: client_encoding=utf-8 is UTF8") {
    for (const char* mode : {"transaction", "session"}) {
      Target t(shared_cluster(), in_mode(mode));
      INFO("pool mode " << std::string(mode) << "; proxy log:\n" << t.log_tail());
      for (int i = 0; i < 2; ++i) {  // the pool's first login, then a server with parameters known
        PgConn c = t.connect_or_throw(
            "sslmode=disable client_encoding=utf-8 application_name=x options='-c DateStyle=iso,dmy -c "
            "IntervalStyle=SQL_STANDARD'");
        CHECK(c.parameter("client_encoding") == "UTF8");
        CHECK(c.parameter("DateStyle") == "ISO, DMY");
        CHECK(c.parameter("IntervalStyle") == "sql_standard");
        CHECK(c.parameter("application_name") == "x");
        CHECK(c.parameter("server_version").rfind("15", 0) == 0);
        CHECK(c.value("SHOW client_encoding") == "UTF8");
        CHECK(c.value("SELECT current_setting('DateStyle')") == "ISO, DMY");
      }
      PgConn plain = t.connect_or_throw();
      CHECK(plain.parameter("DateStyle") == "ISO, MDY");
      CHECK(plain.value("SHOW DateStyle") == "ISO, MDY");
    }
  }

  // The server's spelling of a client's startup settings is remembered by its pool: a login with
  // the same settings needs no server, so it does not wait while the only one is taken.
  TEST_CASE("a login with settings probed before needs no server") {
    for (const char* mode : {"transaction", "session"}) {
      ProxyOptions o = in_mode(mode, 1);
      o.query_wait_timeout = "3s";
      Target t(shared_cluster(), o);
      INFO("pool mode " << std::string(mode) << "; proxy log:\n" << t.log_tail());
      const std::string settings = "sslmode=disable client_encoding=utf-8 options='-c DateStyle=iso,dmy'";
      {
        PgConn first = t.connect_or_throw(settings);  // probes: the pool's one server runs the settings
        CHECK(first.parameter("DateStyle") == "ISO, DMY");
      }
      auto holder = std::make_unique<PgConn>(t.connect_or_throw());
      REQUIRE_OK(holder->exec("BEGIN"));
      REQUIRE_OK(holder->exec("SELECT 1"));  // the only server is the holder's now
      PgConn again = t.connect_or_throw(settings);
      CHECK(again.parameter("DateStyle") == "ISO, DMY");
      CHECK(again.parameter("client_encoding") == "UTF8");
      REQUIRE_OK(holder->exec("COMMIT"));
      holder.reset();  // session pooling: the server goes back with the holder's session
      CHECK(again.value("SHOW DateStyle") == "ISO, DMY");
      CHECK(again.value("SHOW client_encoding") == "UTF8");
    }
  }

  TEST_CASE("RESET ALL, RESET name and DISCARD ALL go back to the client's own startup values") {
    for (const char* mode : {"transaction", "session"}) {
      Target t(shared_cluster(), in_mode(mode, 2));
      INFO("pool mode " << std::string(mode) << "; proxy log:\n" << t.log_tail());
      PgConn c = t.connect_or_throw(kOwnDefaults);
      PgConn holder = t.connect_or_throw();
      const std::string show =
          "SELECT current_setting('application_name') || '|' || current_setting('DateStyle')";
      CHECK(c.value(show) == "x|Postgres, MDY");
      CHECK(c.parameter("application_name") == "x");
      CHECK(c.parameter("DateStyle") == "Postgres, MDY");

      REQUIRE_OK(c.exec("SET application_name = y; SET DateStyle = ISO"));
      CHECK(c.value(show) == "y|ISO, MDY");
      REQUIRE_OK(c.exec("RESET ALL"));
      CHECK(c.parameter("application_name") == "x");
      CHECK(c.parameter("DateStyle") == "Postgres, MDY");
      PgResult r = on_other_server(c, holder, show);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == "x|Postgres, MDY");
      CHECK(c.value(show) == "x|Postgres, MDY");

      REQUIRE_OK(c.exec("SET application_name = y; SET DateStyle = ISO"));
      REQUIRE_OK(c.exec("RESET DateStyle"));
      CHECK(c.value(show) == "y|Postgres, MDY");  // only the named setting goes back
      r = on_other_server(c, holder, show);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == "y|Postgres, MDY");

      // Inside a transaction the startup value is back for the statements that follow.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("SET DateStyle = SQL"));
      REQUIRE_OK(c.exec("RESET DateStyle"));
      CHECK(c.value("SHOW DateStyle") == "Postgres, MDY");
      REQUIRE_OK(c.exec("COMMIT"));

      // A RESET in a Query that fails outside a transaction is undone with it: the SETs stay.
      REQUIRE_OK(c.exec("SET DateStyle = ISO"));
      PgResult failed = c.exec("RESET ALL; SELECT 1/0");
      CHECK(failed.sqlstate() == "22012");
      CHECK(c.value("SHOW DateStyle") == "ISO, MDY");
      r = on_other_server(c, holder, "SHOW DateStyle");
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == "ISO, MDY");
      CHECK(c.value("SHOW DateStyle") == "ISO, MDY");

      REQUIRE_OK(c.exec("DISCARD ALL"));
      CHECK(c.value(show) == "x|Postgres, MDY");
      r = on_other_server(c, holder, show);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value(0, 0) == "x|Postgres, MDY");
      CHECK(c.parameter("application_name") == "x");
    }
  }

  TEST_CASE("psql with PGOPTIONS") {
    Target t(shared_cluster());
    CommandOptions env;
    env.env = {{"PGOPTIONS", "-c search_path=pg_catalog,public -c DateStyle=Postgres,\\ DMY"}};
    CommandResult r = run_command({psql(), "-X", "-At", "-d", t.conninfo("app", "secret", "sslmode=disable"),
                                   "-c", "SHOW search_path", "-c", "SHOW DateStyle"},
                                  "", 60s, env);
    INFO(r.describe() << "\nproxy log:\n" << t.log_tail());
    CHECK(r.exit_code == 0);
    CHECK(r.out == "pg_catalog,public\nPostgres, DMY\n");
  }
}  // TEST_SUITE
