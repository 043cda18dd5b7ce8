// Scatter plans (route_merge.cc) as to how the shards order text: explicit COLLATE clauses that
// do not order by bytes, and the tables whose column collations the shards report.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>

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

TEST_CASE("a COLLATE that does not order by bytes is kept in the plan; C, POSIX, ucs_basic are not") {
  Route icu = planned(R"(SELECT note COLLATE "de-x-icu" AS n FROM orders ORDER BY n)");
  REQUIRE(icu.merge);
  CHECK(icu.merge->foreign_collation == "de-x-icu");
  for (const char* sql : {R"(SELECT note COLLATE "C" AS n FROM orders ORDER BY n)",
                          R"(SELECT note COLLATE "POSIX" AS n FROM orders ORDER BY n)",
                          R"(SELECT note COLLATE ucs_basic AS n FROM orders ORDER BY n)",
                          "SELECT note FROM orders ORDER BY note"}) {
    Route route_of = planned(sql);
    REQUIRE_MESSAGE(route_of.merge, sql);
    CHECK_MESSAGE(route_of.merge->foreign_collation.empty(), sql);
  }
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
