// insert_with_rows: an INSERT ... VALUES cut to some of its rows, located through the lexer.
#include <doctest/doctest.h>

#include <string>

#include "parser/analyze.h"

using sw::parser::analyze_uncached;
using sw::parser::insert_with_rows;

namespace {

sw::Result<sw::parser::InsertRows> cut(const std::string& sql, const std::vector<size_t>& rows,
                                       size_t statement = 0) {
  auto facts = analyze_uncached(sql);
  REQUIRE(facts.is_ok());
  return insert_with_rows(facts.value()->statements.at(statement), rows);
}

}  // namespace

TEST_CASE("rows are cut out of the statement's own text; comments, strings and parentheses inside rows") {
  const std::string sql =
      "insert into t(a, b) values (1, f('(', 2)), -- one\n (2, E'\\')'), ((3), \"x\"(')')) returning a";
  auto second = cut(sql, {1});
  REQUIRE(second.is_ok());
  CHECK(second.value().sql == "insert into t(a, b) values (2, E'\\')') returning a");
  auto outer = cut(sql, {0, 2});
  REQUIRE(outer.is_ok());
  CHECK(outer.value().sql == "insert into t(a, b) values (1, f('(', 2)), ((3), \"x\"(')')) returning a");
  // The second statement of a string: offsets are the statement's own.
  auto later = cut("select 1; insert into t values ($2, 1), ($1, $2)", {1}, 1);
  REQUIRE(later.is_ok());
  CHECK(later.value().sql == "insert into t values ($1, $2)");
  CHECK(later.value().params == std::vector<int>{1, 2});
  auto earlier = cut("select 1; insert into t values ($2, 1), ($1, $2)", {0}, 1);
  REQUIRE(earlier.is_ok());
  CHECK(earlier.value().sql == "insert into t values ($1, 1)");
  CHECK(earlier.value().params == std::vector<int>{2});
}

TEST_CASE("statements that are not one INSERT ... VALUES are not cut") {
  auto select = cut("insert into t select 1", {0});
  CHECK(!select.is_ok());
  CHECK(select.status().sqlstate == "0A000");
  CHECK(!cut("select 1", {0}).is_ok());
  CHECK(!cut("insert into t values (1), (2)", {5}).is_ok());
}
