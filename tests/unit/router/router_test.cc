// Router API beyond the golden files: rules from config, the Parse -> Bind
// flow, route rendering, and edge cases.
#include <doctest/doctest.h>

#include <string>

#include "parser/analyze.h"
#include "router/router.h"

using namespace sw::router;

namespace {

std::string be16(int v) { return {static_cast<char>((v >> 8) & 0xff), static_cast<char>(v & 0xff)}; }
std::string be32(int64_t v) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  return out;
}

RoutingRules orders_rules(const std::string& default_shard = "s0") {
  sw::config::Sharding sharding;
  sharding.default_shard = default_shard;
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"app.devices", "id", "uuid", ""});
  auto rules = RoutingRules::from_config(sharding);
  REQUIRE(rules.is_ok());
  return rules.value();
}

const sw::parser::StatementFacts& first(const std::string& sql) {
  static thread_local std::shared_ptr<const sw::parser::QueryFacts> keep;
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), sql);
  keep = facts.value();
  return keep->statements.at(0);
}

}  // namespace

TEST_CASE("RoutingRules from config: schemas, key types, lookup") {
  RoutingRules rules = orders_rules();
  CHECK(rules.default_shard() == "s0");
  REQUIRE(rules.find("", "orders") != nullptr);
  CHECK(rules.find("any", "orders") != nullptr);  // configured unqualified: any schema
  CHECK(rules.find("app", "devices") != nullptr);
  CHECK(rules.find("", "devices") != nullptr);  // unqualified reference: search_path decides
  CHECK(rules.find("other", "devices") == nullptr);
  CHECK(rules.find("", "Orders") == nullptr);
  CHECK(rules.find("app", "devices")->key_type == KeyType::Uuid);
  CHECK(rules.find("app", "devices")->config_name == "app.devices");

  sw::config::Sharding bad;
  bad.tables.push_back({"t", "k", "numeric", ""});
  auto refused = RoutingRules::from_config(bad);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().fault == sw::Fault::Config);
  CHECK(refused.status().message.find("sharding.tables[0] (t)") != std::string::npos);
}

TEST_CASE("extended protocol: Parse routes at Bind, Bind picks the shard") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  RoutingRules rules = orders_rules();
  const auto& statement = first("UPDATE orders SET total = $2 WHERE tenant_id = $1");
  Route at_parse = route(statement, nullptr, *dir, rules);
  CHECK(at_parse.kind == RouteKind::AtBind);
  CHECK(at_parse.table == "orders");
  CHECK(at_parse.writes);

  // tenant 2 -> bucket 10 -> s1 (10 mod 3), as PostgreSQL's MODULUS 16 partitioning.
  std::string rest = be16(0) + be16(2) + be32(1) + "2" + be32(2) + "10" + be16(0);
  auto values = sw::wire::decode_bind_values(rest, {});
  REQUIRE(values.is_ok());
  Route at_bind = route(statement, &values.value(), *dir, rules);
  CHECK(at_bind.kind == RouteKind::Shard);
  CHECK(at_bind.shard == 1);
  CHECK(at_bind.buckets == std::vector<uint32_t>{10});
  CHECK(at_bind.writes);
  CHECK(at_bind.directory_version == dir->version());
  CHECK(route_summary(at_bind, *dir) == "shard s1 buckets 10");
  CHECK(at_bind.reason.empty());  // the data path does not explain
  CHECK(describe_route(route(statement, &values.value(), *dir, rules, Explain::Yes), *dir) ==
        "shard s1 buckets 10 (bucket 10 ACTIVE); by the key tenant_id of orders; writes; "
        "directory version 1");
}

TEST_CASE("route kinds render for people") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  RoutingRules rules = orders_rules();
  auto text = [&](const std::string& sql) {
    auto facts = sw::parser::analyze(sql);
    REQUIRE(facts.is_ok());
    return describe_route(route_query(*facts.value(), nullptr, *dir, rules, Explain::Yes), *dir);
  };
  CHECK(
      text("SELECT * FROM orders") ==
      "scatter s0,s1 concat; orders has no key value: every shard, rows concatenated; each shard runs: "
      "SELECT * FROM (SELECT * FROM orders sw_owned WHERE NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets "
      "sw_fenced WHERE sw_fenced.bucket = shardwire.bucket_of(sw_owned.\"tenant_id\"::bigint, 16) AND "
      "sw_fenced.holds_rows)) AS "
      "orders; directory version 1");
  CHECK(text("SELECT 1") == "default s0; no sharded table; directory version 1");
  CHECK(text("BEGIN") ==
        "session; transaction control or session statement: no shard needed; directory version 1");
  CHECK(text("CREATE TABLE orders (tenant_id bigint)") ==
        "all-shards s0,s1 fence orders; DDL on sharded table orders: every shard in turn (not "
        "atomic); installs the fence trigger; directory version 1");
  CHECK(text("UPDATE orders SET tenant_id = 7")
            .rfind("scatter s0,s1 keyless-write; UPDATE sets the key of orders", 0) == 0);
  CHECK(std::string(route_kind_name(RouteKind::AtBind)) == "at-bind");
}

TEST_CASE("errors are client faults; a default shard missing from the directory is a proxy fault") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  Route refused =
      route(first("UPDATE orders SET tenant_id = 7 WHERE CURRENT OF c"), nullptr, *dir, orders_rules());
  CHECK(refused.kind == RouteKind::Error);
  CHECK(refused.error.fault == sw::Fault::Client);
  CHECK(refused.error.sqlstate == "0A000");
  CHECK(refused.table == "orders");

  Route lost = route(first("SELECT 1"), nullptr, *dir, orders_rules("gone"));
  CHECK(lost.kind == RouteKind::Error);
  CHECK(lost.error.fault == sw::Fault::Proxy);
  CHECK(lost.error.message == "default shard gone is not in the directory");
}

TEST_CASE("bucket states and a directory snapshot's own layout") {
  std::vector<BucketEntry> buckets(16);
  for (uint32_t b = 0; b < 16; ++b) buckets[b].shard = static_cast<uint16_t>(b % 2);
  buckets[10].shard = 0;                       // tenant 2's bucket moved to s0 ...
  buckets[10].state = BucketState::Migrating;  // ... and moving again
  Directory dir(42, {"s0", "s1"}, buckets);
  Route moved =
      route(first("SELECT * FROM orders WHERE tenant_id = 2"), nullptr, dir, orders_rules(), Explain::Yes);
  CHECK(moved.kind == RouteKind::Shard);
  CHECK(moved.shard == 0);
  CHECK(moved.migrating);
  CHECK(moved.directory_version == 42);
  CHECK(describe_route(moved, dir) ==
        "shard s0 buckets 10 migrating (bucket 10 MIGRATING); by the key tenant_id of orders; "
        "directory version 42");
}

TEST_CASE("a shard only the catalog names refuses its buckets alone, naming the fix") {
  // Buckets 0..15 on s0/s1 by i mod 2, except tenant 2's bucket 10 on s2, which this instance's
  // config does not list (shard index 2 >= configured_count 2).
  std::vector<BucketEntry> buckets(16);
  for (uint32_t b = 0; b < 16; ++b) buckets[b].shard = static_cast<uint16_t>(b % 2);
  buckets[10].shard = 2;
  Directory dir(7, {"s0", "s1", "s2"}, buckets, 2);
  REQUIRE_FALSE(dir.all_configured());
  auto rules = RoutingRules::from_config(
      [] {
        sw::config::Sharding sharding;
        sharding.default_shard = "s0";
        sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
        return sharding;
      }(),
      "/etc/shardwire.yaml");
  REQUIRE(rules.is_ok());
  const std::string fix =
      "bucket 10 is on shard \"s2\", which is not in this instance's configuration: add shard s2 to shards "
      "in /etc/shardwire.yaml and RELOAD";

  Route lost = route(first("UPDATE orders SET total = 1 WHERE tenant_id = 2"), nullptr, dir, *rules);
  CHECK(lost.kind == RouteKind::Error);
  CHECK(lost.error.sqlstate == "F0000");
  CHECK(lost.error.fault == sw::Fault::Config);
  CHECK(lost.error.message == fix);
  Route scatter = route(first("SELECT * FROM orders"), nullptr, dir, *rules);
  CHECK(scatter.kind == RouteKind::Error);
  CHECK(scatter.error.message == fix);
  CHECK(route(first("CREATE INDEX ON orders (total)"), nullptr, dir, *rules).kind == RouteKind::Error);

  // Every other bucket, and statements on no sharded table, route as before.
  Route kept = route(first("SELECT * FROM orders WHERE tenant_id = 1"), nullptr, dir, *rules);
  CHECK(kept.kind == RouteKind::Shard);
  CHECK(dir.shard_name(static_cast<uint16_t>(kept.shard)) != "s2");
  CHECK(route(first("SELECT 1"), nullptr, dir, *rules).kind == RouteKind::Default);
}

TEST_CASE("statements too deep to analyze route only when they touch no sharded table") {
  auto dir = Directory::initial(16, {"s0", "s1"});
  auto deep = [](const std::string& table) {
    std::string sql = "SELECT * FROM " + table + " WHERE k = ";
    for (int i = 0; i < 300; ++i) sql += "(1 + ";
    sql += "1";
    for (int i = 0; i < 300; ++i) sql += ")";
    return sql;
  };
  Route plain = route(first(deep("countries")), nullptr, *dir, orders_rules());
  CHECK(plain.kind == RouteKind::Default);
  Route sharded = route(first(deep("orders")), nullptr, *dir, orders_rules());
  CHECK(sharded.kind == RouteKind::Error);
  CHECK(sharded.error.message == "SELECT on sharded table orders is nested too deeply to route");
}

TEST_CASE("scatter plans: the SQL each shard runs is the client's, with LIMIT, OFFSET and avg rewritten") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  const RoutingRules rules = orders_rules();
  auto shard_sql = [&](const std::string& sql) {
    Route planned = route(first(sql), nullptr, *dir, rules);
    REQUIRE_MESSAGE(planned.kind == RouteKind::Scatter, sql << ": " << planned.error.message);
    REQUIRE(planned.merge);
    return planned.merge->shard_sql;
  };
  // Each shard reads only the rows of the buckets it owns (not fenced there).
  const std::string owned =
      "(SELECT * FROM orders sw_owned WHERE NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets sw_fenced "
      "WHERE sw_fenced.bucket = shardwire.bucket_of(sw_owned.\"tenant_id\"::bigint, 16) AND "
      "sw_fenced.holds_rows)) AS orders";
  CHECK(shard_sql("SELECT id FROM orders ORDER BY id LIMIT 10 OFFSET 20") ==
        "SELECT id FROM " + owned + " ORDER BY id LIMIT 30 OFFSET 0");
  CHECK(shard_sql("SELECT id FROM orders ORDER BY id OFFSET 7 ROWS FETCH FIRST 3 ROWS ONLY") ==
        "SELECT id FROM " + owned + " ORDER BY id OFFSET 0 ROWS FETCH FIRST 10 ROWS ONLY");
  CHECK(shard_sql("select status, AVG( total ) AS a, count(*) from orders group by 1 limit 5 offset 1") ==
        "select status, sum( total ), count( total ) + 0 * (avg( total ) IS NULL)::int AS a, count(*) from " +
            owned + " group by 1 limit NULL offset 0");
  // FETCH FIRST takes no ALL: the shards' groups are unlimited with NULL.
  CHECK(shard_sql("SELECT status, count(*) FROM orders GROUP BY 1 ORDER BY 1 FETCH FIRST 2 ROWS ONLY") ==
        "SELECT status, count(*) FROM " + owned + " GROUP BY 1 ORDER BY 1 FETCH FIRST NULL ROWS ONLY");
  CHECK(shard_sql("SELECT count(*) FROM orders OFFSET 1 ROWS FETCH NEXT 1 ROW ONLY") ==
        "SELECT count(*) FROM " + owned + " OFFSET 0 ROWS FETCH NEXT NULL ROW ONLY");
  CHECK(shard_sql("SELECT avg(total * 2 /* ) */ + length(')')) FROM orders") ==
        "SELECT sum(total * 2 /* ) */ + length(')')), count(total * 2 /* ) */ + length(')')) + 0 * "
        "(avg(total * 2 /* ) */ + length(')')) IS NULL)::int FROM " +
            owned + "");
  CHECK(shard_sql("SELECT id FROM orders ORDER BY id LIMIT ALL OFFSET 2") ==
        "SELECT id FROM " + owned + " ORDER BY id LIMIT ALL OFFSET 0");
  // Output positions behind a split avg move by one per avg before them.
  CHECK(shard_sql("SELECT avg(total), status, avg(qty) FROM orders GROUP BY 2 ORDER BY 2 DESC, 3") ==
        "SELECT sum(total), count(total) + 0 * (avg(total) IS NULL)::int, status, sum(qty), count(qty) + 0 * "
        "(avg(qty) IS NULL)::int FROM " +
            owned +
            " GROUP BY 3 ORDER BY 3 "
            "DESC, 4");
  CHECK(shard_sql("SELECT avg(total), status, avg(qty) FROM orders GROUP BY 2 ORDER BY 2 DESC, 1") ==
        "SELECT sum(total), count(total) + 0 * (avg(total) IS NULL)::int, status, sum(qty), count(qty) + 0 * "
        "(avg(qty) IS NULL)::int FROM " +
            owned +
            " GROUP BY 3 ORDER BY 3 "
            "DESC, 1");
  // Literal values of the normalized cache: a second text with other numbers gets its own.
  CHECK(shard_sql("SELECT id FROM orders ORDER BY id LIMIT 11 OFFSET 4") ==
        "SELECT id FROM " + owned + " ORDER BY id LIMIT 15 OFFSET 0");
  CHECK(shard_sql("  SELECT id FROM orders ORDER BY id LIMIT 1 OFFSET 4;") ==
        "SELECT id FROM " + owned + " ORDER BY id LIMIT 5 OFFSET 0");
  Route shown = route(first("SELECT count(*) FROM orders"), nullptr, *dir, rules);
  CHECK(describe_route(shown, *dir)
            .find("aggregate (count of $1); each shard runs: SELECT count(*) FROM (SELECT * FROM orders "
                  "sw_owned") != std::string::npos);
}

TEST_CASE("scatter reads: every sharded table reference reads only the shard's own buckets' rows") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  const RoutingRules rules = orders_rules();
  auto owned = [](const std::string& written, const std::string& alias) {
    return "(SELECT * FROM " + written +
           " sw_owned WHERE NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets sw_fenced WHERE "
           "sw_fenced.bucket = "
           "shardwire.bucket_of(sw_owned.\"tenant_id\"::bigint, 16) AND sw_fenced.holds_rows))" +
           alias;
  };
  auto planned = [&](const std::string& sql) {
    Route r = route(first(sql), nullptr, *dir, rules);
    REQUIRE_MESSAGE(r.kind == RouteKind::Scatter, sql << ": " << r.error.message);
    return r;
  };
  auto shard_sql = [&](const std::string& sql) {
    Route r = planned(sql);
    return r.merge ? r.merge->shard_sql : r.shard_sql;
  };
  // The client's alias stays where it wrote it; without one the table's name becomes the alias.
  CHECK(shard_sql("SELECT o.id FROM orders AS o WHERE o.total > 1") ==
        "SELECT o.id FROM " + owned("orders", "") + " AS o WHERE o.total > 1");
  CHECK(shard_sql("SELECT orders.id FROM orders JOIN orders o2 ON o2.tenant_id = orders.tenant_id") ==
        "SELECT orders.id FROM " + owned("orders", " AS orders") + " JOIN " + owned("orders", "") +
            " o2 ON o2.tenant_id = orders.tenant_id");
  CHECK(shard_sql("SELECT * FROM public . \"orders\" WHERE \"orders\".id > 0") ==
        "SELECT * FROM " + owned("public . \"orders\"", " AS \"orders\"") + " WHERE \"orders\".id > 0");
  // A text whose literals differ in length reuses the cached facts: the table's place moves with it.
  CHECK(shard_sql("SELECT 'a' AS x, id FROM orders WHERE total > 1") ==
        "SELECT 'a' AS x, id FROM " + owned("orders", " AS orders") + " WHERE total > 1");
  CHECK(shard_sql("SELECT 'abcdefgh' AS x, id FROM orders WHERE total > 12345") ==
        "SELECT 'abcdefgh' AS x, id FROM " + owned("orders", " AS orders") + " WHERE total > 12345");
  // COPY of the table becomes COPY of a query of its own rows, with the client's options.
  Route copy = planned("COPY orders (id, total) TO STDOUT WITH (FORMAT csv, HEADER)");
  CHECK(copy.copy_out);
  CHECK(copy.copy_header);
  CHECK(copy.shard_sql == "COPY (SELECT id, total FROM " + owned("orders", " AS orders") +
                              ") TO STDOUT WITH (FORMAT csv, HEADER)");
  CHECK(planned("COPY orders TO STDOUT").shard_sql ==
        "COPY (SELECT * FROM " + owned("orders", " AS orders") + ") TO STDOUT");
  CHECK(planned("COPY (SELECT id FROM orders o) TO STDOUT").shard_sql ==
        "COPY (SELECT id FROM " + owned("orders", "") + " o) TO STDOUT");
  // Forms a replaced name would change are refused, never sent as written.
  for (const char* sql :
       {"SELECT * FROM ONLY orders", "TABLE orders", "SELECT public.orders.id FROM public.orders"}) {
    Route refused = route(first(sql), nullptr, *dir, rules);
    CHECK_MESSAGE(refused.kind == RouteKind::Error, sql);
    CHECK_MESSAGE(refused.error.sqlstate == "0A000", sql);
  }
}

TEST_CASE("without a catalog nothing moves buckets: keyless reads and COPY run the client's text") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  auto rules = RoutingRules::from_config(sharding, {}, /*owned_rows_only=*/false);
  REQUIRE(rules.is_ok());
  CHECK_FALSE(rules.value().owned_rows_only());
  for (const char* sql : {"SELECT id FROM orders WHERE total > 1", "COPY orders TO STDOUT",
                          "SELECT * FROM ONLY orders", "COPY (SELECT id FROM orders) TO STDOUT"}) {
    Route r = route(first(sql), nullptr, *dir, rules.value());
    REQUIRE_MESSAGE(r.kind == RouteKind::Scatter, sql << ": " << r.error.message);
    CHECK_MESSAGE(r.shard_sql.empty(), sql);
    CHECK_MESSAGE((r.merge == nullptr || r.merge->shard_sql == sql), sql);
  }
  // A merged read keeps its plan's rewrite, without the fence-table splice.
  Route merged = route(first("SELECT count(*) FROM orders"), nullptr, *dir, rules.value());
  REQUIRE(merged.merge != nullptr);
  CHECK(merged.merge->shard_sql.find("fenced_buckets") == std::string::npos);
}

TEST_CASE("a scatter read waits while a bucket is in cutover; a keyed read of another bucket does not") {
  auto base = Directory::initial(16, {"s0", "s1", "s2"});
  std::vector<BucketEntry> buckets;
  for (uint32_t b = 0; b < base->bucket_count(); ++b) buckets.push_back(base->bucket(b));
  buckets[9].state = BucketState::Migrating;
  auto dir = std::make_shared<const Directory>(2, base->shards(), std::move(buckets));
  const RoutingRules rules = orders_rules();
  Route scatter = route(first("SELECT count(*) FROM orders"), nullptr, *dir, rules);
  CHECK(scatter.kind == RouteKind::Scatter);
  CHECK(scatter.migrating);
  CHECK(scatter.buckets == std::vector<uint32_t>{9});
  CHECK(route_summary(scatter, *dir).find("waits-for-cutover 9") != std::string::npos);
  Route copy = route(first("COPY orders TO STDOUT"), nullptr, *dir, rules);
  CHECK(copy.migrating);
  Route keyed = route(first("SELECT * FROM orders WHERE tenant_id = 2"), nullptr, *dir, rules);
  CHECK(keyed.kind == RouteKind::Shard);
  CHECK_FALSE(keyed.migrating);
}

TEST_CASE("reference tables: rules from config; a scatter read splices only its sharded tables") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  sw::config::Sharding sharding;
  sharding.default_shard = "s1";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.reference_tables = {"plans", "geo.countries"};
  auto made = RoutingRules::from_config(sharding);
  REQUIRE(made.is_ok());
  const RoutingRules& rules = made.value();
  REQUIRE(rules.references().size() == 2);
  REQUIRE(rules.find_reference("", "plans") != nullptr);
  CHECK(rules.find_reference("any", "plans") != nullptr);
  CHECK(rules.find_reference("geo", "countries")->config_name == "geo.countries");
  CHECK(rules.find_reference("other", "countries") == nullptr);
  CHECK(rules.find_reference("", "orders") == nullptr);
  CHECK(rules.find("", "plans") == nullptr);

  // Reads of only reference tables: the default shard, marked any_shard.
  Route only = route(first("SELECT * FROM plans"), nullptr, *dir, rules);
  CHECK(only.kind == RouteKind::Default);
  CHECK(only.shard == 1);
  CHECK(only.any_shard);
  CHECK(only.table == "plans");
  Route unsharded = route(first("SELECT * FROM plans JOIN staging USING (id)"), nullptr, *dir, rules);
  CHECK(unsharded.kind == RouteKind::Default);
  CHECK_FALSE(unsharded.any_shard);  // staging is on the default shard only

  // The owned-rows splice wraps orders and leaves plans as written, in a concatenation and a merge.
  for (const char* sql :
       {"SELECT o.id, p.name FROM orders o JOIN plans p ON p.id = o.plan_id",
        "SELECT p.name, count(*) FROM orders o JOIN plans p ON p.id = o.plan_id GROUP BY 1"}) {
    Route scatter = route(first(sql), nullptr, *dir, rules);
    REQUIRE_MESSAGE(scatter.kind == RouteKind::Scatter, sql << ": " << scatter.error.message);
    REQUIRE(scatter.merge != nullptr);
    const std::string& shard_sql = scatter.merge->shard_sql;
    CHECK_MESSAGE(shard_sql.find("FROM orders sw_owned") != std::string::npos, shard_sql);
    CHECK_MESSAGE(shard_sql.find("JOIN plans p") != std::string::npos, shard_sql);
    CHECK_MESSAGE(shard_sql.find("FROM plans sw_owned") == std::string::npos, shard_sql);
  }

  // Writes: every shard, marked reference_write; the router does not refuse them.
  Route write = route(first("INSERT INTO plans (id, name) VALUES (1, 'gold')"), nullptr, *dir, rules);
  CHECK(write.kind == RouteKind::AllShards);
  CHECK(write.reference_write);
  CHECK(write.writes);
  CHECK(write.fence_tables.empty());
  Route ddl = route(first("ALTER TABLE plans ADD COLUMN note text"), nullptr, *dir, rules);
  CHECK(ddl.kind == RouteKind::AllShards);
  CHECK_FALSE(ddl.reference_write);
  // A multi-statement string cannot carry a write of every shard.
  auto facts = sw::parser::analyze("SELECT 1; DELETE FROM plans WHERE id = 3");
  REQUIRE(facts.is_ok());
  Route several = route_query(*facts.value(), nullptr, *dir, rules);
  CHECK(several.kind == RouteKind::Error);
  CHECK(several.error.message.find("runs on every shard") != std::string::npos);
}
