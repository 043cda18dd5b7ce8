// Scatter plans (route_merge.cc): how the shards order text (explicit COLLATE clauses that do not
// order by bytes, the tables whose column collations the shards report) and ORDER BY expressions
// that are not selected (hidden sort columns).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "parser/analyze.h"
#include "router/router.h"

using namespace sw::router;

namespace {

Route planned(const std::string& sql) {
  static std::map<std::string, std::shared_ptr<const sw::parser::QueryFacts>> keep;
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"items", "tenant_id", "bigint", ""});
  auto rules = RoutingRules::from_config(sharding);
  REQUIRE(rules.is_ok());
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), facts.status().message);
  keep[sql] = facts.value();
  auto dir = Directory::initial(16, {"s0", "s1"});
  return route(keep[sql]->statements.at(0), nullptr, *dir, rules.value());
}

}  // namespace

TEST_CASE("every shard column's collation source: hidden sort keys first, avg as two columns") {
  Route sorted =
      planned(R"(SELECT note COLLATE "de-x-icu" AS n, id FROM orders ORDER BY lower(note) COLLATE "C")");
  REQUIRE(sorted.merge);
  REQUIRE(sorted.merge->column_sources.size() == 3);
  CHECK(sorted.merge->column_sources[0].explicit_name == "C");  // the hidden sort column
  CHECK(sorted.merge->column_sources[1].explicit_name == "de-x-icu");
  CHECK(sorted.merge->column_sources[2].columns == std::vector<std::string>{"id"});
  CHECK_FALSE(sorted.merge->column_sources[2].opaque);
  Route grouped = planned("SELECT note, avg(id), max(lower(note)) FROM orders GROUP BY note");
  REQUIRE(grouped.merge);
  REQUIRE(grouped.merge->column_sources.size() == 4);
  CHECK(grouped.merge->column_sources[3].columns == std::vector<std::string>{"note"});
  // What a derived table's columns read is not in the text; * leaves only the shards' origins.
  Route derived = planned("SELECT n FROM orders CROSS JOIN LATERAL (SELECT lower(note) AS n) s ORDER BY n");
  REQUIRE(derived.merge);
  REQUIRE(derived.merge->column_sources.size() == 1);
  CHECK(derived.merge->column_sources[0].opaque);
  Route star = planned("SELECT * FROM orders ORDER BY note");
  REQUIRE(star.merge);
  CHECK(star.merge->column_sources.empty());
}

TEST_CASE("the plan names the tables it reads, quoted for to_regclass, each once") {
  Route joined = planned(
      "SELECT o.note, count(*) FROM app.orders o JOIN items i USING (tenant_id) JOIN items j USING "
      "(tenant_id) "
      "GROUP BY 1 ORDER BY 1");
  REQUIRE(joined.merge);
  CHECK(joined.merge->tables == std::vector<std::string>{"\"app\".\"orders\"", "\"items\""});
  Route quoted = planned("SELECT \"We\"\"ird\" FROM orders ORDER BY 1");
  REQUIRE(quoted.merge);
  CHECK(quoted.merge->tables == std::vector<std::string>{"\"orders\""});
}

TEST_CASE("ORDER BY an expression not selected: selected first as a hidden sort column") {
  Route sorted =
      planned("SELECT tenant_id, id FROM orders o ORDER BY lower(o.note) DESC, (qty + 1) * 2, qty, 2");
  REQUIRE(sorted.merge);
  CHECK(sorted.merge->hidden == 3);
  CHECK(sorted.merge->shard_sql.rfind("SELECT lower(o.note) AS sw_order_1, (qty + 1) * 2 AS sw_order_2, "
                                      "\"qty\" AS sw_order_3, tenant_id, id "
                                      "FROM ",
                                      0) == 0);
  REQUIRE(sorted.merge->order_by.size() == 4);
  CHECK(sorted.merge->order_by[0].column == 0);
  CHECK(sorted.merge->order_by[0].descending);
  CHECK(sorted.merge->order_by[1].column == 1);
  CHECK(sorted.merge->order_by[2].column == 2);
  CHECK(sorted.merge->order_by[3].column == 4);
  // The same expression twice is selected once.
  Route twice = planned("SELECT id FROM orders ORDER BY qty * 2, qty * 2 DESC");
  REQUIRE(twice.merge);
  CHECK(twice.merge->hidden == 1);
  // Refused: with DISTINCT or GROUP BY, with *, with a subquery in it.
  const std::pair<const char*, const char*> refused[] = {
      {"SELECT DISTINCT id FROM orders ORDER BY qty + 1", "DISTINCT"},
      {"SELECT status, count(*) FROM orders GROUP BY status ORDER BY lower(status)", "GROUP BY"},
      {"SELECT * FROM orders ORDER BY qty + 1", "not in the select list"},
      {"SELECT id FROM orders ORDER BY (SELECT 1) + qty", "a subquery"},
  };
  for (const auto& entry : refused) {
    const char* sql = entry.first;  // not a structured binding: doctest's macros capture it
    const char* says = entry.second;
    Route route_of = planned(sql);
    CHECK_MESSAGE(route_of.kind == RouteKind::Error, sql);
    CHECK_MESSAGE(route_of.error.message.find(says) != std::string::npos,
                  sql << ": " << route_of.error.message);
  }
}

TEST_CASE("HAVING without the key: the shards group without it, the plan applies it") {
  Route having =
      planned("SELECT status, count(*) FROM orders GROUP BY status HAVING count(*) > 2 ORDER BY status");
  REQUIRE(having.merge);
  REQUIRE(having.merge->having);
  CHECK(having.merge->having->column == 1);
  CHECK(having.merge->having->op == sw::merge::HavingTerm::Op::Gt);
  CHECK(having.merge->having->constant == std::optional<std::string>("2"));
  CHECK(having.merge->shard_sql.find("HAVING") == std::string::npos);
  CHECK(having.merge->shard_sql.find("GROUP BY status  ORDER BY status") != std::string::npos);
  // A parameter: the plan binds it later; the shards keep the comparison in an always-true
  // HAVING, so PostgreSQL types $1 (and the Bind's parameter count still matches).
  Route param =
      planned("SELECT status, avg(qty) FROM orders GROUP BY status HAVING avg(qty) >= $1 ORDER BY 1");
  REQUIRE(param.merge);
  REQUIRE(param.merge->having);
  CHECK(param.merge->having->param == 1);
  CHECK_FALSE(param.merge->having->constant);
  CHECK_MESSAGE(param.merge->shard_sql.find("HAVING (avg(qty) >= $1) IS NULL OR true ") != std::string::npos,
                param.merge->shard_sql);
  // Grouped by the key: the shards' groups are final, HAVING stays with them.
  Route keyed = planned("SELECT tenant_id, count(*) FROM orders GROUP BY tenant_id HAVING count(*) > 2");
  REQUIRE(keyed.merge);
  CHECK_FALSE(keyed.merge->having);
  CHECK(keyed.merge->shard_sql.find("HAVING count(*) > 2") != std::string::npos);
  // A boolean constant is compared as boolout prints it.
  Route flag = planned("SELECT bool_or(qty > 1), count(*) FROM orders HAVING bool_or(qty > 1) = false");
  REQUIRE(flag.merge);
  REQUIRE(flag.merge->having);
  CHECK(flag.merge->having->constant == std::optional<std::string>("f"));
  // An aggregate not selected: the shards select it first, the merge compares and drops it.
  Route hidden = planned("SELECT status FROM orders GROUP BY 1 HAVING count(*) > 2 AND avg(qty) < 5");
  REQUIRE(hidden.merge);
  REQUIRE(hidden.merge->having);
  CHECK(hidden.merge->hidden_outputs == 2);
  const std::string& shard_sql = hidden.merge->shard_sql;
  CHECK_MESSAGE(
      shard_sql.rfind("SELECT count(*), sum(qty), count(qty) + 0 * (avg(qty) IS NULL)::int, status FROM ",
                      0) == 0,
      shard_sql);
  CHECK_MESSAGE(shard_sql.find(" GROUP BY 4") != std::string::npos, shard_sql);
  CHECK_MESSAGE(shard_sql.find("HAVING") == std::string::npos, shard_sql);
  // An expression over aggregates: a hidden output the merge computes (a placeholder column).
  Route computed = planned("SELECT status FROM orders GROUP BY status HAVING count(*) * 2 > 2");
  REQUIRE(computed.merge);
  CHECK(computed.merge->hidden_outputs == 2);
  REQUIRE(computed.merge->outputs.size() == 3);
  CHECK(computed.merge->outputs[2].combine == sw::merge::Combine::Expression);
  CHECK_MESSAGE(computed.merge->shard_sql.rfind("SELECT count(*), NULL::int4, status FROM ", 0) == 0,
                computed.merge->shard_sql);
  // One it does not compute: refused.
  Route refused = planned("SELECT status FROM orders GROUP BY status HAVING count(*) ^ 2 > 0");
  CHECK(refused.kind == RouteKind::Error);
  CHECK(refused.error.message.find("HAVING") != std::string::npos);
}

TEST_CASE("CTEs and FROM subqueries that filter one sharded table: every shard runs it, merged") {
  Route cte =
      planned("WITH t AS (SELECT amount FROM orders WHERE g > 0) SELECT count(*), sum(amount) FROM t");
  CHECK(cte.kind == RouteKind::Scatter);
  REQUIRE(cte.merge);
  CHECK(cte.merge->kind == sw::merge::MergeKind::Aggregate);
  Route sub = planned("SELECT b.id FROM (SELECT id FROM orders WHERE g = 1) b");
  CHECK(sub.kind == RouteKind::Scatter);
  Route keyed = planned("WITH t AS (SELECT * FROM orders WHERE tenant_id = 3) SELECT count(*) FROM t");
  CHECK(keyed.kind == RouteKind::Shard);
  // Through a block the key's name may be another column's: grouped by it, still merged.
  Route renamed =
      planned("WITH t AS (SELECT g AS tenant_id FROM orders) SELECT tenant_id, count(*) FROM t GROUP BY 1");
  REQUIRE(renamed.merge);
  CHECK(renamed.merge->kind == sw::merge::MergeKind::Aggregate);
  Route distinct =
      planned("WITH t AS (SELECT g AS tenant_id FROM orders) SELECT count(DISTINCT tenant_id) FROM t");
  REQUIRE(distinct.merge);
  CHECK(distinct.merge->outputs.at(0).combine == sw::merge::Combine::CountDistinct);
  CHECK(
      planned("SELECT tenant_id, row_number() OVER (PARTITION BY tenant_id) FROM (SELECT g AS tenant_id FROM "
              "orders) s")
          .kind == RouteKind::Error);
  // Refused: a block that combines rows, a CTE read twice, a nullable side, another table untied.
  for (const char* sql : {
           "WITH t AS (SELECT g, count(*) AS n FROM orders GROUP BY g) SELECT sum(n) FROM t",
           "SELECT count(*) FROM (SELECT * FROM orders LIMIT 3) b",
           "WITH t AS (SELECT * FROM orders) SELECT count(*) FROM t a JOIN t b ON a.g = b.g",
           "SELECT count(*) FROM (VALUES (1)) v(x) LEFT JOIN (SELECT * FROM orders) b ON b.id = v.x",
           "SELECT count(*) FROM (SELECT * FROM orders) a JOIN items i ON a.tenant_id = i.tenant_id",
           "WITH t AS (SELECT * FROM orders) SELECT * FROM (SELECT count(*) FROM t) c",
           "SELECT (SELECT max(id) FROM orders) AS m",
       }) {
    INFO(sql);
    Route refused = planned(sql);
    CHECK(refused.kind == RouteKind::Error);
    CHECK(refused.error.sqlstate == "0A000");
  }
}

TEST_CASE("count(DISTINCT x) of a non-key column: the shards answer array_agg(DISTINCT x)") {
  Route plain = planned(
      "SELECT count(DISTINCT note), Count ( DISTINCT lower(note) ) FILTER (WHERE id > 1), "
      "count(*), count(DISTINCT tenant_id) FROM orders");
  REQUIRE(plain.merge);
  CHECK(plain.merge->shard_sql.find(
            "SELECT array_agg(DISTINCT note), array_agg ( DISTINCT lower(note) ) FILTER (WHERE id > 1), "
            "count(*), count(DISTINCT tenant_id) FROM ") == 0);
  using sw::merge::Combine;
  REQUIRE(plain.merge->outputs.size() == 4);
  CHECK(plain.merge->outputs[0].combine == Combine::CountDistinct);
  CHECK(plain.merge->outputs[1].combine == Combine::CountDistinct);
  CHECK(plain.merge->outputs[2].combine == Combine::Count);
  CHECK(plain.merge->outputs[3].combine == Combine::Count);  // the key's: each value on one shard
  // Beside a split avg, and in HAVING (a hidden leading column).
  Route grouped = planned(
      "SELECT id, avg(total), count(DISTINCT note) FROM orders GROUP BY id HAVING count(DISTINCT status) > "
      "1");
  REQUIRE(grouped.merge);
  CHECK(grouped.merge->shard_sql.find("SELECT array_agg(DISTINCT status), id, sum(total)") == 0);
  CHECK(grouped.merge->shard_sql.find(", array_agg(DISTINCT note) FROM (") != std::string::npos);
  REQUIRE(grouped.merge->outputs.size() == 4);
  CHECK(grouped.merge->outputs[2].combine == Combine::CountDistinct);
  CHECK(grouped.merge->outputs[2].source == 4);
  CHECK(grouped.merge->outputs[3].combine == Combine::CountDistinct);  // HAVING's
  CHECK(grouped.merge->outputs[3].source == 0);
  // sum / avg(DISTINCT x): the same arrays, added up by the merge (HAVING's hidden one too).
  Route sums = planned(
      "SELECT status, sum(DISTINCT total), avg (DISTINCT total) FROM orders GROUP BY status "
      "HAVING sum(DISTINCT id) > 1");
  REQUIRE(sums.merge);
  CHECK(sums.merge->shard_sql.find("SELECT array_agg(DISTINCT id), status, array_agg(DISTINCT total), "
                                   "array_agg (DISTINCT total) FROM") == 0);
  REQUIRE(sums.merge->outputs.size() == 4);
  CHECK(sums.merge->outputs[1].combine == Combine::SumDistinct);
  CHECK(sums.merge->outputs[2].combine == Combine::AvgDistinct);
  CHECK(sums.merge->outputs[3].combine == Combine::SumDistinct);  // HAVING's
  // Other aggregates with DISTINCT stay refused; a column whose name starts with "distinct" is no
  // DISTINCT.
  CHECK(planned("SELECT json_agg(DISTINCT total) FROM orders").kind == RouteKind::Error);
  CHECK(planned("SELECT count(distinct_total ORDER BY id) FROM orders").kind == RouteKind::Error);
}

TEST_CASE("array_agg / string_agg: the shards answer the values' and the sort keys' arrays") {
  using sw::merge::Combine;
  Route ordered = planned(
      "SELECT id, string_agg(note, ', ' ORDER BY total DESC, note) FILTER (WHERE id > 1), "
      "array_agg(total ORDER BY id NULLS FIRST) FROM orders GROUP BY id");
  REQUIRE(ordered.merge);
  CHECK(
      ordered.merge->shard_sql.find(
          "SELECT id, array_agg(note ORDER BY total DESC NULLS FIRST, note ASC NULLS LAST) FILTER (WHERE id "
          "> "
          "1), array_agg(total ORDER BY total DESC NULLS FIRST, note ASC NULLS LAST) FILTER (WHERE id > 1), "
          "array_agg(note ORDER BY total DESC NULLS FIRST, note ASC NULLS LAST) FILTER (WHERE id > 1), "
          "array_agg(total ORDER BY id ASC NULLS FIRST), array_agg(id ORDER BY id ASC NULLS FIRST) FROM ") ==
      0);
  REQUIRE(ordered.merge->outputs.size() == 3);
  const auto& names = ordered.merge->outputs[1];
  CHECK(names.combine == Combine::StringAgg);
  CHECK(names.source == 1);
  CHECK(names.separator == ", ");
  REQUIRE(names.within.size() == 2);
  CHECK(names.within[0].column == 2);
  CHECK(names.within[0].descending);
  CHECK(names.within[0].nulls_first);
  CHECK(names.within[1].column == 3);
  CHECK_FALSE(names.within[1].descending);
  const auto& totals = ordered.merge->outputs[2];
  CHECK(totals.combine == Combine::ArrayAgg);
  CHECK(totals.source == 4);
  REQUIRE(totals.within.size() == 1);
  CHECK(totals.within[0].nulls_first);
  // DISTINCT alone: ordered by the value; no ORDER BY: each shard's order, shard after shard.
  Route distinct = planned("SELECT array_agg(DISTINCT note), string_agg(note, '-') FROM orders");
  REQUIRE(distinct.merge);
  INFO(distinct.merge->shard_sql);
  CHECK(distinct.merge->shard_sql.find("SELECT array_agg(DISTINCT note ORDER BY note ASC NULLS LAST), "
                                       "array_agg(DISTINCT note ORDER BY note "
                                       "ASC NULLS LAST), array_agg(note) FROM ") == 0);
  CHECK(distinct.merge->outputs[0].within_distinct);
  CHECK(distinct.merge->outputs[1].within.empty());
  // Sort keys with parentheses, commas in strings, explicit directions; words that only look like
  // ORDER BY inside a name.
  Route keys = planned(
      "SELECT array_agg(coalesce(note, 'x,y') ORDER BY coalesce(note, 'a,b') ASC NULLS LAST, (id + 1) * 2 "
      "DESC "
      "NULLS LAST) AS orders_by FROM orders");
  REQUIRE(keys.merge);
  CHECK(keys.merge->shard_sql.find("SELECT array_agg(coalesce(note, 'x,y') ORDER BY coalesce(note, 'a,b') "
                                   "ASC NULLS LAST, (id + 1) * 2 "
                                   "DESC NULLS LAST), array_agg(coalesce(note, 'a,b') ORDER BY") == 0);
  REQUIRE(keys.merge->outputs.at(0).within.size() == 2);
  CHECK_FALSE(keys.merge->outputs[0].within[1].nulls_first);
  CHECK(keys.merge->outputs[0].name == "orders_by");
  // An E'' separator (its value the parser's) and E'' strings in keys; \' inside one is refused.
  Route escaped = planned("SELECT string_agg(note, E'\\n' ORDER BY note || E'\\\\)') FROM orders");
  REQUIRE(escaped.merge);
  CHECK(escaped.merge->outputs.at(0).separator == "\n");
  CHECK(escaped.merge->shard_sql.find("SELECT array_agg(note ORDER BY note || E'\\\\)' ASC NULLS LAST), ") ==
        0);
  CHECK(planned("SELECT string_agg(note, ',' ORDER BY note || E'\\')') FROM orders").kind ==
        RouteKind::Error);
  // Texts that differ only in literals share a normalized cache key: each keeps its own.
  for (const char* separator : {"+", "-", "+"}) {
    Route again =
        planned(std::string("SELECT string_agg(note, '") + separator + "' ORDER BY id) FILTER (WHERE id > " +
                (separator[0] == '+' ? "1" : "2") + ") FROM orders");
    REQUIRE(again.merge);
    CHECK(again.merge->outputs.at(0).separator == separator);
    CHECK(again.merge->shard_sql.find(separator[0] == '+' ? "id > 1" : "id > 2") != std::string::npos);
  }
  // A separator that is not a literal stays refused, saying what can be merged.
  for (const char* sql :
       {"SELECT string_agg(note, note) FROM orders", "SELECT string_agg(note, $1) FROM orders",
        "SELECT array_agg(note ORDER BY note USING <) FROM orders"}) {
    INFO(sql);
    Route refused = planned(sql);
    CHECK(refused.kind == RouteKind::Error);
    CHECK(refused.error.sqlstate == "0A000");
    CHECK(refused.error.message.find("string_agg with a literal separator") != std::string::npos);
  }
}
