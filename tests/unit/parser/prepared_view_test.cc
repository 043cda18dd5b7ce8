// The parser's fact that a statement reads pg_prepared_statements, and the text with each such
// reference replaced by a subquery (transaction pooling answers the view per client).
#include <doctest/doctest.h>

#include <string>

#include "parser/analyze.h"
#include "parser/prepared_view.h"

using sw::parser::analyze;
using sw::parser::replace_prepared_statements_view;

namespace {

bool reads_view(const std::string& sql) {
  auto facts = analyze(sql);
  REQUIRE(facts);
  for (const auto& statement : (*facts)->statements)
    if (statement.reads_prepared_statements) return true;
  return false;
}

// `sql` with the view replaced by "(S)"; "(as written)" when nothing is replaced.
std::string replaced(const std::string& sql) {
  auto facts = analyze(sql);
  REQUIRE(facts);
  auto out = replace_prepared_statements_view(sql, **facts, "S");
  return out ? out->sql : "(as written)";
}

}  // namespace

TEST_CASE("prepared view: the fact names the view, unqualified or in pg_catalog, wherever it is read") {
  CHECK(reads_view("SELECT name FROM pg_prepared_statements"));
  CHECK(reads_view("select * from PG_CATALOG.Pg_Prepared_Statements where name <> ''"));
  CHECK(reads_view("SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM pg_prepared_statements p)"));
  CHECK(reads_view("EXPLAIN SELECT * FROM \"pg_prepared_statements\""));
  CHECK(reads_view("SELECT 1; SELECT * FROM pg_prepared_statements"));
  CHECK_FALSE(reads_view("SELECT * FROM pg_prepared_xacts"));
  CHECK_FALSE(reads_view("SELECT * FROM myschema.pg_prepared_statements"));
  CHECK_FALSE(reads_view("SELECT * FROM \"PG_PREPARED_STATEMENTS\""));
  CHECK_FALSE(reads_view("SELECT 'pg_prepared_statements'"));
  CHECK_FALSE(reads_view("WITH pg_prepared_statements AS (SELECT 1) SELECT * FROM pg_prepared_statements"));
  CHECK_FALSE(reads_view("SELECT * FROM t"));
}

TEST_CASE("prepared view: each reference becomes the subquery, named as the reference was") {
  CHECK(replaced("SELECT name FROM pg_prepared_statements ORDER BY name") ==
        "SELECT name FROM (S) pg_prepared_statements ORDER BY name");
  CHECK(replaced("SELECT p.name FROM pg_catalog . \"pg_prepared_statements\" AS p") ==
        "SELECT p.name FROM (S) AS p");
  CHECK(replaced("select * from PG_PREPARED_STATEMENTS x join pg_prepared_statements y using (name)") ==
        "select * from (S) x join (S) y using (name)");
  CHECK(replaced("SELECT 1; SELECT count(*) FROM pg_prepared_statements;") ==
        "SELECT 1; SELECT count(*) FROM (S) pg_prepared_statements;");
  CHECK(replaced("SELECT (SELECT count(*) FROM pg_prepared_statements WHERE name = 'x')") ==
        "SELECT (SELECT count(*) FROM (S) pg_prepared_statements WHERE name = 'x')");
}

TEST_CASE("prepared view: statements that keep the view for later runs go as written") {
  CHECK(replaced("CREATE VIEW v AS SELECT * FROM pg_prepared_statements") == "(as written)");
  CHECK(replaced("PREPARE q AS SELECT * FROM pg_prepared_statements") == "(as written)");
  CHECK(replaced("SELECT * FROM t") == "(as written)");
}

TEST_CASE("prepared view: the client's bytes are mapped, so an error position maps back") {
  const std::string sql = "SELECT nme FROM pg_prepared_statements WHERE x";
  auto facts = analyze(sql);
  REQUIRE(facts);
  auto out = replace_prepared_statements_view(sql, **facts, "SUBQUERY");
  REQUIRE(out);
  CHECK(out->sql == "SELECT nme FROM (SUBQUERY) pg_prepared_statements WHERE x");
  CHECK(out->source_offset(7) == 7u);   // "nme"
  CHECK_FALSE(out->source_offset(18));  // inside the subquery
  CHECK(out->source_offset(static_cast<uint32_t>(out->sql.find("WHERE"))) == sql.find("WHERE"));
}
