// pg_prepared_statements through shardwire in transaction pooling, one shard, one server shared
// by two clients: each client sees exactly its own statements as PostgreSQL shows them (its names,
// its texts, from_sql, the parameter types; none of another client's, none of the proxy's shared
// `sw_N`), in the simple and the extended protocol, and after DEALLOCATE, DEALLOCATE ALL and
// DISCARD ALL; zero rows with the view's column types when it has none. Compared with a direct
// connection to PostgreSQL that prepared the same statements. With several shards, both kinds too.
// A named statement that reads the view, and an EXECUTE of one, list the client's statements of
// each run's moment.
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

using Rows = std::vector<std::vector<std::string>>;

const std::string kListing =
    "SELECT name, statement, from_sql::text, parameter_types::text FROM pg_prepared_statements ORDER BY name";

// A protocol-level Parse with declared types (PQprepare).
bool prepare_typed(PgConn& c, const std::string& name, const std::string& sql, std::vector<Oid> types) {
  PGresult* r = PQprepare(c.get(), name.c_str(), sql.c_str(), static_cast<int>(types.size()), types.data());
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  return ok;
}

// The statements every case prepares, on the proxy's client and on the direct connection alike.
void prepare_statements(PgConn& c) {
  REQUIRE_OK(c.prepare("p_untyped", "SELECT v FROM pv WHERE k = $1"));  // the server resolves $1
  REQUIRE(prepare_typed(c, "p_typed", "SELECT $1", {20}));
  REQUIRE_OK(c.exec("PREPARE s_q(bigint) AS SELECT $1 + 1"));
  REQUIRE_OK(c.exec("PREPARE \"S two\" AS SELECT $1::text || 'it''s'; SELECT 1"));
}

// What a Describe of statement `name` answers: its parameter types, then each column's name and type.
std::vector<std::string> describe_prepared(PgConn& c, const std::string& name) {
  PGresult* r = PQdescribePrepared(c.get(), name.c_str());
  std::vector<std::string> out{PQresStatus(PQresultStatus(r))};
  for (int i = 0; i < PQnparams(r); ++i) out.push_back("$" + std::to_string(PQparamtype(r, i)));
  for (int i = 0; i < PQnfields(r); ++i)
    out.push_back(std::string(PQfname(r, i)) + ":" + std::to_string(PQftype(r, i)));
  PQclear(r);
  return out;
}

}  // namespace

TEST_SUITE("prepared_view") {
  TEST_CASE("in transaction pooling pg_prepared_statements lists the client's own statements") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 1;
    options.proxy.pool_mode = "transaction";
    options.proxy.pool_size = 1;  // B always gets A's server
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn a = f.client();
    PgConn b = f.client();
    PgConn direct = f.setup.shard(0);  // PostgreSQL itself
    REQUIRE_OK(a.exec("CREATE TABLE pv (k int, v text)"));
    prepare_statements(a);
    prepare_statements(direct);
    const Rows expected{
        {"S two", "PREPARE \"S two\" AS SELECT $1::text || 'it''s'; SELECT 1", "true", "{text}"},
        {"p_typed", "SELECT $1", "false", "{bigint}"},
        {"p_untyped", "SELECT v FROM pv WHERE k = $1", "false", "{integer}"},
        {"s_q", "PREPARE s_q(bigint) AS SELECT $1 + 1", "true", "{bigint}"}};
    REQUIRE(direct.exec(kListing).data() == expected);
    CHECK(a.exec(kListing).data() == expected);
    // psycopg's query: the extended protocol's unnamed statement.
    CHECK(a.exec_params(kListing, {}).data() == expected);
    CHECK(a.value("SELECT count(*) FROM pg_catalog.pg_prepared_statements p WHERE p.prepare_time > now() - "
                  "interval '1 hour' AND p.generic_plans = 0 AND p.custom_plans >= 0") == "4");

    // B, on the same server, sees none of A's (nor the proxy's names for them), then its own.
    CHECK(b.exec(kListing).rows() == 0);
    CHECK(b.exec_params(kListing, {}).rows() == 0);
    REQUIRE_OK(b.prepare("p_b", "SELECT 2"));
    CHECK(b.exec(kListing).data() == Rows{{"p_b", "SELECT 2", "false", "{}"}});
    CHECK(a.exec(kListing).data() == expected);

    // DEALLOCATE of either kind, DEALLOCATE ALL, DISCARD ALL: as on PostgreSQL.
    for (PgConn* c : {&a, &direct}) {
      REQUIRE_OK(c->exec("DEALLOCATE p_untyped"));
      REQUIRE_OK(c->exec("DEALLOCATE s_q"));
    }
    CHECK(a.exec(kListing).data() == direct.exec(kListing).data());
    CHECK(a.exec(kListing).rows() == 2);
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->exec("DEALLOCATE ALL"));
    CHECK(a.exec(kListing).rows() == 0);
    CHECK(direct.exec(kListing).rows() == 0);
    prepare_statements(a);
    CHECK(a.exec(kListing).data() == expected);
    REQUIRE_OK(a.exec("DISCARD ALL"));
    CHECK(a.exec(kListing).rows() == 0);
    CHECK(b.exec(kListing).data() == Rows{{"p_b", "SELECT 2", "false", "{}"}});

    // No statements: zero rows, the view's column types.
    const std::string types =
        "SELECT pg_typeof(name)::text, pg_typeof(statement)::text, pg_typeof(prepare_time)::text, "
        "pg_typeof(parameter_types)::text, pg_typeof(from_sql)::text, pg_typeof(generic_plans)::text, "
        "pg_typeof(custom_plans)::text FROM (SELECT NULL) one LEFT JOIN pg_prepared_statements ON true";
    PgResult empty = a.exec(types);
    REQUIRE_OK(empty);
    CHECK(empty.data() == direct.exec(types).data());
  }

  // With several shards SQL-level statements live in shardwire only (docs/architecture.md §5.7):
  // listed all the same, their parameter types as declared.
  TEST_CASE("with several shards pg_prepared_statements lists both kinds of the client's statements") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_mode = "transaction";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn a = f.client();
    REQUIRE_OK(a.prepare("p_orders", "SELECT count(*) FROM orders WHERE tenant_id = $1"));
    REQUIRE_OK(a.exec("PREPARE s_orders(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1"));
    const Rows expected{
        {"p_orders", "SELECT count(*) FROM orders WHERE tenant_id = $1", "false", "{bigint}"},
        {"s_orders", "PREPARE s_orders(bigint) AS SELECT count(*) FROM orders WHERE tenant_id = $1", "true",
         "{bigint}"}};
    CHECK(a.exec(kListing).data() == expected);
    CHECK(a.exec_params(kListing, {}).data() == expected);
    CHECK(f.client().exec(kListing).rows() == 0);
  }

  // A named statement reading the view (psycopg prepares a query after its fifth run, pgjdbc
  // too): every run lists the client's statements of that moment, itself included, as PostgreSQL
  // does; another client on the same server never sees it; its Describe is PostgreSQL's. The
  // SQL-level form, PREPARE then EXECUTE, likewise.
  TEST_CASE("a named statement reading pg_prepared_statements lists the client's statements at each run") {
    PROXY_ONLY();
    ShardedOptions options;
    options.shards = 1;
    options.proxy.pool_mode = "transaction";
    options.proxy.pool_size = 1;  // B always gets A's server
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(30));
    PgConn a = f.client();
    PgConn b = f.client();
    PgConn direct = f.setup.shard(0);  // PostgreSQL itself
    REQUIRE_OK(a.exec("CREATE TABLE pv (k int, v text)"));
    const std::string reader =
        "SELECT name, statement, from_sql::text, parameter_types::text FROM pg_prepared_statements "
        "WHERE name <> $1 ORDER BY name";
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->prepare("reader", reader));
    // Runs the reader on both, compares row for row; its row count.
    auto run = [&](const char* step) {
      INFO(step);
      PgResult through = a.exec_prepared("reader", {"none"});
      PgResult expected = direct.exec_prepared("reader", {"none"});
      REQUIRE_OK(expected);
      CHECK(through.data() == expected.data());
      return through.rows();
    };
    CHECK(run("the reader alone") == 1);
    CHECK(run("again") == 1);
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->prepare("p_one", "SELECT v FROM pv WHERE k = $1"));
    CHECK(run("after a Parse") == 2);
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->exec("PREPARE s_two(int) AS SELECT $1"));
    CHECK(run("after a PREPARE") == 3);
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->exec("DEALLOCATE p_one"));
    CHECK(run("after a DEALLOCATE") == 2);

    // B, on the same server: none of A's, then its own reader of the same text, which sees itself.
    CHECK(b.exec(kListing).rows() == 0);
    REQUIRE_OK(b.prepare("b_reader", reader));
    CHECK(b.exec_prepared("b_reader", {"none"}).data() == Rows{{"b_reader", reader, "false", "{text}"}});
    CHECK(run("after B's") == 2);
    // A statement whose parameter type the server resolves, then gone from the server (B's
    // DISCARD ALL drops its statements): the reader's run still shows the type.
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->prepare("p_four", "SELECT k FROM pv WHERE v = $1"));
    REQUIRE_OK(b.exec("DISCARD ALL"));
    CHECK(run("after another client's DISCARD ALL") == 3);
    CHECK(a.exec(kListing).data() == direct.exec(kListing).data());
    CHECK(describe_prepared(a, "reader") == describe_prepared(direct, "reader"));
    CHECK(describe_prepared(a, "reader").size() == 6);  // status, $1, four columns

    // SQL-level: what EXECUTE lists is the moment of the EXECUTE.
    const std::string sql_reader =
        "PREPARE s_reader AS SELECT name FROM pg_prepared_statements ORDER BY name";
    for (PgConn* c : {&a, &direct}) {
      REQUIRE_OK(c->exec(sql_reader));
      REQUIRE_OK(c->prepare("p_three", "SELECT 3"));
    }
    const Rows listed = direct.exec("EXECUTE s_reader").data();
    CHECK(listed.size() == 5);
    PgResult executed = a.exec("EXECUTE s_reader");
    REQUIRE_OK(executed);
    CHECK(executed.data() == listed);
    PgResult extended = a.exec_params("EXECUTE s_reader", {});  // psycopg's way
    REQUIRE_OK(extended);
    CHECK(extended.data() == listed);
    // EXECUTE in SQL of the protocol-level reader: PostgreSQL runs the same statement.
    for (const char* step : {"simple", "extended"}) {
      INFO(step);
      const std::string execute = "EXECUTE reader('none')";
      PgResult through = std::string(step) == "simple" ? a.exec(execute) : a.exec_params(execute, {});
      REQUIRE_OK(through);
      CHECK(through.data() == direct.exec(execute).data());
    }
    // Gone once deallocated, from the view and as a name.
    for (PgConn* c : {&a, &direct}) REQUIRE_OK(c->exec("DEALLOCATE reader"));
    CHECK(a.exec(kListing).data() == direct.exec(kListing).data());
    CHECK(a.exec_prepared("reader", {"none"}).sqlstate() == "26000");
  }
}
