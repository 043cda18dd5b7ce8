// PREPARE / EXECUTE / DEALLOCATE read from the parse tree, and EXECUTE rewritten as the statement
// it runs wherever PostgreSQL's grammar takes one.
#include <doctest/doctest.h>

#include <string>

#include "parser/prepared_sql.h"

using sw::parser::expand_execute;
using sw::parser::sql_deallocate;
using sw::parser::sql_execute;
using sw::parser::sql_prepare;

namespace {

// `sql` with its one statement's EXECUTE replaced by `prepare`'s statement.
std::string expanded(const std::string& prepare, const std::string& sql, uint32_t statement_begin = 0) {
  auto prepared = sql_prepare(prepare);
  auto execute = sql_execute(sql.substr(statement_begin));
  if (!prepared || !execute) return "(not recognized)";
  auto out = expand_execute(sql, statement_begin, *execute, *prepared);
  return out ? out->sql : out.status().sqlstate + " " + out.status().message;
}

}  // namespace

TEST_CASE("PREPARE: folded name, declared types as written, the statement and its parameters") {
  auto p = sql_prepare(
      "PREPARE Ins (bigint, numeric(10, 2), \"char\") AS INSERT INTO t VALUES ($1, $2, $3, '$1')");
  REQUIRE(p);
  CHECK(p->name == "ins");
  CHECK(p->types == std::vector<std::string>{"bigint", "numeric(10, 2)", "\"char\""});
  CHECK(p->query == "INSERT INTO t VALUES ($1, $2, $3, '$1')");
  CHECK_FALSE(p->select);
  REQUIRE(p->params.size() == 3);
  CHECK(p->params[0].at == 22);
  CHECK(p->params[2].number == 3);
  auto quoted = sql_prepare("prepare \"My\"\"Q\" /* c */ as select $2::int, $1");
  REQUIRE(quoted);
  CHECK(quoted->name == "My\"Q");
  CHECK(quoted->select);
  CHECK(quoted->parameter_count() == 2);
  CHECK_FALSE(sql_prepare("PREPARE TRANSACTION 'g'"));
  CHECK_FALSE(sql_prepare("SELECT 1"));
  CHECK_FALSE(sql_prepare("PREPARE x SELECT 1"));  // a syntax error: the server reports it
}

TEST_CASE("EXECUTE alone, in EXPLAIN, in CREATE TABLE AS: name, arguments as written, its span") {
  auto e = sql_execute("EXECUTE sel(3, 'a,b', f(1, 2), 'it''s', E'\\',x', $$)$$, ARRAY[1, 2])");
  REQUIRE(e);
  CHECK(e->name == "sel");
  CHECK(e->args.size() == 7);
  CHECK(e->args[6].text == "ARRAY[1, 2]");
  CHECK(e->args[2].text == "f(1, 2)");
  CHECK(e->args[4].text == "E'\\',x'");
  CHECK(e->begin == 0);
  CHECK_FALSE(e->wrapped);
  auto explain = sql_execute("EXPLAIN (ANALYZE, COSTS OFF) execute \"Sel\" ( 1 )");
  REQUIRE(explain);
  CHECK(explain->name == "Sel");
  CHECK(explain->begin == 29);
  CHECK(explain->args[0].text == "1");
  CHECK(explain->args[0].at == 45);
  CHECK(explain->wrapped);
  auto ctas = sql_execute("CREATE TABLE execute (execute) AS EXECUTE execute WITH NO DATA");
  REQUIRE(ctas);
  CHECK(ctas->name == "execute");
  CHECK(ctas->create_table_as);
  CHECK(ctas->begin == 34);
  CHECK(ctas->end == 49);
  auto both = sql_execute("EXPLAIN ANALYZE CREATE TEMP TABLE t AS EXECUTE q(1) WITH DATA");
  REQUIRE(both);
  CHECK(both->create_table_as);
  CHECK_FALSE(sql_execute("EXPLAIN SELECT 1"));
  CHECK_FALSE(sql_execute("CREATE TABLE t AS SELECT 1"));
  CHECK_FALSE(sql_execute("SELECT 'EXECUTE q'"));
}

TEST_CASE("DEALLOCATE: a name, or \"\" for ALL, in any letter case") {
  CHECK(sql_deallocate("DEALLOCATE ALL") == std::string());
  CHECK(sql_deallocate("deallocate prepare all") == std::string());
  CHECK(sql_deallocate("DEALLOCATE \"ALL\"") == std::string("ALL"));
  CHECK(sql_deallocate("DEALLOCATE Sel") == std::string("sel"));
  CHECK(sql_deallocate("DEALLOCATE PREPARE sel") == std::string("sel"));
  CHECK(sql_deallocate("DEALLOCATE prepare") == std::string("prepare"));
  CHECK_FALSE(sql_deallocate("DISCARD ALL"));
}

TEST_CASE("EXECUTE rewritten: parameters cast to their declared type, only real $n replaced") {
  CHECK(expanded("PREPARE q(int8) AS SELECT $1, '$1', \"$1\", $2 -- $1\n/* $2 */, $tag$ $1 $tag$",
                 "EXECUTE q(7, 'x')") ==
        "SELECT (7)::int8, '$1', \"$1\", ('x') -- $1\n/* $2 */, $tag$ $1 $tag$");
  CHECK(expanded("PREPARE q(int, text) AS INSERT INTO t VALUES ($1, $2)", "EXECUTE q(5, 'x')") ==
        "INSERT INTO t VALUES ((5)::int, ('x')::text)");
  CHECK(expanded("PREPARE q AS SELECT 1", "EXPLAIN (COSTS OFF) EXECUTE q") == "EXPLAIN (COSTS OFF) SELECT 1");
  CHECK(expanded("PREPARE q AS SELECT 1 -- one", "CREATE TABLE t (a) AS EXECUTE q WITH NO DATA") ==
        "CREATE TABLE t (a) AS SELECT 1 -- one\n WITH NO DATA");
  // The rest of the client's text stays: comments before, the ';' after.
  CHECK(expanded("PREPARE q(int) AS SELECT $1", "/* c */ EXECUTE q(1);", 8) == "/* c */ SELECT (1)::int;");
}

TEST_CASE("EXECUTE with the wrong arguments: PostgreSQL's errors") {
  CHECK(expanded("PREPARE q(int, int) AS SELECT $1", "EXECUTE q(1)") ==
        "42601 wrong number of parameters for prepared statement \"q\"");
  CHECK(expanded("PREPARE q AS SELECT $2, $1", "EXECUTE q(1, 2, 3)").rfind("42601", 0) == 0);
  CHECK(expanded("PREPARE q AS INSERT INTO t VALUES (1)", "CREATE TABLE c AS EXECUTE q") ==
        "42809 prepared statement is not a SELECT");
}

TEST_CASE("a position in the rewritten text maps back to the client's bytes, or to none") {
  const std::string sql = "EXPLAIN EXECUTE q('bad', 2)";
  auto prepared = sql_prepare("PREPARE q(xml, int) AS SELECT $1, $2");
  auto execute = sql_execute(sql);
  REQUIRE(prepared);
  REQUIRE(execute);
  auto out = expand_execute(sql, 0, *execute, *prepared);
  REQUIRE(out);
  CHECK(out->sql == "EXPLAIN SELECT ('bad')::xml, (2)::int");
  CHECK(out->source_offset(0) == 0u);                  // "EXPLAIN"
  CHECK(out->source_offset(16) == sql.find("'bad'"));  // the argument
  CHECK(out->source_offset(9) == std::nullopt);        // inside the prepared statement
  CHECK(out->source_offset(static_cast<uint32_t>(out->sql.size() - 1)) == std::nullopt);  // "::int"
}

TEST_CASE("EXECUTE of a protocol-level statement: its name renamed, the rest of the text kept") {
  using sw::parser::rename_execute;
  auto renamed = [](const std::string& sql, uint32_t statement_begin = 0) -> std::string {
    auto execute = sql_execute(sql.substr(statement_begin));
    if (!execute) return "(not recognized)";
    return rename_execute(sql, statement_begin, *execute, "sw_7").sql;
  };
  CHECK(renamed("EXECUTE foobar") == "EXECUTE sw_7");
  CHECK(renamed("execute FooBar (1, 'x')") == "execute sw_7 (1, 'x')");
  CHECK(renamed("/* a */ EXPLAIN (COSTS OFF) EXECUTE \"Foo Bar\"(1)", 8) ==
        "/* a */ EXPLAIN (COSTS OFF) EXECUTE sw_7(1)");
  CHECK(renamed("CREATE TABLE t AS EXECUTE q WITH NO DATA") == "CREATE TABLE t AS EXECUTE sw_7 WITH NO DATA");
  CHECK(renamed("EXECUTE /* c */ q") == "(not recognized)");  // a name that is not alone: left as written
  // Every byte but the name's maps back to the client's text.
  auto execute = sql_execute("EXECUTE q(12)");
  REQUIRE(execute);
  auto out = rename_execute("EXECUTE q(12)", 0, *execute, "sw_100");
  CHECK(out.source_offset(15) == 10u);  // the 1 of 12
  CHECK_FALSE(out.source_offset(9));    // inside the server's name
  // Its statement as a PREPARE's: parameters beyond the declared types count; no casts.
  auto prepared = sw::parser::protocol_prepare("SELECT $2::int + $1", 1);
  REQUIRE(prepared);
  CHECK(prepared->parameter_count() == 2);
  auto call = sql_execute("EXECUTE q(1, 2)");
  REQUIRE(call);
  auto expanded_call = expand_execute("EXECUTE q(1, 2)", 0, *call, *prepared);
  REQUIRE(expanded_call);
  CHECK(expanded_call->sql == "SELECT (2)::int + (1)");
}
