// INSERT ... SELECT into a sharded table (route_insert_select.cc): the shards a co-located run
// uses, the SQL each runs (sources read through the owned-rows splice, the target untouched), the
// cutover wait, and what SHOW ROUTE prints. The refusals are in tests/routing/insert_select.route.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "parser/analyze.h"
#include "router/router.h"

using namespace sw::router;

namespace {

RoutingRules rules(bool owned_rows_only = true) {
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"archive", "tenant_id", "int4", ""});
  auto out = RoutingRules::from_config(sharding, {}, owned_rows_only);
  REQUIRE(out.is_ok());
  return out.value();
}

Route routed(const std::string& sql, const Directory& dir, const RoutingRules& with) {
  static std::map<std::string, std::shared_ptr<const sw::parser::QueryFacts>> keep;
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), facts.status().message);
  keep[sql] = facts.value();
  return route(keep[sql]->statements.at(0), nullptr, dir, with);
}

const std::string kOwnedOrders =
    "(SELECT * FROM orders sw_owned WHERE NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets sw_fenced "
    "WHERE sw_fenced.bucket = shardwire.bucket_of(sw_owned.\"tenant_id\"::bigint, 16) AND "
    "sw_fenced.holds_rows))";

}  // namespace

TEST_CASE("keyless INSERT ... SELECT: every shard, each reading its own buckets' rows") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route r = routed("INSERT INTO archive (tenant_id, id) SELECT o.tenant_id, id FROM orders o RETURNING id",
                   *dir, rules());
  REQUIRE(r.kind == RouteKind::Scatter);
  CHECK(r.insert_select);
  CHECK(r.writes);
  CHECK(r.table == "archive");
  CHECK(r.shards == std::vector<int>{0, 1, 2});
  CHECK_FALSE(r.migrating);
  CHECK(r.shard_sql == "INSERT INTO archive (tenant_id, id) SELECT o.tenant_id, id FROM " + kOwnedOrders +
                           " o RETURNING id");
  CHECK(describe_route(r, *dir) ==
        "scatter s0,s1,s2 insert-select; INSERT ... SELECT from orders by its key tenant_id: each shard "
        "inserts the rows of its own buckets, committed together; each shard runs: " +
            r.shard_sql + "; writes; directory version 1");
}

TEST_CASE("INSERT ... SELECT of a table into itself: the source is spliced, the target is not") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  Route r =
      routed("INSERT INTO orders (tenant_id, id) SELECT tenant_id, id + 1000 FROM orders", *dir, rules());
  REQUIRE(r.insert_select);
  CHECK(r.shard_sql ==
        "INSERT INTO orders (tenant_id, id) SELECT tenant_id, id + 1000 FROM " + kOwnedOrders + " AS orders");
}

TEST_CASE("INSERT ... SELECT with a key list on several shards: only those shards") {
  // tenant 1 -> bucket 8 (s2), 2 -> 10 (s1), 5 -> 13 (s1)
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route r = routed(
      "INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders WHERE tenant_id IN (1, 2, 5)",
      *dir, rules());
  REQUIRE(r.insert_select);
  CHECK(r.shards == std::vector<int>{1, 2});
  CHECK(route_summary(r, *dir) == "scatter s1,s2 insert-select");
  // Keys on one shard: a plain single-shard write, no splice.
  Route one =
      routed("INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders WHERE tenant_id IN (2, 5)",
             *dir, rules());
  CHECK(one.kind == RouteKind::Shard);
  CHECK(one.shard == 1);
  CHECK_FALSE(one.insert_select);
}

TEST_CASE("INSERT ... SELECT waits for the cutover of a bucket it reads") {
  std::vector<BucketEntry> buckets(16);
  for (uint32_t b = 0; b < 16; ++b) buckets[b].shard = static_cast<uint16_t>(b % 3);
  buckets[9].state = BucketState::Migrating;
  Directory dir(3, {"s0", "s1", "s2"}, std::move(buckets));
  Route keyless =
      routed("INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders", dir, rules());
  CHECK(keyless.migrating);
  CHECK(keyless.buckets == std::vector<uint32_t>{9});
  CHECK(route_summary(keyless, dir) == "scatter s0,s1,s2 insert-select waits-for-cutover 9");
  // Keys 1, 2 are in buckets 8, 10: bucket 9 is not read.
  Route listed =
      routed("INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders WHERE tenant_id IN (1, 2)",
             dir, rules());
  CHECK_FALSE(listed.migrating);
  CHECK(listed.buckets.empty());
}

TEST_CASE("without a catalog (no fence tables) the shards run the client's text") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  const std::string sql = "INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders";
  Route r = routed(sql, *dir, rules(false));
  REQUIRE(r.insert_select);
  CHECK(r.shard_sql == sql);
}

TEST_CASE("a source reference the splice cannot replace is refused, not read unfiltered") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  Route r =
      routed("INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM ONLY orders", *dir, rules());
  CHECK(r.kind == RouteKind::Error);
  CHECK(r.error.sqlstate == "0A000");
  CHECK(r.error.message.find("ONLY orders") != std::string::npos);
}
