// Session pooling with two shards (real PostgreSQL, libpq): the session keeps one server per
// shard it touched, and statements that reset session state reach every one of them, not only
// the server that ran them. DEALLOCATE ALL / DEALLOCATE name / DISCARD ALL drop the client's
// prepared statements on each server (a statement parsed again with another text runs that text
// on every shard, no 42P05); RESET name / RESET ALL bring every server back to the client's
// startup values; DISCARD TEMP and DISCARD ALL drop temporary tables and session locks there.
#include <thread>
#include <vector>

#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

ShardedOptions two_shards_session_pooling() {
  ShardedOptions options;
  options.shards = 2;
  options.proxy.pool_mode = "session";
  return options;
}
std::string insert(int64_t tenant, const std::string& note) {
  return "INSERT INTO orders (tenant_id, note) VALUES (" + k(tenant) + ", '" + note + "')";
}

// A setting as the session's server on the tenant's shard has it.
std::string setting_on(PgConn& c, int64_t tenant, const std::string& name) {
  return c.value("SELECT current_setting('" + name + "') FROM orders WHERE tenant_id = " + k(tenant) +
                 " LIMIT 1");
}

// Polls a direct query on a shard until it answers `want` (or 5 s passed); returns the last answer.
std::string poll_value(const ShardedFixture& f, int shard, const std::string& sql, const std::string& want) {
  PgConn direct = f.setup.shard(shard);
  std::string got;
  for (int i = 0; i < 50; ++i) {
    got = direct.value(sql);
    if (got == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return got;
}

const char* const kNoteOf = "SELECT note FROM orders WHERE tenant_id = $1";
const char* const kUpperNoteOf = "SELECT upper(note) FROM orders WHERE tenant_id = $1";

// Statement "s1" prepared with `sql` on the active server, then bound for `a` (shard 0) and `b`
// (shard 1): each answer is checked against `want_a` / `want_b`.
void prepare_and_bind_both(PgConn& c, const std::string& sql, int64_t a, int64_t b, const std::string& want_a,
                           const std::string& want_b) {
  PgResult prepared = c.prepare("s1", sql);
  INFO(prepared.describe());
  REQUIRE_OK(prepared);
  PgResult on_a = c.exec_prepared("s1", {k(a)});
  INFO(on_a.describe());
  REQUIRE_OK(on_a);
  CHECK(on_a.value() == want_a);
  PgResult on_b = c.exec_prepared("s1", {k(b)});
  INFO(on_b.describe());
  REQUIRE_OK(on_b);
  CHECK(on_b.value() == want_b);
}

}  // namespace

TEST_SUITE("session_legs") {
  TEST_CASE("DEALLOCATE ALL, DEALLOCATE name and DISCARD ALL drop the client's statements on every shard") {
    PROXY_ONLY();
    ShardedFixture f(two_shards_session_pooling());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(a, "note a")));
    REQUIRE_OK(c.exec(insert(b, "note b")));

    // A driver's sequence (psycopg, asyncpg): "s1" on both shards, DEALLOCATE ALL, "s1" parsed
    // again with another text on the server that ran the DEALLOCATE, bound on both shards.
    prepare_and_bind_both(c, kNoteOf, a, b, "note a", "note b");
    REQUIRE_OK(c.exec("DEALLOCATE ALL"));
    prepare_and_bind_both(c, kUpperNoteOf, a, b, "NOTE A", "NOTE B");

    // The same, the Parse on the other shard's server this time (it held "s1": 42P05 before).
    REQUIRE_OK(c.exec("deallocate all"));
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(a)) == "note a");
    prepare_and_bind_both(c, kNoteOf, a, b, "note a", "note b");

    // DEALLOCATE of one name, in any letter case (unquoted names fold to lower case).
    REQUIRE_OK(c.exec("DEALLOCATE PREPARE S1"));
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(b)) == "note b");
    prepare_and_bind_both(c, kUpperNoteOf, a, b, "NOTE A", "NOTE B");
    PgResult gone = c.exec("DEALLOCATE s1");
    REQUIRE_OK(gone);
    PgResult unknown = c.exec_prepared("s1", {k(a)});
    CHECK(unknown.sqlstate() == "26000");  // not parsed again from the proxy's memory

    // DISCARD ALL drops them too.
    prepare_and_bind_both(c, kNoteOf, a, b, "note a", "note b");
    REQUIRE_OK(c.exec("DISCARD ALL"));
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(a)) == "note a");
    prepare_and_bind_both(c, kUpperNoteOf, a, b, "NOTE A", "NOTE B");
    // DEALLOCATE of a statement prepared on the other shard's server only (SQL level, protocol
    // level) runs there, not on the active server, which would answer 26000.
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(a)) == "note a");
    REQUIRE_OK(c.exec("PREPARE only_on_a AS SELECT 1"));
    REQUIRE_OK(c.prepare("only_on_a_too", "SELECT 2"));
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(b)) == "note b");
    PgResult sql_level = c.exec("DEALLOCATE only_on_a");
    INFO(sql_level.describe());
    CHECK_OK(sql_level);
    CHECK_OK(c.exec("DEALLOCATE only_on_a_too"));
    // No server of the session keeps a statement the client deallocated.
    for (int shard : {0, 1}) {
      CAPTURE(shard);
      CHECK(c.value("SELECT (SELECT count(*) FROM pg_prepared_statements) FROM orders WHERE tenant_id = " +
                    k(shard == 0 ? a : b)) == "1");
    }
  }

  TEST_CASE("RESET name and RESET ALL bring every shard's server back to the client's startup values") {
    PROXY_ONLY();
    ShardedFixture f(two_shards_session_pooling());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client("sslmode=disable options='-c work_mem=5MB'");
    REQUIRE_OK(c.exec(insert(a, "a")));
    REQUIRE_OK(c.exec(insert(b, "b")));
    CHECK(setting_on(c, a, "work_mem") == "5MB");
    CHECK(setting_on(c, b, "work_mem") == "5MB");

    REQUIRE_OK(c.exec("SET work_mem = '7MB'"));
    CHECK(setting_on(c, a, "work_mem") == "7MB");
    CHECK(setting_on(c, b, "work_mem") == "7MB");
    REQUIRE_OK(c.exec("reset WORK_MEM"));  // runs on shard 1's server, the active one
    CHECK(setting_on(c, a, "work_mem") == "5MB");
    CHECK(setting_on(c, b, "work_mem") == "5MB");

    REQUIRE_OK(c.exec("SET work_mem = '7MB'"));
    REQUIRE_OK(c.exec("SET statement_timeout = '3s'"));
    CHECK(setting_on(c, b, "statement_timeout") == "3s");
    REQUIRE_OK(c.exec("RESET ALL"));
    for (int64_t tenant : {a, b, a}) {
      CAPTURE(tenant);
      CHECK(setting_on(c, tenant, "work_mem") == "5MB");
      CHECK(setting_on(c, tenant, "statement_timeout") == "0");
    }

    // In a transaction on both shards: the RESET reaches both legs and stays after COMMIT.
    REQUIRE_OK(c.exec("SET work_mem = '9MB'"));
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK(setting_on(c, a, "work_mem") == "9MB");
    CHECK(setting_on(c, b, "work_mem") == "9MB");
    REQUIRE_OK(c.exec("RESET work_mem"));
    CHECK(setting_on(c, a, "work_mem") == "5MB");
    CHECK(setting_on(c, b, "work_mem") == "5MB");
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(setting_on(c, b, "work_mem") == "5MB");
    CHECK(setting_on(c, a, "work_mem") == "5MB");

    // A SET or RESET in a transaction the other shard's server did not join reaches that server
    // once the transaction committed (and not when it rolled back).
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK(setting_on(c, a, "work_mem") == "5MB");
    REQUIRE_OK(c.exec("SET work_mem = '11MB'"));
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(setting_on(c, b, "work_mem") == "11MB");
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK(setting_on(c, b, "work_mem") == "11MB");
    REQUIRE_OK(c.exec("RESET work_mem"));
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(setting_on(c, a, "work_mem") == "11MB");
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("RESET work_mem"));
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(setting_on(c, b, "work_mem") == "5MB");

    // A SET in a Query of several statements reaches the other shard's server too.
    REQUIRE_OK(c.exec("SET work_mem = '13MB'; SELECT 1"));
    CHECK(setting_on(c, a, "work_mem") == "13MB");
    REQUIRE_OK(c.exec("SELECT 1; RESET work_mem"));
    CHECK(setting_on(c, b, "work_mem") == "5MB");

    // A setting the proxy protects is refused, and reaches no server of the session either.
    PgResult refused = c.exec("SET session_replication_role = replica");
    CHECK(refused.sqlstate() == "42501");
    for (int64_t tenant : {a, b}) {
      CAPTURE(tenant);
      CHECK(setting_on(c, tenant, "session_replication_role") == "origin");
    }
  }

  TEST_CASE("DISCARD TEMP and DISCARD ALL reach the session's server on the other shard") {
    PROXY_ONLY();
    ShardedFixture f(two_shards_session_pooling());
    const int64_t a = tenant_on(0, 2), b = tenant_on(1, 2);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(insert(a, "a")));
    REQUIRE_OK(c.exec(insert(b, "b")));
    // A statement on a table the directory does not know runs on the default shard (0).
    REQUIRE_OK(c.exec("CREATE TEMP TABLE scratch (x int)"));
    const std::string temp_tables =
        "SELECT count(*) FROM pg_class WHERE relname = 'scratch' AND relpersistence = 't'";
    REQUIRE(f.setup.shard(0).value(temp_tables) == "1");
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(b)) == "b");
    REQUIRE_OK(c.exec("DISCARD TEMP"));  // on shard 1's server, the active one
    CHECK(poll_value(f, 0, temp_tables, "0") == "0");

    const std::string pid_b = c.value("SELECT pg_backend_pid() FROM orders WHERE tenant_id = " + k(b));
    CHECK(c.value("SELECT pg_advisory_lock(7) FROM orders WHERE tenant_id = " + k(b)).empty());
    const std::string locks = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + pid_b;
    REQUIRE(f.setup.shard(1).value(locks) == "1");
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(a)) == "a");
    REQUIRE_OK(c.exec("DISCARD ALL"));
    CHECK(poll_value(f, 1, locks, "0") == "0");
    CHECK(c.value("SELECT note FROM orders WHERE tenant_id = " + k(b)) == "b");
  }
}
