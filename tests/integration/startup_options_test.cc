// Startup parameters and `options` (-c name=value, --name=value, backslash-escaped spaces) reach
// every server with PostgreSQL's own meaning: list settings stay lists, escaped spaces stay in the
// value. Runs through libpq and through psql with PGOPTIONS, in both pool modes.
#include "it_test.h"

using namespace it;

namespace {

std::string options_conn(const std::string& options) { return "sslmode=disable options='" + options + "'"; }

}  // namespace

TEST_SUITE("startup_options") {
  TEST_CASE("-c search_path=a,public is two schemas, as PostgreSQL reads it") {
    for (const char* mode : {"transaction", "session"}) {
      ProxyOptions o;
      o.pool_mode = mode;
      Target t(shared_cluster(), o);
      INFO("pool mode " << mode << "; proxy log:\n" << t.log_tail());
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
