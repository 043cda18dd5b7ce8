// SQL-level PREPARE / EXECUTE / DEALLOCATE through shardwire with a catalog and 3 shards: EXECUTE
// of a keyed statement reads and writes on the shard that owns its key (in and out of a
// transaction), never on the default shard; DEALLOCATE and DEALLOCATE ALL in any letter case clear
// shardwire's bookkeeping (protocol-level statement names too); the next client of the same pooled
// server does not meet the statement; session pooling keeps the server's own statements. In
// transaction pooling, as on PostgreSQL: EXECUTE in EXPLAIN and CREATE TABLE AS, 42P05 for a second
// PREPARE of a name, and an error's position in the client's text (or none inside the statement).
// EXECUTE of a protocol-level (Parse-named) statement runs it in both pool modes, on its key's
// shard with several; a PREPARE of such a name, or a Parse of a PREPAREd one, is 42P05.
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

// A bigint sent in binary (8 bytes, network order), as text.
std::string int8_of_binary(const std::string& bytes) {
  if (bytes.size() != 8) return "binary of " + std::to_string(bytes.size()) + " bytes";
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return std::to_string(static_cast<int64_t>(v));
}

}  // namespace

TEST_SUITE("sql_prepare") {
  TEST_CASE("EXECUTE of a keyed statement runs on the shard that owns its key") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;  // one server per shard: every client meets the previous one's
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("PREPARE ins(bigint, text) AS INSERT INTO orders (tenant_id, note) VALUES ($1, $2)"));
    REQUIRE_OK(c.exec("PREPARE sel(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1"));
    PgResult ins = c.exec("EXECUTE ins(" + k(a) + ", 'autocommit')");
    CHECK_OK(ins);
    CHECK(ins.command_tag() == "INSERT 0 1");
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK_OK(c.exec("EXECUTE ins(" + k(a) + ", 'in ' || 'transaction')"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "2");
    REQUIRE_OK(c.exec("COMMIT"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "2");
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "autocommit"), row_of(a, "in transaction")});
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1).empty());

    PgResult wrong = c.exec("EXECUTE sel(1, 2)");
    CHECK(wrong.sqlstate() == "42601");
    PgResult several = c.exec("SELECT 1; EXECUTE sel(" + k(a) + ")");
    CHECK(several.sqlstate() == "0A000");
    CHECK(several.error().find("EXECUTE sel") != std::string::npos);

    // Another client on the same (only) server of each shard: no statement of the first one there.
    PgConn other = f.client();
    CHECK(other.exec("EXECUTE sel(" + k(a) + ")").sqlstate() == "26000");
    CHECK_OK(other.exec("PREPARE ins(int) AS SELECT $1"));
    CHECK(other.value("EXECUTE ins(7)") == "7");

    CHECK_OK(c.exec("DEALLOCATE sel"));
    CHECK(c.exec("EXECUTE sel(" + k(a) + ")").sqlstate() == "26000");
    CHECK_OK(c.exec("PREPARE sel(bigint) AS SELECT count(*) + 100 FROM orders WHERE tenant_id = $1"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "102");
  }

  TEST_CASE("DEALLOCATE ALL in any letter case forgets SQL-level and protocol-level statements") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      for (const std::string spelling : {"DEALLOCATE ALL", "deallocate all", "Deallocate Prepare All"}) {
        CAPTURE(mode);
        CAPTURE(spelling);
        ShardedOptions options;
        options.shards = 1;
        options.proxy.pool_mode = mode;
        ShardedFixture f(options);
        INFO("proxy log:\n" << f.log_tail(30));
        PgConn c = f.client();
        REQUIRE_OK(c.prepare("p1", "SELECT 1 AS one"));
        REQUIRE_OK(c.exec("PREPARE twice(int) AS SELECT $1 * 2"));
        CHECK(c.value("EXECUTE twice(21)") == "42");
        PgResult all = c.exec(spelling);
        CHECK_OK(all);
        CHECK(all.command_tag() == "DEALLOCATE ALL");
        CHECK(c.exec("EXECUTE twice(1)").sqlstate() == "26000");
        CHECK(c.exec_prepared("p1", {}).sqlstate() == "26000");
        // The same names again, as on PostgreSQL (42P05 if shardwire still remembered them).
        CHECK_OK(c.prepare("p1", "SELECT 2 AS two"));
        CHECK(c.exec_prepared("p1", {}).value() == "2");
        CHECK_OK(c.exec("PREPARE twice(int) AS SELECT $1 * 3"));
        CHECK(c.value("EXECUTE twice(2)") == "6");
      }
    }
  }

  // psycopg 3's cursor(binary=True) sends PREPARE and EXECUTE in the extended protocol, with
  // binary results: EXECUTE runs on the key's shard all the same (it ran on the PREPARE's shard:
  // a count of 0, an UPDATE 0 whose write was lost), and DEALLOCATE there forgets the statement.
  TEST_CASE("PREPARE, EXECUTE, DEALLOCATE in the extended protocol with binary results") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      CAPTURE(mode);
      ShardedOptions options;
      options.proxy.pool_mode = mode;
      options.proxy.pool_size = 1;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail(30));
      const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
      PgConn c = f.client();
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(a) + ", 'binary', 1)"));
      auto binary = [&](const std::string& sql) { return c.exec_extended(sql, ResultFormat::Binary); };
      REQUIRE_OK(binary("PREPARE pq(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1"));
      REQUIRE_OK(binary("PREPARE up(bigint) AS UPDATE orders SET qty = qty + 1 WHERE tenant_id = $1"));
      PgResult count = binary("EXECUTE pq(" + k(a) + ")");
      REQUIRE_OK(count);
      CHECK(int8_of_binary(count.value()) == "1");
      PgResult update = binary("EXECUTE up(" + k(a) + ")");
      CHECK_OK(update);
      CHECK(update.command_tag() == "UPDATE 1");
      REQUIRE_OK(c.exec("BEGIN"));
      CHECK(binary("EXECUTE up(" + k(a) + ")").command_tag() == "UPDATE 1");
      CHECK(int8_of_binary(binary("EXECUTE pq(" + k(a) + ")").value()) == "1");
      REQUIRE_OK(c.exec("COMMIT"));
      CHECK(c.value("SELECT qty FROM orders WHERE tenant_id = " + k(a)) == "3");
      CHECK(binary("EXECUTE pq(1, 2)").sqlstate() == "42601");
      CHECK_OK(binary("DEALLOCATE pq"));
      CHECK(binary("EXECUTE pq(" + k(a) + ")").sqlstate() == "26000");
      CHECK(c.exec("EXECUTE up(" + k(a) + ")").command_tag() == "UPDATE 1");  // the other one runs
      CHECK(f.rows_on(2) == std::vector<std::string>{row_of(a, "binary")});
    }
  }

  // PostgreSQL's regression tests create_table, select_into, plancache and prepare do these.
  TEST_CASE("EXECUTE in EXPLAIN and CREATE TABLE AS runs the prepared statement, as on PostgreSQL") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      CAPTURE(mode);
      ShardedOptions options;
      options.shards = 1;
      options.proxy.pool_mode = mode;
      options.proxy.pool_size = 1;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail(30));
      PgConn c = f.client();
      REQUIRE_OK(c.exec("PREPARE select1 AS SELECT 1 AS a"));
      CHECK_OK(c.exec("CREATE TABLE as_select1 AS EXECUTE select1"));
      CHECK(c.exec("CREATE TABLE as_select1 AS EXECUTE select1").sqlstate() == "42P07");
      CHECK(c.value("SELECT a FROM as_select1") == "1");
      REQUIRE_OK(c.exec("PREPARE data_sel(int) AS SELECT generate_series(1, $1)"));
      CHECK_OK(c.exec("CREATE TABLE nodata (a) AS\n  EXECUTE data_sel(3) WITH NO DATA"));
      CHECK(c.value("SELECT count(*) FROM nodata") == "0");
      PgResult plan = c.exec(
          "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF, TIMING OFF)\n  CREATE TABLE withdata (a) AS EXECUTE "
          "data_sel(3) WITH DATA");
      REQUIRE_OK(plan);
      CHECK(plan.value(0, 0) == "ProjectSet (actual rows=3 loops=1)");
      CHECK(c.value("SELECT count(*) FROM withdata") == "3");
      PgResult explain = c.exec("explain (costs off) execute data_sel(2)");
      REQUIRE_OK(explain);
      CHECK(explain.value(0, 0) == "ProjectSet");
      CHECK_OK(c.exec("CREATE TEMP TABLE temp_results (a) AS EXECUTE data_sel(2)"));  // pins the client
      CHECK(c.value("SELECT sum(a) FROM temp_results") == "3");
      REQUIRE_OK(c.exec("PREPARE ins AS INSERT INTO nodata VALUES (7)"));
      PgResult not_select = c.exec("CREATE TABLE never AS EXECUTE ins");
      CHECK(not_select.sqlstate() == "42809");
      CHECK(not_select.error() == "prepared statement is not a SELECT");
      PgResult too_few = c.exec("EXPLAIN EXECUTE data_sel");
      CHECK(too_few.sqlstate() == "42601");
      CHECK(contains(c.error_message(), "DETAIL:  Expected 1 parameters but got 0."));
    }
  }

  TEST_CASE("a second PREPARE of a name is 42P05 and keeps the first, as on PostgreSQL") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 1;
    options.proxy.pool_size = 1;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn c = f.client();
    REQUIRE_OK(c.exec("PREPARE q1 AS SELECT 1"));
    PgResult again = c.exec("PREPARE q1 AS SELECT 2");
    CHECK(again.sqlstate() == "42P05");
    CHECK(again.error() == "prepared statement \"q1\" already exists");
    CHECK(c.value("EXECUTE q1") == "1");
    // In a transaction block the error fails it, whether the block is on a server yet or not.
    for (const std::string first : {"SELECT 1", ""}) {
      CAPTURE(first);
      REQUIRE_OK(c.exec("BEGIN"));
      if (!first.empty()) {
        REQUIRE_OK(c.exec(first));
      }
      CHECK(c.exec("PREPARE q1 AS SELECT 2").sqlstate() == "42P05");
      CHECK(c.exec("SELECT 1").sqlstate() == "25P02");  // the error failed the transaction block
      REQUIRE_OK(c.exec("ROLLBACK"));
    }
    REQUIRE_OK(c.prepare("p1", "SELECT 3"));  // protocol level: the same namespace on a server
    CHECK(c.exec("PREPARE p1 AS SELECT 4").sqlstate() == "42P05");
    CHECK_OK(c.exec("DEALLOCATE q1"));
    CHECK_OK(c.exec("PREPARE q1 AS SELECT 2"));
    CHECK(c.value("EXECUTE q1") == "2");
  }

  // PostgreSQL's regression tests prepare, plancache, partition_prune and select_parallel: with
  // one shard the statement is PREPAREd on the server the client runs on, so it keeps its plan
  // cache, shows in pg_prepared_statements and checks its arguments as PostgreSQL does; another
  // client of the same server never meets it, not even under the same name.
  TEST_CASE("in transaction pooling a SQL prepared statement lives on the server, one client's only") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 1;
    options.proxy.pool_mode = "transaction";
    options.proxy.pool_size = 1;  // B always gets A's server
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn a = f.client();
    PgConn b = f.client();
    REQUIRE_OK(a.exec("CREATE TABLE pcache (k int, v text)"));
    REQUIRE_OK(a.exec("PREPARE pk(int) AS SELECT v FROM pcache WHERE k = $1"));
    for (int i = 0; i < 6; ++i) REQUIRE_OK(a.exec("EXECUTE pk(" + std::to_string(i) + ")"));
    // After five custom plans PostgreSQL settles on the generic one: its filter shows $1.
    PgResult generic = a.exec("EXPLAIN (COSTS OFF) EXECUTE pk(7)");
    REQUIRE_OK(generic);
    CHECK(generic.value(1, 0) == "  Filter: (k = $1)");
    // The declared types are PostgreSQL's own: its error, not a cast's.
    REQUIRE_OK(a.exec("PREPARE fl(float8) AS SELECT $1"));
    PgResult coerce = a.exec("EXECUTE fl(false)");
    CHECK(coerce.sqlstate() == "42804");
    CHECK(coerce.error() ==
          "parameter $1 of type boolean cannot be coerced to the expected type double precision");
    const std::string listing =
        "SELECT name, statement, parameter_types::text FROM pg_prepared_statements ORDER BY name";
    PgResult mine = a.exec(listing);
    REQUIRE_OK(mine);
    CHECK(mine.data() == std::vector<std::vector<std::string>>{
                             {"fl", "PREPARE fl(float8) AS SELECT $1", "{\"double precision\"}"},
                             {"pk", "PREPARE pk(int) AS SELECT v FROM pcache WHERE k = $1", "{integer}"}});
    // B on the same server: none of A's, and its own statement under A's name.
    CHECK(b.exec(listing).rows() == 0);
    CHECK(b.exec("EXECUTE pk(1)").sqlstate() == "26000");
    REQUIRE_OK(b.exec("PREPARE pk AS SELECT 'b' AS who"));
    CHECK(b.value("EXECUTE pk") == "b");
    CHECK(b.exec(listing).data() ==
          std::vector<std::vector<std::string>>{{"pk", "PREPARE pk AS SELECT 'b' AS who", "{}"}});
    CHECK(a.exec("EXECUTE pk(1)").ok());  // A's again, prepared anew on the server
    CHECK(a.exec("EXECUTE pk").sqlstate() == "42601");
    CHECK(a.exec("PREPARE pk AS SELECT 2").sqlstate() == "42P05");
    // DEALLOCATE and DEALLOCATE ALL drop only the client's own.
    REQUIRE_OK(a.exec("DEALLOCATE pk"));
    CHECK(b.value("EXECUTE pk") == "b");
    CHECK(a.exec("EXECUTE pk(1)").sqlstate() == "26000");
    REQUIRE_OK(b.exec("DEALLOCATE ALL"));
    PgResult kept = a.exec(listing);  // fl, PREPAREd again: the text the client sent, as before
    CHECK(kept.data() == std::vector<std::vector<std::string>>{
                             {"fl", "PREPARE fl(float8) AS SELECT $1", "{\"double precision\"}"}});
    CHECK(a.exec("EXECUTE fl(1.5)").ok());
    CHECK(b.exec("EXECUTE pk").sqlstate() == "26000");
    CHECK(b.exec(listing).rows() == 0);
    // In the extended protocol (psycopg's binary cursor) alike.
    auto binary = [&](const std::string& sql) { return a.exec_extended(sql, ResultFormat::Binary); };
    REQUIRE_OK(binary("PREPARE ex(int8) AS SELECT $1 * 2"));
    CHECK_OK(b.exec("SELECT 1"));  // B takes the server: A's statements leave it
    CHECK(int8_of_binary(binary("EXECUTE ex(21)").value()) == "42");
    CHECK_OK(binary("DEALLOCATE ex"));
    CHECK(a.exec("EXECUTE ex(1)").sqlstate() == "26000");
    CHECK(a.exec(listing).rows() == 1);
  }

  // PostgreSQL's regression tests xml, functional_deps and plancache show these positions. With
  // several shards EXECUTE is rewritten (with one, the servers run it: positions are theirs).
  TEST_CASE("an error of a rewritten EXECUTE has its position in the client's text, or none") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn c = f.client();
    REQUIRE_OK(c.exec("PREPARE num(int) AS SELECT $1 + 1"));
    // libpq shows the position as a caret under the statement's line (characters, not bytes).
    auto caret_under_result = [](PgConn& conn, const PgResult& failed, const std::string& sql,
                                 size_t characters_before) {
      CAPTURE(sql);
      CHECK(failed.sqlstate() == "22P02");
      const std::string expected = "LINE 1: " + sql + "\n" + std::string(8 + characters_before, ' ') + "^";
      CHECK_MESSAGE(contains(conn.error_message(), expected), conn.error_message());
    };
    auto caret_under = [&](const std::string& sql, size_t characters_before) {
      caret_under_result(c, c.exec(sql), sql, characters_before);
    };
    caret_under("/* é */ EXECUTE num('bad')", 20);  // at 'bad'
    caret_under("EXPLAIN EXECUTE num('x')", 20);
    // Sent by Parse: the unnamed statement (a driver's query with parameters), a named one.
    caret_under_result(c, c.exec_params("/* é */ EXECUTE num('bad')", {}), "/* é */ EXECUTE num('bad')", 20);
    caret_under_result(c, c.prepare("pnum", "EXPLAIN EXECUTE num('x')"), "EXPLAIN EXECUTE num('x')", 20);
    CHECK(c.exec("EXECUTE num(1, 2)").sqlstate() == "42601");
    CHECK(contains(c.error_message(), "DETAIL:  Expected 1 parameters but got 2."));
    REQUIRE_OK(c.exec("CREATE TABLE pcache (a int)"));
    REQUIRE_OK(c.exec("PREPARE reads AS SELECT * FROM pcache"));
    REQUIRE_OK(c.exec("DROP TABLE pcache"));
    PgResult gone = c.exec("EXECUTE reads");
    CHECK(gone.sqlstate() == "42P01");
    // Inside the prepared statement: PostgreSQL gives no position.
    CHECK_MESSAGE(!contains(c.error_message(), "LINE 1"), c.error_message());
  }

  // PostgreSQL has one namespace for protocol-level and SQL-level prepared statements: asyncpg's
  // test_prepare_explicitly_named prepares 'foobar' by Parse, then runs EXECUTE foobar. In
  // transaction pooling the server holds it under shardwire's own name.
  TEST_CASE("EXECUTE runs the client's protocol-level statement; one namespace with PREPARE") {
    PROXY_ONLY();
    for (const std::string mode : {"transaction", "session"}) {
      CAPTURE(mode);
      ShardedOptions options;
      options.shards = 1;
      options.proxy.pool_mode = mode;
      options.proxy.pool_size = mode == "transaction" ? 1 : 2;  // B gets A's server when it can
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail(30));
      PgConn a = f.client();
      PgConn b = f.client();
      REQUIRE_OK(a.prepare("foobar", "SELECT $1::int + 1 AS next"));
      CHECK(a.value("EXECUTE foobar(1)") == "2");
      CHECK(b.exec("EXECUTE foobar(1)").sqlstate() == "26000");  // B, on A's server: not A's name
      // B's DEALLOCATE ALL drops what A's server holds: A's statement is parsed there again.
      const auto server_forgets = [&] { CHECK_OK(b.exec("DEALLOCATE ALL")); };
      server_forgets();
      CHECK(a.exec_params("EXECUTE foobar(41)", {}).value(0, 0) == "42");  // asyncpg's fetchval
      server_forgets();
      CHECK(a.exec_params("EXECUTE FooBar(2)", {}).value(0, 0) == "3");
      REQUIRE_OK(a.prepare("via_name", "EXECUTE foobar(7)"));  // asyncpg names the statement
      server_forgets();
      CHECK(a.exec_prepared("via_name", {}).value(0, 0) == "8");
      server_forgets();
      PgResult plan = a.exec("EXPLAIN (COSTS OFF) EXECUTE foobar(2)");
      CHECK(plan.value(0, 0) == "Result");
      server_forgets();
      const std::string table = unique_name("ctas_proto");
      CHECK_OK(a.exec("CREATE TABLE " + table + " AS EXECUTE foobar(9)"));
      CHECK(a.value("SELECT next FROM " + table) == "10");
      CHECK_OK(a.exec("DROP TABLE " + table));
      server_forgets();
      REQUIRE_OK(a.exec("BEGIN"));
      CHECK(a.value("EXECUTE foobar(5)") == "6");
      REQUIRE_OK(a.exec("COMMIT"));
      // PostgreSQL's errors, under the client's name and at the client's position.
      CHECK(a.exec("EXECUTE foobar(1, 2)").sqlstate() == "42601");
      CHECK(contains(a.error_message(), "prepared statement \"foobar\""));
      CHECK(contains(a.error_message(), "DETAIL:  Expected 1 parameters but got 2."));
      CHECK(a.exec("/* é */ EXECUTE foobar('x')").sqlstate() == "22P02");
      CHECK_MESSAGE(contains(a.error_message(),
                             "LINE 1: /* é */ EXECUTE foobar('x')\n" + std::string(8 + 23, ' ') + "^"),
                    a.error_message());
      // One namespace, both ways.
      CHECK(a.exec("PREPARE foobar AS SELECT 2").sqlstate() == "42P05");
      REQUIRE_OK(a.exec("PREPARE sqlname AS SELECT 3"));
      REQUIRE_OK(a.prepare("four", "SELECT 4"));  // a text a server accepted: answered without one
      for (const std::string text : {"SELECT 4", "SELECT 5"})
        CHECK(a.prepare("sqlname", text).sqlstate() == "42P05");
      CHECK(a.value("EXECUTE sqlname") == "3");
      CHECK(a.value("EXECUTE foobar(0)") == "1");
      REQUIRE_OK(a.exec("DEALLOCATE foobar"));
      CHECK(a.exec("EXECUTE foobar(1)").sqlstate() == "26000");
      REQUIRE_OK(a.prepare("foobar", "SELECT 'again'"));
      CHECK(a.value("EXECUTE foobar") == "again");
    }
  }

  TEST_CASE("with several shards EXECUTE of a protocol-level statement runs on its key's shard") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'x')"));
    REQUIRE_OK(c.prepare("sel", "SELECT count(*) FROM orders WHERE tenant_id = $1::bigint"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "1");
    CHECK(c.value("EXPLAIN (COSTS OFF) EXECUTE sel(" + k(a) + ")").find("Aggregate") == 0);
    CHECK(c.exec("EXECUTE sel(1, 2)").sqlstate() == "42601");
    REQUIRE_OK(c.prepare("all_rows", "SELECT count(*) FROM orders"));
    CHECK(c.exec("EXECUTE all_rows").sqlstate() == "0A000");
    CHECK(c.exec("PREPARE sel AS SELECT 1").sqlstate() == "42P05");
    REQUIRE_OK(c.exec("PREPARE q AS SELECT 1"));
    CHECK(c.prepare("q", "SELECT 2").sqlstate() == "42P05");
  }

  // Session pooling: the servers hold the client's names, but a Parse alone went to the default
  // shard; EXECUTE ran there (a count of 0 for a key on another shard).
  TEST_CASE("in session pooling with several shards EXECUTE of a protocol-level statement finds its key") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_mode = "session";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    const int64_t a = key_where([](uint32_t b) { return b % kShards == 2; }, 100);
    REQUIRE_OK(f.client().exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(a) + ", 'x')"));
    PgConn c = f.client();
    REQUIRE_OK(c.prepare("sel", "SELECT count(*) FROM orders WHERE tenant_id = $1::bigint"));
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "1");
    CHECK(c.exec("EXECUTE sel(1, 2)").sqlstate() == "42601");
    CHECK(c.value("EXECUTE sel(" + k(a) + ")") == "1");  // on the leg that has it now
  }
}
