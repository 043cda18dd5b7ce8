#include "session/sql_prepared.h"

#include <doctest/doctest.h>

using sw::session::parse_sql_deallocate;
using sw::session::parse_sql_execute;
using sw::session::parse_sql_prepare;
using sw::session::SqlStatements;
using sw::session::substitute_parameters;

TEST_CASE("PREPARE: name folded, types split at top-level commas, the statement after AS") {
  auto p = parse_sql_prepare(
      "PREPARE Sel(bigint, numeric(10,2), text[]) AS SELECT count(*) FROM orders WHERE tenant_id = $1;");
  REQUIRE(p);
  CHECK(p->name == "sel");
  CHECK(p->types == std::vector<std::string>{"bigint", "numeric(10,2)", "text[]"});
  CHECK(p->query == "SELECT count(*) FROM orders WHERE tenant_id = $1");
  auto quoted = parse_sql_prepare("prepare \"My\"\"Q\" /* c */ as select 1");
  REQUIRE(quoted);
  CHECK(quoted->name == "My\"Q");
  CHECK(quoted->types.empty());
  CHECK(quoted->query == "select 1");
  CHECK_FALSE(parse_sql_prepare("PREPARE x(int SELECT 1"));
  CHECK_FALSE(parse_sql_prepare("PREPARE x SELECT 1"));
  CHECK_FALSE(parse_sql_prepare("PREPARE TRANSACTION 'g'"));
}

TEST_CASE("EXECUTE: arguments split outside literals and parentheses") {
  auto e = parse_sql_execute("EXECUTE sel(3, 'a,b', f(1, 2), 'it''s', E'\\',x', $$)$$)");
  REQUIRE(e);
  CHECK(e->name == "sel");
  CHECK(e->args == std::vector<std::string>{"3", "'a,b'", "f(1, 2)", "'it''s'", "E'\\',x'", "$$)$$"});
  auto bare = parse_sql_execute("execute SEL");
  REQUIRE(bare);
  CHECK(bare->name == "sel");
  CHECK(bare->args.empty());
  CHECK_FALSE(parse_sql_execute("EXECUTE sel(1) extra"));
  CHECK_FALSE(parse_sql_execute("EXECUTE sel(1"));
}

TEST_CASE("DEALLOCATE [PREPARE] name | ALL in any letter case") {
  CHECK(parse_sql_deallocate("DEALLOCATE ALL") == std::string());
  CHECK(parse_sql_deallocate("deallocate prepare all;") == std::string());
  CHECK(parse_sql_deallocate("Deallocate All") == std::string());
  CHECK(parse_sql_deallocate("DEALLOCATE \"ALL\"") == std::string("ALL"));
  CHECK(parse_sql_deallocate("DEALLOCATE Sel") == std::string("sel"));
  CHECK(parse_sql_deallocate("DEALLOCATE PREPARE sel") == std::string("sel"));
  CHECK(parse_sql_deallocate("DEALLOCATE prepare") == std::string("prepare"));
  CHECK_FALSE(parse_sql_deallocate("DISCARD ALL"));
}

TEST_CASE("parameters are replaced outside literals, identifiers and comments, cast to their type") {
  auto q = substitute_parameters("SELECT $1, '$1', \"$1\", $2 -- $1\n/* $2 */, $tag$ $1 $tag$, a$1",
                                 {"7", "'x'"}, {"int8"});
  REQUIRE(q);
  CHECK(*q == "SELECT (7)::int8, '$1', \"$1\", ('x') -- $1\n/* $2 */, $tag$ $1 $tag$, a$1");
  CHECK(substitute_parameters("SELECT $10", std::vector<std::string>(10, "1"), {}) ==
        std::string("SELECT (1)"));
  CHECK_FALSE(substitute_parameters("SELECT $2", {"1"}, {}));
  CHECK_FALSE(substitute_parameters("SELECT $0", {"1"}, {}));
  CHECK_FALSE(substitute_parameters("SELECT $1", {}, {"int"}));
}

TEST_CASE("EXECUTE of a known statement expands; unknown, or a wrong argument count, does not") {
  SqlStatements statements;
  statements.add(*parse_sql_prepare("PREPARE ins(bigint, text) AS INSERT INTO orders VALUES ($1, $2)"));
  CHECK(statements.expand_execute("EXECUTE ins(5, 'x')") ==
        std::string("INSERT INTO orders VALUES ((5)::bigint, ('x')::text)"));
  CHECK_FALSE(statements.expand_execute("EXECUTE ins(5)"));
  CHECK_FALSE(statements.expand_execute("EXECUTE other(5)"));
  statements.remove("ins");
  CHECK_FALSE(statements.expand_execute("EXECUTE ins(5, 'x')"));
}
