// Routing cost (docs/architecture.md §6.3): Route::reason only when explaining, and DmlRouter's
// working state per thread and reused, so that routing a statement of a shape routed before
// allocates only the Route it returns. The count is deterministic: a replaced operator new
// counts this thread's calls while armed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "allocation_count.h"
#include "parser/analyze.h"
#include "router/router.h"

using namespace sw::router;
#if SW_COUNTS_ALLOCATIONS
using sw::test::start_counting_allocations;
using sw::test::stop_counting_allocations;
#endif

namespace {

RoutingRules shop_rules() {
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"items", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"pgbench_accounts", "aid", "integer", ""});
  auto rules = RoutingRules::from_config(sharding);
  REQUIRE(rules.is_ok());
  return rules.value();
}

}  // namespace

TEST_CASE("only Explain::Yes fills the reason of one-shard, default, session and at-Bind routes") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  const RoutingRules rules = shop_rules();
  const char* const cases[][2] = {
      {"SELECT * FROM orders WHERE tenant_id = 2", "by the key tenant_id of orders"},
      {"SELECT * FROM orders o JOIN orders p ON p.tenant_id = o.tenant_id WHERE o.tenant_id = 2",
       "by the key tenant_id of orders"},
      {"SELECT * FROM orders o JOIN items i ON i.tenant_id = o.tenant_id WHERE o.tenant_id = 2",
       "by the keys of orders, items"},
      {"SELECT * FROM orders WHERE tenant_id = $1", "the key of orders is a parameter: routed at Bind"},
      {"SELECT * FROM orders WHERE tenant_id = 2 AND tenant_id = 3",
       "the key values match no row (NULL or contradictory)"},
      {"SELECT 1", "no sharded table"},
      {"BEGIN", "transaction control or session statement: no shard needed"},
      {"SHOW work_mem", "session or transaction statement: no shard needed"},
      {"", "empty query: no shard needed"},
      {"BEGIN; SET x = 1", "only session statements: no shard needed"},
  };
  for (const auto& c : cases) {
    auto facts = sw::parser::analyze(c[0]);
    REQUIRE_MESSAGE(facts.is_ok(), c[0]);
    CAPTURE(c[0]);
    CHECK(route_query(*facts.value(), nullptr, *dir, rules).reason.empty());
    CHECK(route_query(*facts.value(), nullptr, *dir, rules, Explain::Yes).reason == c[1]);
  }
  // Routes off the data path (scatter, errors) carry theirs either way.
  auto reason_of = [&](const std::string& sql) {
    auto facts = sw::parser::analyze(sql);
    REQUIRE_MESSAGE(facts.is_ok(), sql);
    return route_query(*facts.value(), nullptr, *dir, rules).reason;
  };
  CHECK(reason_of("SELECT * FROM orders") == "orders has no key value: every shard, rows concatenated");
  CHECK(reason_of("UPDATE orders SET tenant_id = 7").find("sets the key") != std::string::npos);
}

#if SW_COUNTS_ALLOCATIONS

namespace {

// The heap allocations of routing `sql` once more, after a first (warming) route; `kind` is the
// route both times.
uint64_t warm_allocations(const std::string& sql, const BindValues* params, RouteKind kind) {
  static const auto dir = Directory::initial(4096, {"s0", "s1"});
  static const RoutingRules rules = shop_rules();
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), sql);
  const Route first = route_query(**facts, params, *dir, rules);
  REQUIRE_MESSAGE(first.kind == kind, sql, ": ", route_kind_name(first.kind), " ", first.error.message);
  start_counting_allocations();
  const Route again = route_query(**facts, params, *dir, rules);
  const uint64_t allocations = stop_counting_allocations();
  CHECK_MESSAGE(again.kind == kind, sql);
  CHECK_MESSAGE(again.buckets == first.buckets, sql);
  return allocations;
}

}  // namespace

TEST_CASE("a warm keyed statement allocates only its route's bucket list") {
  const char* const keyed[] = {
      "SELECT * FROM orders WHERE tenant_id = 42",
      "SELECT * FROM orders WHERE tenant_id IN (42, 42)",
      "UPDATE orders SET total = total + 1 WHERE tenant_id = 42",
      "DELETE FROM orders WHERE tenant_id = 42 AND id = 7",
      "INSERT INTO orders (tenant_id, total) VALUES (42, 1)",
      "SELECT * FROM orders o JOIN items i ON i.tenant_id = o.tenant_id WHERE o.tenant_id = 42",
      "SELECT * FROM orders WHERE tenant_id = 42 AND EXISTS (SELECT 1 FROM items i WHERE i.tenant_id = "
      "orders.tenant_id)",
  };
  for (const std::string sql : keyed)
    CHECK_MESSAGE(warm_allocations(sql, nullptr, RouteKind::Shard) == 1, sql);

  // A table name longer than std::string's inline buffer is one more: Route::table's copy.
  CHECK(warm_allocations("SELECT abalance FROM pgbench_accounts WHERE aid = 5", nullptr, RouteKind::Shard) ==
        2);

  // Bind values decide as literals do.
  // No format codes, one parameter: 2 bytes "42"; no result formats.
  const std::string bind{'\0', '\0', '\0', '\1', '\0', '\0', '\0', '\2', '4', '2', '\0', '\0'};
  auto values = sw::wire::decode_bind_values(bind, {});
  REQUIRE(values.is_ok());
  CHECK(warm_allocations("SELECT * FROM orders WHERE tenant_id = $1", &values.value(), RouteKind::Shard) ==
        1);
}

TEST_CASE("a warm route without buckets allocates nothing") {
  CHECK(warm_allocations("SELECT * FROM orders WHERE tenant_id = $1", nullptr, RouteKind::AtBind) == 0);
  CHECK(warm_allocations("UPDATE pgbench_tellers SET tbalance = 1 WHERE tid = 3", nullptr,
                         RouteKind::Default) == 0);
  CHECK(warm_allocations("BEGIN", nullptr, RouteKind::Session) == 0);
  CHECK(warm_allocations("END", nullptr, RouteKind::Session) == 0);
  CHECK(warm_allocations("SELECT * FROM orders WHERE tenant_id = 1 AND tenant_id = 2", nullptr,
                         RouteKind::Default) == 0);
}

TEST_CASE("a keyed route built in a recycled route's buffers allocates nothing") {
  static const auto dir = Directory::initial(4096, {"s0", "s1"});
  static const RoutingRules rules = shop_rules();
  // pgbench_accounts: longer than std::string's inline buffer, so the name's buffer counts too.
  auto facts = sw::parser::analyze("SELECT abalance FROM pgbench_accounts WHERE aid = 5");
  REQUIRE(facts.is_ok());
  Route done = route_query(**facts, nullptr, *dir, rules);
  REQUIRE(done.kind == RouteKind::Shard);
  const std::vector<uint32_t> buckets = done.buckets;
  recycle(done);
  CHECK(done.buckets.empty());
  CHECK(done.table.empty());
  CHECK(done.kind == RouteKind::Shard);  // the rest stays

  start_counting_allocations();
  Route again = route_query(**facts, nullptr, *dir, rules);
  CHECK(stop_counting_allocations() == 0);
  CHECK(again.kind == RouteKind::Shard);
  CHECK(again.buckets == buckets);
  CHECK(again.table == "pgbench_accounts");

  // A bucket list longer than kMaxRecycledBuckets is not kept: the next route allocates its own
  // (and its name, the recycled name buffer having gone to `again`).
  Route large;
  large.buckets.reserve(kMaxRecycledBuckets + 1);
  recycle(large);
  start_counting_allocations();
  const Route third = route_query(**facts, nullptr, *dir, rules);
  CHECK(stop_counting_allocations() == 2);
  CHECK(third.buckets == buckets);
}

#endif  // SW_COUNTS_ALLOCATIONS
