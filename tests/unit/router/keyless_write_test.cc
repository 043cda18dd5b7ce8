// UPDATE and DELETE without a key: a split write to every shard, each shard's SQL the client's text
// with the owned-rows condition ANDed to its WHERE (or a WHERE added before RETURNING or at the
// end); the forms it cannot run exactly on every shard are refused with 0A000 saying what to add.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "parser/analyze.h"
#include "router/bucket_hash.h"
#include "router/router.h"

using namespace sw::router;

namespace {

RoutingRules keyless_rules() {
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"items", "tenant_id", "bigint", ""});
  auto rules = RoutingRules::from_config(sharding);
  REQUIRE(rules.is_ok());
  return rules.value();
}

Route routed(const std::string& sql, const Directory& dir) {
  static std::map<std::string, std::shared_ptr<const sw::parser::QueryFacts>> keep;
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), facts.status().message);
  keep[sql] = facts.value();
  return route(keep[sql]->statements.at(0), nullptr, dir, keyless_rules(), Explain::Yes);
}

const std::string kOwned =
    "NOT EXISTS (SELECT 1 FROM shardwire.fenced_buckets sw_fenced WHERE sw_fenced.bucket = "
    "shardwire.bucket_of(\"orders\".\"tenant_id\"::bigint, 16) AND sw_fenced.holds_rows)";

// The SQL every shard runs (the same on each: checked).
std::string shard_sql(const std::string& sql) {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route r = routed(sql, *dir);
  REQUIRE_MESSAGE(r.kind == RouteKind::Scatter, sql << ": " << route_summary(r, *dir));
  REQUIRE(r.keyless_write);
  REQUIRE(r.split_write);
  REQUIRE(r.shards == std::vector<int>{0, 1, 2});
  REQUIRE(r.shard_statements.size() == 3);
  for (const auto& statement : r.shard_statements) CHECK(statement.sql == r.shard_statements[0].sql);
  return r.shard_statements[0].sql;
}

std::string refusal(const std::string& sql) {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route r = routed(sql, *dir);
  REQUIRE_MESSAGE(r.kind == RouteKind::Error, sql << ": " << route_summary(r, *dir));
  CHECK(r.error.sqlstate == "0A000");
  return r.error.message;
}

}  // namespace

TEST_CASE("a keyless UPDATE or DELETE: every shard, its WHERE restricted to the shard's own rows") {
  CHECK(shard_sql("UPDATE orders SET total = 0") == "UPDATE orders SET total = 0\n WHERE " + kOwned + " ");
  CHECK(shard_sql("DELETE FROM orders WHERE total > 1 OR status = 'x'") ==
        "DELETE FROM orders WHERE ( total > 1 OR status = 'x'\n) AND " + kOwned + " ");
  CHECK(shard_sql("update orders set total = 1 where (total) > 2 returning id, (total)") ==
        "update orders set total = 1 where ( (total) > 2 ) AND " + kOwned + " returning id, (total)");
  CHECK(shard_sql("DELETE FROM orders RETURNING *") ==
        "DELETE FROM orders  WHERE " + kOwned + " RETURNING *");
  // A trailing comment or semicolon cannot swallow the condition.
  CHECK(shard_sql("UPDATE orders SET total = 0 WHERE id = 1 -- why;") ==
        "UPDATE orders SET total = 0 WHERE ( id = 1 -- why\n) AND " + kOwned + " ;");
  CHECK(shard_sql("DELETE FROM orders;") == "DELETE FROM orders\n WHERE " + kOwned + " ");
  // An alias qualifies the key; WHERE inside a subquery or a CTE is not the statement's.
  CHECK(shard_sql("UPDATE orders AS o SET total = o.total + 1 WHERE o.id IN (SELECT 1 WHERE true)") ==
        "UPDATE orders AS o SET total = o.total + 1 WHERE ( o.id IN (SELECT 1 WHERE true)\n) AND NOT EXISTS "
        "(SELECT 1 FROM shardwire.fenced_buckets sw_fenced WHERE sw_fenced.bucket = "
        "shardwire.bucket_of(\"o\".\"tenant_id\"::bigint, 16) AND sw_fenced.holds_rows) ");
  CHECK(shard_sql("WITH x AS (SELECT 1 AS v WHERE false) DELETE FROM orders USING x WHERE total = x.v") ==
        "WITH x AS (SELECT 1 AS v WHERE false) DELETE FROM orders USING x WHERE ( total = x.v\n) AND " +
            kOwned + " ");
  // Co-located on the key, another sharded table may be read; SET key = key keeps the key.
  CHECK(
      shard_sql("UPDATE orders SET tenant_id = tenant_id FROM items WHERE items.tenant_id = orders.tenant_id")
          .find(kOwned) != std::string::npos);
}

TEST_CASE("a keyless write waits for a cutover; SHOW ROUTE names it") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route r = routed("DELETE FROM orders", *dir);
  CHECK(route_summary(r, *dir) == "scatter s0,s1,s2 keyless-write");
  CHECK(r.reason.find("rows of its own buckets") != std::string::npos);
  std::vector<BucketEntry> buckets(16);
  for (uint32_t b = 0; b < 16; ++b) buckets[b].shard = static_cast<uint16_t>(b % 3);
  buckets[5].state = BucketState::Migrating;
  const Directory moving(2, {"s0", "s1", "s2"}, buckets);
  Route waits = routed("DELETE FROM orders", moving);
  CHECK(waits.migrating);
  CHECK(waits.buckets == std::vector<uint32_t>{5});
}

TEST_CASE("keyless writes that cannot run exactly on every shard are refused, saying what to add") {
  CHECK(refusal("UPDATE orders SET total = 1 WHERE CURRENT OF c").find("CURRENT OF") != std::string::npos);
  CHECK(refusal("WITH d AS (DELETE FROM items RETURNING id) UPDATE orders SET total = 0")
            .find("another write") != std::string::npos);
  CHECK(refusal("UPDATE orders SET total = 0 FROM accounts WHERE accounts.id = orders.id")
            .find("unsharded table accounts") != std::string::npos);
  CHECK(refusal("DELETE FROM orders WHERE id IN (SELECT id FROM items)").find("not tied") !=
        std::string::npos);
  CHECK(refusal("EXPLAIN DELETE FROM orders").find("add WHERE tenant_id") != std::string::npos);
}

TEST_CASE("an UPDATE of the key moves rows: every shard deletes its rows and computes the new ones") {
  const std::string values =
      " AS shardwire_new_values)\nSELECT "
      "shardwire.bucket_of(\"orders\".\"tenant_id\"::bigint, 16), \"orders\".*, NULL AS "
      "shardwire_move_end";
  const std::string from =
      " FROM (SELECT (jsonb_populate_record(shardwire_old_row, shardwire_new_values)).* FROM shardwire_old) "
      "AS "
      "\"orders\"";
  const std::string old_row = " RETURNING \"orders\" AS shardwire_old_row, ";
  CHECK(shard_sql("UPDATE orders SET tenant_id = 7") ==
        "WITH shardwire_old AS (DELETE FROM orders WHERE " + kOwned + old_row +
            "jsonb_build_object('tenant_id', ( 7\n))" + values + from);
  CHECK(shard_sql("UPDATE orders SET tenant_id = 7 WHERE total > 2 RETURNING id, total;") ==
        "WITH shardwire_old AS (DELETE FROM orders WHERE ( total > 2 \n) AND " + kOwned + old_row +
            "jsonb_build_object('tenant_id', ( 7 \n))" + values + ",  id, total\n" + from);
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route keyed = routed("UPDATE orders SET tenant_id = 7, total = total + 1 RETURNING *", *dir);
  REQUIRE(keyed.key_move);
  CHECK(keyed.shard_statements[0].sql.find(
            "jsonb_build_object('tenant_id', ( 7\n), 'total', ( total + 1 \n))") != std::string::npos);
  CHECK(keyed.key_move->table_sql == "\"orders\"");
  CHECK(keyed.key_move->client_returning);
  REQUIRE(keyed.key_move->owner.size() == 16);
  for (uint32_t b = 0; b < 16; ++b) CHECK(keyed.key_move->owner[b] == dir->bucket(b).shard);
  CHECK(route_summary(keyed, *dir) == "scatter s0,s1,s2 keyless-write");
  // The rows on one shard (the WHERE's key) and a new key of one bucket: those two shards only.
  auto key_on = [&](uint16_t shard) {
    for (int64_t key = 1;; ++key) {
      if (dir->bucket(bucket_of_hash(hash_int8(key), 16)).shard == shard) return std::to_string(key);
    }
  };
  Route narrowed =
      routed("UPDATE orders SET tenant_id = " + key_on(2) + " WHERE tenant_id = " + key_on(0), *dir);
  REQUIRE(narrowed.key_move);
  CHECK(narrowed.shards == std::vector<int>{0, 2});
  REQUIRE(narrowed.shard_statements.size() == 2);
  CHECK(narrowed.shard_statements[1].shard == 2);
  CHECK(route_summary(narrowed, *dir) == "scatter s0,s2 keyless-write");
  // The key set to itself is no move; forms that cannot move exactly are refused, saying what to do.
  CHECK_FALSE(routed("UPDATE orders SET tenant_id = tenant_id", *dir).key_move);
  CHECK(refusal("UPDATE orders SET tenant_id = 1 WHERE CURRENT OF c").find("CURRENT OF") !=
        std::string::npos);
  CHECK(refusal("UPDATE orders SET tenant_id = 1 FROM items WHERE items.tenant_id = orders.tenant_id "
                "RETURNING orders.id")
            .find("RETURNING list could read the FROM tables") != std::string::npos);
  CHECK(refusal("UPDATE orders SET tenant_id = 1 FROM accounts WHERE accounts.id = orders.id")
            .find("unsharded table accounts") != std::string::npos);
  CHECK(refusal("UPDATE orders SET tenant_id = 1 FROM items WHERE items.id = orders.id")
            .find("not joined on the key") != std::string::npos);
  CHECK(refusal("WITH d AS (DELETE FROM items RETURNING id) UPDATE orders SET tenant_id = 1")
            .find("another write") != std::string::npos);
  CHECK(refusal("UPDATE orders SET (tenant_id, total) = (1, 2, 3)").find("differ in length") !=
        std::string::npos);
  CHECK(refusal("UPDATE orders SET (tenant_id, total) = (1, 2) + 1").find("(columns) = (expressions)") !=
        std::string::npos);
}

TEST_CASE("a move with FROM, WITH or a multi-column SET: each part of the client's text in its place") {
  // FROM co-located tables joined on the key: DELETE ... USING, the SET values in its RETURNING (the
  // one joined row the DELETE took).
  const std::string joined = shard_sql(
      "UPDATE orders o SET tenant_id = i.tenant_id + 100, total = i.qty FROM items i "
      "WHERE i.tenant_id = o.tenant_id AND i.qty > 1");
  CHECK(joined.find("WITH shardwire_old AS (DELETE FROM orders o USING items i \nWHERE ( i.tenant_id = "
                    "o.tenant_id AND i.qty > 1\n) AND ") == 0);
  CHECK(joined.find(" RETURNING \"o\" AS shardwire_old_row, jsonb_build_object('tenant_id', ( "
                    "i.tenant_id + 100\n), 'total', ( i.qty \n)) AS shardwire_new_values)") !=
        std::string::npos);
  CHECK(joined.find(") AS \"o\"") != std::string::npos);
  // IS DISTINCT FROM in a SET value is no FROM list.
  CHECK(shard_sql("UPDATE orders SET tenant_id = 7, paid = total IS DISTINCT FROM 7 WHERE total > 1")
            .find("DELETE FROM orders WHERE ( total > 1") != std::string::npos);
  // The client's WITH list first, RECURSIVE kept.
  INFO(shard_sql("WITH RECURSIVE n(x) AS (SELECT 1) UPDATE orders SET tenant_id = (SELECT x FROM n)"));
  CHECK(shard_sql("WITH RECURSIVE n(x) AS (SELECT 1) UPDATE orders SET tenant_id = (SELECT x FROM n)")
            .find("WITH  RECURSIVE n(x) AS (SELECT 1) , shardwire_old AS (DELETE FROM orders WHERE ") == 0);
  // (columns) = (expressions) and ROW(...): one value per column.
  for (const char* row : {"(tenant_id + 1, total * 2)", "ROW(tenant_id + 1, total * 2)"}) {
    CHECK(shard_sql(std::string("UPDATE orders SET (tenant_id, total) = ") + row + ", id = 5")
              .find("jsonb_build_object('tenant_id', (tenant_id + 1\n), 'total', ( total * 2\n), 'id', ( "
                    "5\n))") != std::string::npos);
  }
  // (columns) = (SELECT ...): its one row's fields, evaluated once, NULLs when it has no row.
  CHECK(shard_sql("UPDATE orders SET (total, tenant_id) = (SELECT 1, orders.tenant_id + 1)")
            .find("jsonb_build_object() || COALESCE((SELECT jsonb_build_object('total', "
                  "shardwire_sub.shardwire_f0, "
                  "'tenant_id', shardwire_sub.shardwire_f1) FROM (SELECT 1, orders.tenant_id + 1\n) AS "
                  "shardwire_sub(shardwire_f0, shardwire_f1)), jsonb_build_object('total', NULL, "
                  "'tenant_id', NULL))") != std::string::npos);
}
