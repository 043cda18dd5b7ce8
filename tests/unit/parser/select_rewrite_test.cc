// rewrite_select(): the SQL every shard of a merged read runs, spliced from the client's text, and
// the window facts the merge decides on (SelectShape::windows, window_partition_columns).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser/analyze.h"
#include "single_statement.h"

using sw::parser::SelectRewrite;
using sw::parser::StatementFacts;
using sw::test::facts;

namespace {

std::string avg_split(const std::string& sql) {
  SelectRewrite rewrite;
  rewrite.split_avg = true;
  auto out = sw::parser::rewrite_select(facts(sql), rewrite);
  REQUIRE_MESSAGE(out.is_ok(), sql);
  return out.value();
}

}  // namespace

TEST_CASE("avg with FILTER: the shards' sum and count each get the FILTER") {
  CHECK(avg_split("SELECT avg(n) FILTER (WHERE g = 1) FROM t") ==
        "SELECT sum(n) FILTER (WHERE g = 1), count(n) FILTER (WHERE g = 1) + 0 * (avg(n) FILTER (WHERE g = "
        "1) IS NULL)::int FROM t");
  CHECK(avg_split("SELECT g, avg(x)filter(where x > $1 AND (s = ')')) AS a FROM t GROUP BY 1") ==
        "SELECT g, sum(x)filter(where x > $1 AND (s = ')')), count(x)filter(where x > $1 AND (s = ')')) + 0 "
        "* (avg(x)filter(where x > $1 AND (s = ')')) IS NULL)::int AS a FROM t GROUP BY 1");
  // Without FILTER the call alone is split.
  CHECK(avg_split("SELECT avg(n), count(*) FILTER (WHERE n > 0) FROM t") ==
        "SELECT sum(n), count(n) + 0 * (avg(n) IS NULL)::int, count(*) FILTER (WHERE n > 0) FROM t");
}

TEST_CASE("variances: the shards' sum, count, numeric sum of squares and var_pop, FILTER on each") {
  CHECK(
      avg_split("SELECT g, stddev(n) FROM t GROUP BY 1") ==
      "SELECT g, sum(n), count(n), sum(CASE WHEN pg_typeof(n) IN ('float8'::regtype, 'float4'::regtype) THEN "
      "NULL ELSE ((n)::numeric) * ((n)::numeric) END), var_pop(n) FROM t GROUP BY 1");
  // An output position behind a variance moves by its three added columns.
  CHECK(
      avg_split("SELECT var_pop(a + b) FILTER (WHERE s = ')'), g FROM t GROUP BY 2") ==
      "SELECT sum(a + b) FILTER (WHERE s = ')'), count(a + b) FILTER (WHERE s = ')'), sum(CASE WHEN "
      "pg_typeof(a + b) IN ('float8'::regtype, 'float4'::regtype) THEN NULL ELSE ((a + b)::numeric) * ((a + "
      "b)::numeric) END) FILTER (WHERE s = ')'), var_pop(a + b) FILTER (WHERE s = ')'), g FROM t GROUP BY 5");
  CHECK(sw::parser::variance_columns("stddev_samp(f(')'), 2)").size() == 4);
  CHECK(sw::parser::variance_columns("stddev").empty());
}

TEST_CASE("windows: the PARTITION BY columns every window shares, named windows followed") {
  using Columns = std::vector<std::string>;
  auto shared = [](const std::string& sql) { return facts(sql).select.window_partition_columns; };
  CHECK_FALSE(facts("SELECT id FROM t").select.windows);
  CHECK(facts("SELECT id, rank() OVER () FROM t").select.windows);
  CHECK(shared("SELECT id, rank() OVER () FROM t").empty());
  CHECK(shared("SELECT rank() OVER (PARTITION BY k, g ORDER BY id) FROM t") == Columns{"k", "g"});
  CHECK(
      shared("SELECT rank() OVER (PARTITION BY o.k ORDER BY id), sum(x) OVER (PARTITION BY g, k) FROM t o") ==
      Columns{"k"});
  CHECK(shared("SELECT sum(x) OVER w, rank() OVER (w ORDER BY id) FROM t WINDOW w AS (PARTITION BY k)") ==
        Columns{"k"});
  CHECK(shared("SELECT sum(x) OVER v FROM t WINDOW w AS (PARTITION BY k), v AS (w ORDER BY id)") ==
        Columns{"k"});
  CHECK(
      shared("SELECT sum(x) OVER w, rank() OVER (ORDER BY id) FROM t WINDOW w AS (PARTITION BY k)").empty());
  CHECK(shared("SELECT sum(x) OVER (PARTITION BY k) FROM t WINDOW w AS (ORDER BY id)").empty());
  CHECK(shared("SELECT sum(x) OVER (PARTITION BY lower(k)) FROM t").empty());
}
