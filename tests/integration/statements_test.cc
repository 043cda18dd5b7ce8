// Prepared statements through shardwire's statement registry: a Parse re-planned after DDL or a
// search_path change, parameter types left to the server, a Parse before the transaction's
// server, the limit of statements a server holds, Parses skipped after an error, LISTEN in a
// Flush-ended batch, the unnamed statement after its server went to another client, a Parse
// after DDL sent through the proxy.
#include <array>
#include <cstring>
#include <optional>

#include "it_test.h"
#include "pipeline_results.h"
#include "pool_modes.h"
#include "wire/messages.h"

using namespace it;

TEST_SUITE("statements") {
  TEST_CASE("a Parse after a table changed type plans anew") {
    ProxyOptions options;
    options.pool_size = 1;  // every client on the server that holds the old plan
    for_each_pool_mode(options, [&](Target& t) {
      const std::string table = unique_name("replanned");
      PgConn admin = shared_cluster().admin("app");
      REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (v int); INSERT INTO " + table + " VALUES (7)"));
      const std::string select = "SELECT v FROM " + table;
      {
        PgConn before = t.connect_or_throw();
        REQUIRE_OK(before.prepare("before_change", select));
        CHECK(before.exec_prepared("before_change", {}).value(0, 0) == "7");
        REQUIRE_OK(admin.exec("DROP TABLE " + table + "; CREATE TABLE " + table + " (v text); INSERT INTO " +
                              table + " VALUES ('seven')"));
        CHECK(before.exec_prepared("before_change", {}).sqlstate() == "0A000");
      }
      for (int client = 0; client < 2; ++client) {
        CAPTURE(client);
        PgConn after = t.connect_or_throw();
        REQUIRE_OK(after.prepare("after_change", select));
        PgResult r = after.exec_prepared("after_change", {});
        CHECK_MESSAGE(r.ok(), r.describe());
        if (r.ok()) CHECK(r.value(0, 0) == "seven");
      }
      admin.exec("DROP TABLE " + table);
      // A type a statement's parameter was resolved to, dropped and created again (psycopg's
      // test_change_type): XX000 "cache lookup failed for type" for the old statement only.
      const std::string type = unique_name("replanned_enum");
      const std::string cast = "SELECT $1::" + type + "::text";
      REQUIRE_OK(admin.exec("CREATE TYPE " + type + " AS ENUM ('a', 'b')"));
      PgConn before = t.connect_or_throw();
      REQUIRE_OK(before.prepare("typed", cast));
      CHECK(before.exec_prepared("typed", {"a"}).value(0, 0) == "a");
      REQUIRE_OK(admin.exec("DROP TYPE " + type + "; CREATE TYPE " + type + " AS ENUM ('a', 'b')"));
      CHECK(before.exec_prepared("typed", {"b"}).sqlstate() == "XX000");
      before.reset();  // session pooling: its server is the one server
      PgConn after = t.connect_or_throw();
      REQUIRE_OK(after.prepare("typed", cast));
      PgResult typed = after.exec_prepared("typed", {"b"});
      CHECK_MESSAGE(typed.ok(), typed.describe());
      admin.exec("DROP TYPE " + type);
    });
  }

  // A Parse that leaves its parameters' types to the server gets them from the tables as they are
  // now: after a table was recreated with another column type, a new client's Parse of the same
  // text resolves $1 to the new type (pgjdbc's DateTest: setDate into a timestamptz column after
  // a date column of the same name). Shardwire answered it with the server statement another
  // client had parsed before, $1 still a date: the stored time silently lost its hours.
  TEST_CASE("a Parse with unspecified parameter types resolves them against the tables of now") {
    ProxyOptions options;
    options.pool_size = 1;  // every client on the server that parsed the statement first
    options.workers = 1;
    for_each_pool_mode(options, [&](Target& t) {
      const std::string table = unique_name("retyped");
      const std::string insert = "INSERT INTO " + table + " VALUES ($1)";
      PgConn admin = shared_cluster().admin("app");
      REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (v date)"));
      {
        PgConn before = t.connect_or_throw();
        REQUIRE_OK(before.prepare("ins", insert));
        REQUIRE_OK(before.exec_prepared("ins", {"2020-01-01"}));
      }
      REQUIRE_OK(admin.exec("DROP TABLE " + table + "; CREATE TABLE " + table + " (v timestamptz)"));
      PgConn after = t.connect_or_throw();
      REQUIRE_OK(after.exec("SET TimeZone TO 'UTC'"));
      REQUIRE_OK(after.prepare("ins", insert));
      PGresult* description = PQdescribePrepared(after.get(), "ins");
      REQUIRE(PQresultStatus(description) == PGRES_COMMAND_OK);
      CHECK(PQnparams(description) == 1);
      CHECK(PQparamtype(description, 0) == 1184);  // timestamptz, not date (1082)
      PQclear(description);
      REQUIRE_OK(after.exec_prepared("ins", {"2020-01-01 23:00:00+00"}));
      CHECK(after.value("SELECT v::text FROM " + table) == "2020-01-01 23:00:00+00");
      admin.exec("DROP TABLE " + table);
    });
  }

  // Such a Parse, of a text a server accepted before, needs no server: pgbench -M prepared
  // prepares synchronously (PQprepare) for one client while its other clients, on the same
  // thread, hold servers in their transactions. Shardwire made that Parse wait for a server: with
  // more clients than servers every thread blocked so, and the pool starved (query_wait_timeout).
  TEST_CASE("a Parse leaving types to the server waits for no server once its text was accepted") {
    ProxyOptions options;
    options.pool_size = 1;
    options.workers = 1;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    const std::string text = "SELECT $1::int + 1";  // $1 left to the server (no types sent)
    PgConn first = t.connect_or_throw();
    REQUIRE_OK(first.prepare("p", text));
    PgConn second = t.connect_or_throw();
    PgConn holder = t.connect_or_throw();
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE_OK(holder.exec("SELECT 1"));  // holds the only server
    const auto start = Clock::now();
    REQUIRE_OK(second.prepare("p", text));  // no server free: answered by the proxy
    CHECK(Clock::now() - start < std::chrono::seconds(2));
    REQUIRE_OK(holder.exec("COMMIT"));
    PgResult result = second.exec_prepared("p", {"41"});
    REQUIRE_OK(result);
    CHECK(result.value() == "42");
  }

  // A Parse/Describe batch sent in a transaction that has no server yet (its BEGIN deferred) runs
  // on some server outside it, but must see what the transaction set: PQprepare after BEGIN and
  // SET LOCAL search_path resolves the table in that schema, as on PostgreSQL. Shardwire parsed it
  // with the session's search_path: 42P01, relation does not exist.
  TEST_CASE("a Parse in a transaction with no server yet sees the transaction's SET LOCAL") {
    ProxyOptions options;
    options.pool_size = 1;  // the other client gets the very server the Parse ran on
    options.workers = 1;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    const std::string schema = unique_name("local_path");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE SCHEMA " + schema + "; CREATE TABLE " + schema +
                          ".only_here (a int, b text, c date); INSERT INTO " + schema +
                          ".only_here VALUES (1, 'x', '2020-01-01')"));
    PgConn c = t.connect_or_throw(), other = t.connect_or_throw();
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("SET LOCAL search_path TO " + schema));
    REQUIRE_OK(c.prepare("q", "SELECT * FROM only_here"));
    PGresult* description = PQdescribePrepared(c.get(), "q");
    REQUIRE(PQresultStatus(description) == PGRES_COMMAND_OK);
    CHECK(PQnfields(description) == 3);
    PQclear(description);
    CHECK(other.value("SHOW search_path") == "\"$user\", public");  // rolled back there
    CHECK(other.value("SELECT 'other-runs'") == "other-runs");
    PgResult rows = c.exec_prepared("q", {});
    REQUIRE_OK(rows);
    CHECK(rows.value(0, 1) == "x");
    REQUIRE_OK(c.exec("COMMIT"));
    admin.exec("DROP SCHEMA " + schema + " CASCADE");
  }

  // Statements of its own per client (parameter types left to the server) would pile up on the
  // servers: one holding more than the limit drops them all when next borrowed, and a client's
  // statement is parsed again where it runs.
  TEST_CASE("a server holding more than the limit of statements drops them, clients' still run") {
    ProxyOptions options;
    options.pool_mode = "transaction";
    options.pool_size = 1;
    options.workers = 1;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    PgConn conn = t.connect_or_throw();
    // The server's own statements: the view read inside a function (a client's query of the view
    // lists the client's statements, docs/architecture.md §5.3).
    REQUIRE_OK(
        conn.exec("CREATE OR REPLACE FUNCTION statements_on_server() RETURNS bigint LANGUAGE sql "
                  "AS 'SELECT count(*) FROM pg_prepared_statements'"));
    for (int i = 0; i <= 1000; ++i) {
      const std::string n = std::to_string(i);
      REQUIRE_OK(conn.prepare(std::string("s").append(n), "SELECT $1::int + " + n));
    }
    CHECK(conn.exec_prepared("s1000", {"1"}).value(0, 0) == "1001");
    // Dropped when the Bind borrowed it: only s1000 is there again, then s7 too.
    CHECK(conn.value("SELECT statements_on_server()") == "1");
    CHECK(conn.exec_prepared("s7", {"1"}).value(0, 0) == "8");
    CHECK(conn.value("SELECT statements_on_server()") == "2");
    CHECK(conn.value("SELECT count(*) FROM pg_prepared_statements") == "1001");  // the client's
  }

  // The server resolves a Parse's table names by the search_path in effect: after SET search_path
  // the same text prepared again reads the other schema's table (pgjdbc's SchemaTest, inside a
  // transaction). Shardwire answered that Parse with the statement parsed for the first
  // search_path, and its Bind failed with 0A000 "cached plan must not change result type".
  TEST_CASE("a Parse after SET search_path resolves its tables by the new path") {
    for_each_pool_mode([&](Target& t) {
      const std::string first = unique_name("path_a"), second = unique_name("path_b");
      PgConn admin = shared_cluster().admin("app");
      REQUIRE_OK(admin.exec("CREATE SCHEMA " + first + "; CREATE SCHEMA " + second + "; CREATE TABLE " +
                            first + ".pathed (v int); CREATE TABLE " + second +
                            ".pathed (v text); INSERT INTO " + first + ".pathed VALUES (1); INSERT INTO " +
                            second + ".pathed VALUES ('two')"));
      for (const bool in_transaction : {false, true}) {
        CAPTURE(in_transaction);
        PgConn conn = t.connect_or_throw();
        if (in_transaction) REQUIRE_OK(conn.exec("BEGIN; SELECT 1"));  // a server of its own
        REQUIRE_OK(conn.exec("SET search_path TO " + first + ", public"));
        REQUIRE_OK(conn.prepare("on_first", "SELECT v FROM pathed"));
        CHECK(conn.exec_prepared("on_first", {}).value(0, 0) == "1");
        REQUIRE_OK(conn.exec("SET search_path TO " + second + ", public"));
        REQUIRE_OK(conn.prepare("on_second", "SELECT v FROM pathed"));
        PgResult r = conn.exec_prepared("on_second", {});
        CHECK_MESSAGE(r.ok(), r.describe());
        if (r.ok()) CHECK(r.value(0, 0) == "two");
        if (in_transaction) CHECK_OK(conn.exec("COMMIT"));
      }
      admin.exec("DROP SCHEMA " + first + " CASCADE; DROP SCHEMA " + second + " CASCADE");
    });
  }

  // asyncpg prepares with Parse, Describe and Flush, then binds: a LISTEN prepared so pins its
  // client in transaction pooling while its server is lent for that batch only. Shardwire kept
  // the server (pinned) but never read the client's input again: the Bind hung (asyncpg's
  // test_listeners). Inside a transaction the LISTEN is undone by its ROLLBACK, as on PostgreSQL.
  TEST_CASE("a LISTEN prepared in a Flush-ended batch pins the client and runs") {
    for_each_pool_mode([&](Target& t) {
      for (const bool in_transaction : {false, true}) {
        CAPTURE(in_transaction);
        PgConn conn = t.connect_or_throw();
        PGconn* c = conn.get();
        if (in_transaction) REQUIRE_OK(conn.exec("BEGIN"));
        REQUIRE(PQenterPipelineMode(c) == 1);
        REQUIRE(PQsendPrepare(c, "listen_stmt", "LISTEN flushed_channel", 0, nullptr) == 1);
        REQUIRE(PQsendFlushRequest(c) == 1);
        auto deadline = Clock::now() + std::chrono::seconds(10);
        CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");
        CHECK(next_status(c, deadline) == "NULL");
        REQUIRE(PQsendQueryPrepared(c, "listen_stmt", 0, nullptr, nullptr, nullptr, 0) == 1);
        REQUIRE(PQpipelineSync(c) == 1);
        CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");
        CHECK(next_status(c, deadline) == "NULL");
        CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
        REQUIRE(PQexitPipelineMode(c) == 1);
        if (in_transaction) {  // a LISTEN takes effect at COMMIT
          CHECK(PQtransactionStatus(c) == PQTRANS_INTRANS);
          REQUIRE_OK(conn.exec("ROLLBACK"));
          CHECK(conn.value("SELECT count(*) FROM pg_listening_channels()") == "0");
          continue;
        }
        CHECK(conn.value("SELECT string_agg(c, ',') FROM pg_listening_channels() c") == "flushed_channel");
        PgConn other = t.connect_or_throw();
        REQUIRE_OK(other.exec("NOTIFY flushed_channel, 'hello'"));
        CHECK(conn.value("SELECT 1") == "1");  // reads the notification that came meanwhile
        PGnotify* notify = PQnotifies(c);
        REQUIRE(notify != nullptr);
        CHECK(std::string(notify->relname) == "flushed_channel");
        CHECK(std::string(notify->extra) == "hello");
        PQfreemem(notify);
      }
    });
  }

  // A named Parse after an error in its batch is skipped by the server and defines nothing: the
  // client may prepare the name afterwards (shardwire kept the name and answered 42P05), also when
  // the statement's text is one the server holds already (shardwire answers that Parse itself).
  TEST_CASE("a named Parse skipped after an error in its batch defines no statement") {
    for_each_pool_mode([&](Target& t, const std::string& mode) {
      PgConn conn = t.connect_or_throw();
      const std::string known = "SELECT $1::int * 10 AS skipped_" + mode;
      REQUIRE_OK(conn.prepare("known", known));
      PGconn* c = conn.get();
      REQUIRE(PQenterPipelineMode(c) == 1);
      REQUIRE(PQsendQueryParams(c, "SELECT 1/0", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
      REQUIRE(PQsendPrepare(c, "skipped_new", "SELECT 11", 0, nullptr) == 1);
      REQUIRE(PQsendPrepare(c, "skipped_known", known.c_str(), 0, nullptr) == 1);
      REQUIRE(PQpipelineSync(c) == 1);
      auto deadline = Clock::now() + std::chrono::seconds(10);
      CHECK(next_status(c, deadline) == "PGRES_FATAL_ERROR");
      CHECK(next_status(c, deadline) == "NULL");
      for (int skipped = 0; skipped < 2; ++skipped) {
        CHECK(next_status(c, deadline) == "PGRES_PIPELINE_ABORTED");
        CHECK(next_status(c, deadline) == "NULL");
      }
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
      REQUIRE(PQexitPipelineMode(c) == 1);
      CHECK_OK(conn.prepare("skipped_new", "SELECT 11"));
      CHECK_OK(conn.prepare("skipped_known", known));
      CHECK(conn.exec_prepared("skipped_new", {}).value(0, 0) == "11");
      CHECK(conn.exec_prepared("skipped_known", {"2"}).value(0, 0) == "20");
      CHECK(conn.exec_prepared("known", {"3"}).value(0, 0) == "30");
      // A Parse of a name defined already fails and leaves it defined.
      CHECK(conn.prepare("known", "SELECT 12").sqlstate() == "42P05");
      CHECK(conn.exec_prepared("known", {"4"}).value(0, 0) == "40");
    });
  }

  // node-postgres's pg-cursor after an error in a stream: it sent the Sync already, then closes
  // its portal with Close and no Sync; the next query follows. PostgreSQL answers CloseComplete
  // (no portal is no error) and runs the query; shardwire waited for the rest of a batch that
  // never came (a hang).
  // psql's \gdesc: Parse of the unnamed statement and Sync, then a Describe of it and Sync. In
  // transaction pooling the server that parsed it may serve another client by then; the proxy
  // parses it again where the Describe runs (it failed with 26000 "unnamed prepared statement
  // does not exist").
  TEST_CASE("the unnamed statement described after its server went to another client") {
    ProxyOptions options;
    options.pool_size = 2;
    options.pool_mode = "transaction";
    options.workers = 1;  // one pool for both clients
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    PgConn described = t.connect_or_throw();
    PgConn other = t.connect_or_throw();
    PGresult* parsed = PQprepare(described.get(), "", "SELECT $1::int AS n, 'x'::text AS s", 0, nullptr);
    REQUIRE(PQresultStatus(parsed) == PGRES_COMMAND_OK);
    PQclear(parsed);
    // The idle list is last in, first out: the other client now holds the server that parsed it.
    REQUIRE_OK(other.exec("BEGIN"));
    REQUIRE_OK(other.exec("SELECT 1"));
    PGresult* description = PQdescribePrepared(described.get(), "");
    CHECK_MESSAGE(PQresultStatus(description) == PGRES_COMMAND_OK, PQresultErrorMessage(description));
    CHECK(PQnparams(description) == 1);
    CHECK(PQnfields(description) == 2);
    PQclear(description);
    CHECK_OK(other.exec("COMMIT"));
  }

  // DDL sent through shardwire makes every later Parse plan anew (docs/architecture.md §5.3), as
  // on PostgreSQL, where a statement parsed after the change never fails: asyncpg's suite prepared
  // `SELECT * FROM tab1` after another test had recreated tab1 with other column types, and got
  // 0A000 "cached plan must not change result type" from the statement shared before. A statement
  // prepared before the change keeps failing, as on PostgreSQL.
  TEST_CASE("a Parse after DDL sent through the proxy plans against the new tables") {
    ProxyOptions options;
    options.pool_mode = "transaction";
    options.pool_size = 1;  // every client on the server that holds the old plan
    options.workers = 1;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    PgConn admin = shared_cluster().admin("app");
    for (const bool by_preparer : {true, false}) {
      for (const bool in_transaction : {false, true}) {
        for (const std::string name : {"q", ""}) {
          CAPTURE(by_preparer);
          CAPTURE(in_transaction);
          CAPTURE(name);
          const std::string table = unique_name("ddl_epoch");
          const std::string select = "SELECT * FROM " + table;
          REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (v int); INSERT INTO " + table + " VALUES (7)"));
          PgConn a = t.connect_or_throw();
          REQUIRE_OK(a.prepare(name, select));
          CHECK(a.exec_prepared(name, {}).value(0, 0) == "7");
          std::optional<PgConn> other;
          if (!by_preparer) other.emplace(t.connect_or_throw());
          PgConn& changer = by_preparer ? a : *other;
          if (in_transaction) {
            REQUIRE_OK(changer.exec("BEGIN"));
            REQUIRE_OK(changer.exec("ALTER TABLE " + table + " ALTER COLUMN v TYPE text"));
            REQUIRE_OK(changer.exec("UPDATE " + table + " SET v = 'seven'"));
            if (by_preparer) {  // its own Parse later in the transaction sees the change
              REQUIRE_OK(a.prepare(name + "_in", select));
              PgResult r = a.exec_prepared(name + "_in", {});
              CHECK_MESSAGE(r.ok(), r.describe());
              if (r.ok()) CHECK(r.value(0, 0) == "seven");
            }
            REQUIRE_OK(changer.exec("COMMIT"));
          } else {
            REQUIRE_OK(changer.exec("DROP TABLE " + table + "; CREATE TABLE " + table +
                                    " (v text); INSERT INTO " + table + " VALUES ('seven')"));
          }
          other.reset();
          {
            PgConn b = t.connect_or_throw();
            REQUIRE_OK(b.prepare(name, select));
            PgResult r = b.exec_prepared(name, {});
            CHECK_MESSAGE(r.ok(), r.describe());
            if (r.ok()) CHECK(r.value(0, 0) == "seven");
          }
          REQUIRE_OK(a.prepare(name + "_fresh", select));
          PgResult fresh = a.exec_prepared(name + "_fresh", {});
          CHECK_MESSAGE(fresh.ok(), fresh.describe());
          if (fresh.ok()) CHECK(fresh.value(0, 0) == "seven");
          if (!name.empty()) CHECK(a.exec_prepared(name, {}).sqlstate() == "0A000");
          admin.exec("DROP TABLE " + table);
        }
      }
    }
  }
}  // TEST_SUITE
