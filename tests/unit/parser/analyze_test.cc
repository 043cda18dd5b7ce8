#include "parser/analyze.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

using sw::parser::analyze;
using sw::parser::analyze_uncached;
using sw::parser::cache_stats;
using sw::parser::kDefaultCacheEntries;
using sw::parser::QueryFacts;
using sw::parser::set_cache_capacity;
using sw::parser::StatementKind;

namespace {

// The facts of a string that must parse.
const QueryFacts& facts_of(const std::string& sql) {
  static thread_local std::shared_ptr<const QueryFacts> keep;
  auto result = analyze(sql);
  REQUIRE_MESSAGE(result.is_ok(), sql);
  keep = result.value();
  return *keep;
}

// The kind of a single-statement string.
StatementKind kind_of(const std::string& sql) {
  const QueryFacts& facts = facts_of(sql);
  REQUIRE_MESSAGE(facts.statements.size() == 1, sql);
  return facts.statements[0].kind;
}

}  // namespace

TEST_CASE("DML and queries") {
  CHECK(kind_of("SELECT 1") == StatementKind::Select);
  CHECK(kind_of("select * from orders where tenant_id = $1") == StatementKind::Select);
  CHECK(kind_of("VALUES (1), (2)") == StatementKind::Select);
  CHECK(kind_of("TABLE orders") == StatementKind::Select);
  CHECK(kind_of("SELECT 1 UNION ALL SELECT 2") == StatementKind::Select);
  CHECK(kind_of("WITH x AS (SELECT 1) SELECT * FROM x") == StatementKind::Select);
  CHECK(kind_of("SELECT * FROM orders FOR UPDATE") == StatementKind::Select);
  CHECK(kind_of("INSERT INTO orders (id) VALUES (1)") == StatementKind::Insert);
  CHECK(kind_of("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x") == StatementKind::Insert);
  CHECK(kind_of("UPDATE orders SET x = 1 WHERE id = 2") == StatementKind::Update);
  CHECK(kind_of("DELETE FROM orders WHERE id = 2") == StatementKind::Delete);
  CHECK(kind_of("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE") == StatementKind::Merge);
  // SELECT INTO creates a table.
  CHECK(kind_of("SELECT * INTO new_orders FROM orders") == StatementKind::Ddl);
}

TEST_CASE("transaction control") {
  CHECK(kind_of("BEGIN") == StatementKind::Begin);
  CHECK(kind_of("begin isolation level serializable") == StatementKind::Begin);
  CHECK(kind_of("START TRANSACTION READ ONLY") == StatementKind::Begin);
  CHECK(kind_of("COMMIT") == StatementKind::Commit);
  CHECK(kind_of("END") == StatementKind::Commit);
  CHECK(kind_of("COMMIT AND CHAIN") == StatementKind::Commit);
  CHECK(kind_of("ROLLBACK") == StatementKind::Rollback);
  CHECK(kind_of("ABORT") == StatementKind::Rollback);
  CHECK(kind_of("SAVEPOINT sp1") == StatementKind::Savepoint);
  CHECK(kind_of("RELEASE SAVEPOINT sp1") == StatementKind::ReleaseSavepoint);
  CHECK(kind_of("RELEASE sp1") == StatementKind::ReleaseSavepoint);
  CHECK(kind_of("ROLLBACK TO SAVEPOINT sp1") == StatementKind::RollbackToSavepoint);
  CHECK(kind_of("ROLLBACK TO sp1") == StatementKind::RollbackToSavepoint);
  CHECK(kind_of("PREPARE TRANSACTION 'gid1'") == StatementKind::PrepareTransaction);
  CHECK(kind_of("COMMIT PREPARED 'gid1'") == StatementKind::CommitPrepared);
  CHECK(kind_of("ROLLBACK PREPARED 'gid1'") == StatementKind::RollbackPrepared);
}

TEST_CASE("SET, SET LOCAL, RESET, RESET ALL") {
  auto one = [](const std::string& sql) { return facts_of(sql).statements.at(0); };
  CHECK(one("SET search_path TO app, public").kind == StatementKind::Set);
  CHECK(one("SET search_path TO app, public").set_name == "search_path");
  CHECK(one("SET SESSION statement_timeout = 5000").kind == StatementKind::Set);
  CHECK(one("set Application_Name = 'x'").set_name == "application_name");
  CHECK(one("SET \"DateStyle\" TO ISO").set_name == "datestyle");
  CHECK(one("SET TIME ZONE 'UTC'").set_name == "timezone");
  CHECK(one("SET work_mem TO DEFAULT").kind == StatementKind::Set);
  CHECK(one("SET work_mem FROM CURRENT").kind == StatementKind::Set);
  CHECK(one("SET ROLE app").set_name == "role");
  CHECK(one("SET SESSION AUTHORIZATION app").set_name == "session_authorization");

  CHECK(one("SET LOCAL statement_timeout = 0").kind == StatementKind::SetLocal);
  CHECK(one("SET LOCAL statement_timeout = 0").set_name == "statement_timeout");
  CHECK(one("SET LOCAL work_mem TO DEFAULT").kind == StatementKind::SetLocal);

  CHECK(one("RESET search_path").kind == StatementKind::Reset);
  CHECK(one("RESET search_path").set_name == "search_path");
  CHECK(one("RESET ROLE").set_name == "role");
  CHECK(one("RESET ALL").kind == StatementKind::ResetAll);
  CHECK(one("RESET ALL").set_name.empty());

  // Transaction-scoped forms are not session state; session characteristics are.
  CHECK(one("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").kind == StatementKind::Utility);
  CHECK(one("SET TRANSACTION SNAPSHOT '00000003-0000001B-1'").kind == StatementKind::Utility);
  auto chars = one("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ");
  CHECK(chars.kind == StatementKind::Set);
  CHECK(chars.set_name == "session_characteristics");
}

TEST_CASE("DISCARD, LISTEN/NOTIFY, COPY, PREPARE/EXECUTE/DEALLOCATE") {
  CHECK(kind_of("DISCARD ALL") == StatementKind::DiscardAll);
  CHECK(kind_of("DISCARD PLANS") == StatementKind::Discard);
  CHECK(kind_of("DISCARD SEQUENCES") == StatementKind::Discard);
  CHECK(kind_of("DISCARD TEMP") == StatementKind::Discard);
  CHECK(kind_of("LISTEN chan") == StatementKind::Listen);
  CHECK(kind_of("UNLISTEN *") == StatementKind::Unlisten);
  CHECK(kind_of("NOTIFY chan, 'payload'") == StatementKind::Notify);
  CHECK(kind_of("COPY orders FROM STDIN") == StatementKind::Copy);
  CHECK(kind_of("COPY (SELECT 1) TO STDOUT WITH (FORMAT csv)") == StatementKind::Copy);
  CHECK(kind_of("PREPARE q(int) AS SELECT $1") == StatementKind::Prepare);
  CHECK(kind_of("EXECUTE q(1)") == StatementKind::Execute);
  CHECK(kind_of("DEALLOCATE q") == StatementKind::Deallocate);
  CHECK(kind_of("DEALLOCATE ALL") == StatementKind::Deallocate);
}

TEST_CASE("DDL and utility") {
  CHECK(kind_of("CREATE TABLE t (id bigint primary key)") == StatementKind::Ddl);
  CHECK(kind_of("ALTER TABLE t ADD COLUMN x int") == StatementKind::Ddl);
  CHECK(kind_of("DROP TABLE t") == StatementKind::Ddl);
  CHECK(kind_of("CREATE INDEX ON t (x)") == StatementKind::Ddl);
  CHECK(kind_of("CREATE VIEW v AS SELECT 1") == StatementKind::Ddl);
  CHECK(kind_of("CREATE TABLE t2 AS SELECT * FROM t") == StatementKind::Ddl);
  CHECK(kind_of("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'") == StatementKind::Ddl);
  CHECK(kind_of("ALTER TABLE t RENAME TO u") == StatementKind::Ddl);
  CHECK(kind_of("COMMENT ON TABLE t IS 'x'") == StatementKind::Ddl);
  CHECK(kind_of("GRANT SELECT ON t TO app") == StatementKind::Ddl);
  CHECK(kind_of("CREATE SCHEMA s") == StatementKind::Ddl);
  CHECK(kind_of("CREATE EXTENSION pgcrypto") == StatementKind::Ddl);
  CHECK(kind_of("TRUNCATE orders") == StatementKind::Ddl);

  CHECK(kind_of("SHOW search_path") == StatementKind::Utility);
  CHECK(kind_of("EXPLAIN SELECT 1") == StatementKind::Utility);
  CHECK(kind_of("VACUUM orders") == StatementKind::Utility);
  CHECK(kind_of("LOCK TABLE orders") == StatementKind::Utility);
  CHECK(kind_of("DO $$ BEGIN END $$") == StatementKind::Utility);
  CHECK(kind_of("CALL p()") == StatementKind::Utility);
  CHECK(kind_of("CHECKPOINT") == StatementKind::Utility);
}

TEST_CASE("the DDL node names libpg_query emits are the ones classify knows") {
  for (const char* sql : {"ALTER DOMAIN d SET NOT NULL",
                          "GRANT app TO bob",
                          "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO app",
                          "CLUSTER orders",
                          "CREATE TYPE t AS (a int)",
                          "CREATE AGGREGATE a (int) (sfunc = f, stype = int)",
                          "CREATE RULE r AS ON INSERT TO t DO NOTHING",
                          "CREATE DOMAIN d AS int",
                          "CREATE DATABASE x",
                          "DROP DATABASE x",
                          "CREATE MATERIALIZED VIEW mv AS SELECT 1",
                          "CREATE SEQUENCE s",
                          "ALTER SEQUENCE s RESTART",
                          "CREATE TRIGGER tr BEFORE INSERT ON t "
                          "FOR EACH ROW EXECUTE FUNCTION f()",
                          "CREATE ROLE r",
                          "ALTER ROLE r LOGIN",
                          "DROP ROLE r",
                          "ALTER DATABASE x SET work_mem = '1MB'",
                          "ALTER ROLE r SET work_mem = '1MB'",
                          "CREATE TABLESPACE ts LOCATION '/tmp'",
                          "ALTER TABLE t SET SCHEMA s",
                          "ALTER TABLE t OWNER TO r",
                          "ALTER TYPE e ADD VALUE 'x'",
                          "CREATE TYPE e AS ENUM ('a')",
                          "CREATE TYPE rg AS RANGE (subtype = int)",
                          "DROP OWNED BY r",
                          "REASSIGN OWNED BY r TO s",
                          "CREATE SERVER sv FOREIGN DATA WRAPPER w",
                          "CREATE FOREIGN TABLE ft (a int) SERVER sv",
                          "ALTER EXTENSION e UPDATE",
                          "CREATE EVENT TRIGGER et ON ddl_command_start EXECUTE FUNCTION f()",
                          "REFRESH MATERIALIZED VIEW mv",
                          "ALTER SYSTEM SET work_mem = '1MB'",
                          "CREATE POLICY p ON t USING (true)",
                          "CREATE PUBLICATION p FOR TABLE t",
                          "ALTER PUBLICATION p ADD TABLE u",
                          "CREATE STATISTICS st ON a, b FROM t",
                          "SECURITY LABEL ON TABLE t IS 'x'",
                          "CREATE CAST (int AS text) WITH INOUT",
                          "ALTER FUNCTION f() STABLE",
                          "ALTER TABLE t RENAME COLUMN a TO b"}) {
    CHECK_MESSAGE(kind_of(sql) == StatementKind::Ddl, sql);
  }
}

TEST_CASE("multi-statement strings keep each statement's exact text") {
  const QueryFacts& facts =
      facts_of("BEGIN; SET LOCAL a.b = 'x;y'; INSERT INTO t VALUES ('a;b');\n  COMMIT;");
  REQUIRE(facts.statements.size() == 4);
  CHECK(facts.statements[0].kind == StatementKind::Begin);
  CHECK(facts.statements[0].text == "BEGIN");
  CHECK(facts.statements[1].kind == StatementKind::SetLocal);
  CHECK(facts.statements[1].set_name == "a.b");
  CHECK(facts.statements[1].text == "SET LOCAL a.b = 'x;y'");
  CHECK(facts.statements[2].kind == StatementKind::Insert);
  CHECK(facts.statements[2].text == "INSERT INTO t VALUES ('a;b')");
  CHECK(facts.statements[3].kind == StatementKind::Commit);
  CHECK(facts.statements[3].text == "COMMIT");

  const QueryFacts& dollar = facts_of("SELECT $x$;$x$; SELECT 2 -- trailing\n");
  REQUIRE(dollar.statements.size() == 2);
  CHECK(dollar.statements[0].text == "SELECT $x$;$x$");
  CHECK(dollar.statements[1].text == "SELECT 2 -- trailing");

  // Empty statements between semicolons are not statements.
  const QueryFacts& sparse = facts_of(";;SELECT 1;;; SELECT 2;");
  REQUIRE(sparse.statements.size() == 2);
  CHECK(sparse.statements[0].text == "SELECT 1");
  CHECK(sparse.statements[1].text == "SELECT 2");

  // Offsets are bytes: multi-byte characters before a statement do not shift it.
  const QueryFacts& utf8 = facts_of("SELECT 'ÿ€😀'; RESET ALL");
  REQUIRE(utf8.statements.size() == 2);
  CHECK(utf8.statements[0].text == "SELECT 'ÿ€😀'");
  CHECK(utf8.statements[1].text == "RESET ALL");
  CHECK(utf8.statements[1].kind == StatementKind::ResetAll);
}

TEST_CASE("empty and comment-only strings give one Empty statement") {
  for (const char* sql : {"", "   ", "-- just a comment", "/* block */", ";", " ; ; ", "/* a */ -- b\n"}) {
    const QueryFacts& facts = facts_of(sql);
    REQUIRE_MESSAGE(facts.statements.size() == 1, sql);
    CHECK(facts.statements[0].kind == StatementKind::Empty);
    CHECK(facts.statements[0].text.empty());
  }
}

TEST_CASE("syntax errors are client faults with SQLSTATE 42601") {
  auto result = analyze("SELEC 1");
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().fault == sw::Fault::Client);
  CHECK(result.status().sqlstate == "42601");
  CHECK(result.status().message.find("syntax error") != std::string::npos);

  // An error anywhere fails the whole string, as PostgreSQL does.
  auto multi = analyze("SELECT 1; SELECT FROM WHERE;");
  REQUIRE_FALSE(multi.is_ok());
  CHECK(multi.status().sqlstate == "42601");

  auto unterminated = analyze("SELECT 'abc");
  REQUIRE_FALSE(unterminated.is_ok());
  CHECK(unterminated.status().sqlstate == "42601");

  auto nul = analyze(std::string_view("SELECT 1\0", 9));
  REQUIRE_FALSE(nul.is_ok());
  CHECK(nul.status().fault == sw::Fault::Client);

  // Errors are not cached: asking again gives the error again.
  CHECK_FALSE(analyze("SELEC 1").is_ok());
}

TEST_CASE("the cache returns the same pointer for the same text") {
  auto first = analyze("SELECT * FROM cache_probe WHERE id = 1");
  auto second = analyze("SELECT * FROM cache_probe WHERE id = 1");
  REQUIRE(first.is_ok());
  REQUIRE(second.is_ok());
  CHECK(first.value().get() == second.value().get());

  // A different text (even by one space) is a different entry.
  auto other = analyze("SELECT * FROM cache_probe WHERE id =  1");
  REQUIRE(other.is_ok());
  CHECK(other.value().get() != first.value().get());

  // analyze_uncached always parses anew.
  auto fresh = analyze_uncached("SELECT * FROM cache_probe WHERE id = 1");
  REQUIRE(fresh.is_ok());
  CHECK(fresh.value().get() != first.value().get());

  // The cache is per thread: another thread gets its own entry.
  const QueryFacts* from_thread = nullptr;
  std::thread([&] {
    auto r = analyze("SELECT * FROM cache_probe WHERE id = 1");
    if (r.is_ok()) from_thread = r.value().get();
  }).join();
  CHECK(from_thread != nullptr);
  CHECK(from_thread != first.value().get());
}

TEST_CASE("the cache evicts the least recently used entry past 1024 entries") {
  auto pinned = analyze("SELECT 'lru-pinned'");
  REQUIRE(pinned.is_ok());
  auto evicted = analyze("SELECT 'lru-evicted'");
  REQUIRE(evicted.is_ok());
  for (int i = 0; i < 1100; ++i) {
    if (i % 100 == 0) CHECK(analyze("SELECT 'lru-pinned'").value().get() == pinned.value().get());
    REQUIRE(analyze("SELECT " + std::to_string(i)).is_ok());
  }
  CHECK(analyze("SELECT 'lru-pinned'").value().get() == pinned.value().get());
  // Evicted, so parsed anew; the old pointer is still valid for its holder.
  CHECK(analyze("SELECT 'lru-evicted'").value().get() != evicted.value().get());
  CHECK(evicted.value()->statements.at(0).kind == StatementKind::Select);
}

TEST_CASE("long texts are analyzed but not cached") {
  std::string long_sql = "SELECT 1 /*" + std::string(10000, 'x') + "*/";
  auto a = analyze(long_sql);
  auto b = analyze(long_sql);
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  CHECK(a.value().get() != b.value().get());
  CHECK(a.value()->statements.at(0).kind == StatementKind::Select);
}

TEST_CASE("very deep left-associative chains do not exhaust the stack") {
  // ~400 KB; libpg_query needs ~25 MB of stack to write this tree out.
  std::string chain = "SELECT 1";
  for (int i = 0; i < 200000; ++i) chain += "+1";
  auto result = analyze(chain);
  REQUIRE(result.is_ok());
  CHECK(result.value()->statements.at(0).kind == StatementKind::Select);

  std::string unions = "SELECT 1 INTO t";
  for (int i = 0; i < 20000; ++i) unions += " UNION SELECT 1";
  auto into = analyze(unions);
  REQUIRE(into.is_ok());
  CHECK(into.value()->statements.at(0).kind == StatementKind::Ddl);
}

TEST_CASE("statements past the analysis limit are refused, not parsed") {
  std::string huge = "SELECT 1 /*" + std::string(9u << 20, 'x') + "*/";
  auto result = analyze(huge);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().sqlstate == "54000");
  CHECK(result.status().fault == sw::Fault::Client);
}

TEST_CASE("analyze: set_config() names, also from the normalized cache") {
  using sw::parser::ValueKind;
  const QueryFacts& first = facts_of("SELECT set_config('app.tenant', '5', false)");
  REQUIRE(first.statements[0].set_config_calls.size() == 1);
  CHECK(first.statements[0].set_config_calls[0].name.kind == ValueKind::String);
  CHECK(first.statements[0].set_config_calls[0].name.text == "app.tenant");
  // Same normalized text: the cached facts must carry this text's own name.
  const QueryFacts& second = facts_of("SELECT set_config('session_replication_role', 'replica', false)");
  REQUIRE(second.statements[0].set_config_calls.size() == 1);
  CHECK(second.statements[0].set_config_calls[0].name.text == "session_replication_role");

  const QueryFacts& nested =
      facts_of("SELECT x FROM t WHERE id = (SELECT length(pg_catalog.set_config(E'a.b', 'v', true)))");
  REQUIRE(nested.statements[0].set_config_calls.size() == 1);
  CHECK(nested.statements[0].set_config_calls[0].name.text == "a.b");

  const QueryFacts& computed = facts_of("SELECT set_config('a' || 'b', 'v', false)");
  REQUIRE(computed.statements[0].set_config_calls.size() == 1);
  CHECK(computed.statements[0].set_config_calls[0].name.kind == ValueKind::Other);

  CHECK(
      facts_of("SELECT current_setting('session_replication_role')").statements[0].set_config_calls.empty());
}

TEST_CASE("analyze: session advisory locks and temp tables that outlive the transaction") {
  auto first = [](const std::string& sql) { return facts_of(sql).statements.at(0); };
  CHECK(first("SELECT pg_advisory_lock(1)").session_advisory_lock);
  CHECK(first("SELECT pg_catalog.pg_try_advisory_lock_shared(1, 2)").session_advisory_lock);
  CHECK(first("SELECT x FROM t WHERE pg_try_advisory_lock(x)").session_advisory_lock);
  CHECK_FALSE(first("SELECT pg_advisory_xact_lock(1)").session_advisory_lock);
  CHECK_FALSE(first("SELECT pg_advisory_unlock(1)").session_advisory_lock);

  using sw::parser::SessionObject;
  auto object = [&](const std::string& sql) { return first(sql).session_object; };
  CHECK(object("CREATE TEMP TABLE a (x int)") == SessionObject::TempTable);
  CHECK(object("CREATE TEMPORARY TABLE a (x int) ON COMMIT PRESERVE ROWS") == SessionObject::TempTable);
  CHECK(object("CREATE TEMP TABLE a (x int) ON COMMIT DELETE ROWS") == SessionObject::TempTable);
  CHECK(object("CREATE TEMP TABLE a AS SELECT 1") == SessionObject::TempTable);
  CHECK(object("CREATE TABLE pg_temp.a (x int)") == SessionObject::TempTable);
  CHECK(object("SELECT 1 AS x INTO TEMP a") == SessionObject::TempTable);
  CHECK(object("SELECT 1 AS x INTO TEMPORARY TABLE a UNION SELECT 2") == SessionObject::TempTable);
  CHECK(object("CREATE TEMP TABLE a (x int) ON COMMIT DROP") == SessionObject::None);
  CHECK(object("CREATE TEMP TABLE a ON COMMIT DROP AS SELECT 1") == SessionObject::None);
  CHECK(object("CREATE TABLE a (x int)") == SessionObject::None);
  CHECK(object("CREATE UNLOGGED TABLE a (x int)") == SessionObject::None);
  CHECK(object("SELECT 1 AS x INTO a") == SessionObject::None);
  CHECK(object("CREATE TEMP VIEW v AS SELECT 1") == SessionObject::TempView);
  CHECK(object("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1") == SessionObject::TempView);
  CHECK(object("CREATE VIEW pg_temp.v AS SELECT 1") == SessionObject::TempView);
  CHECK(object("CREATE VIEW v AS SELECT 1") == SessionObject::None);
  CHECK(object("CREATE TEMP SEQUENCE s") == SessionObject::TempSequence);
  CHECK(object("CREATE SEQUENCE s") == SessionObject::None);
  CHECK(object("CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'") ==
        SessionObject::TempRoutine);
  CHECK(object("CREATE PROCEDURE pg_temp.p() LANGUAGE sql AS 'SELECT 1'") == SessionObject::TempRoutine);
  CHECK(object("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'") == SessionObject::None);
  CHECK(object("CREATE TYPE pg_temp.t AS (a int)") == SessionObject::TempType);
  CHECK(object("CREATE TYPE pg_temp.e AS ENUM ('a')") == SessionObject::TempType);
  CHECK(object("CREATE TYPE pg_temp.r AS RANGE (subtype = int4)") == SessionObject::TempType);
  CHECK(object("CREATE DOMAIN pg_temp.d AS int") == SessionObject::TempType);
  CHECK(object("CREATE TYPE t AS (a int)") == SessionObject::None);
  CHECK(object("DECLARE c CURSOR WITH HOLD FOR SELECT 1") == SessionObject::HoldCursor);
  CHECK(object("DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT 1") == SessionObject::HoldCursor);
  CHECK(object("DECLARE c CURSOR FOR SELECT 1") == SessionObject::None);
  CHECK(object("DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1") == SessionObject::None);
  CHECK(object("LOAD 'auto_explain'") == SessionObject::Library);
  CHECK(object("LOAD '$libdir/plugins/auto_explain'") == SessionObject::Library);
}

TEST_CASE("analyze: set_config() arguments and savepoint names") {
  using sw::parser::ValueKind;
  auto first = [](const std::string& sql) { return facts_of(sql).statements.at(0); };
  auto call = first("SELECT set_config('search_path', 'a, b', false)").set_config_calls.at(0);
  CHECK(call.value.kind == ValueKind::String);
  CHECK(call.value.text == "a, b");
  CHECK(call.is_local.kind == ValueKind::Bool);
  CHECK(call.is_local.text == "false");
  // The same normalized text: each text's own values.
  call = first("SELECT set_config('search_path', 'c', true)").set_config_calls.at(0);
  CHECK(call.value.text == "c");
  CHECK(call.is_local.text == "true");
  call = first("SELECT set_config('role', current_user, false)").set_config_calls.at(0);
  CHECK(call.value.kind != ValueKind::String);
  call = first("SELECT set_config('x.y', NULL, 'off')").set_config_calls.at(0);
  CHECK(call.value.kind == ValueKind::Null);
  CHECK(call.is_local.kind == ValueKind::String);
  CHECK(first("SAVEPOINT Sp1").savepoint_name == "sp1");
  CHECK(first("RELEASE SAVEPOINT \"Sp1\"").savepoint_name == "Sp1");
  CHECK(first("RELEASE sp2").savepoint_name == "sp2");
  CHECK(first("ROLLBACK TO SAVEPOINT sp3").savepoint_name == "sp3");
  CHECK(first("ROLLBACK TO sp4").savepoint_name == "sp4");
}

// The caches hold as many statement shapes as set_cache_capacity() says, least recently used out
// first; 0 caches nothing. Restores the default for the tests that follow on this thread.
TEST_CASE("cache capacity: least recently used shapes are evicted, 0 caches nothing") {
  auto exact_hits_of = [](const std::string& sql) {
    const uint64_t before = cache_stats().exact_hits;
    REQUIRE(analyze(sql).is_ok());
    return cache_stats().exact_hits - before;
  };
  const std::string a = "SELECT a FROM capacity_t WHERE k = $1";
  const std::string b = "SELECT b FROM capacity_t WHERE k = $1";
  const std::string c = "SELECT c FROM capacity_t WHERE k = $1";
  set_cache_capacity(2);
  CHECK(exact_hits_of(a) == 0);
  CHECK(exact_hits_of(b) == 0);
  CHECK(exact_hits_of(a) == 1);  // a is now the most recently used
  CHECK(exact_hits_of(c) == 0);  // evicts b
  CHECK(exact_hits_of(a) == 1);
  CHECK(exact_hits_of(b) == 0);
  set_cache_capacity(0);
  CHECK(exact_hits_of(a) == 0);
  CHECK(exact_hits_of(a) == 0);
  set_cache_capacity(kDefaultCacheEntries);
  CHECK(exact_hits_of(a) == 0);
  CHECK(exact_hits_of(a) == 1);
}
