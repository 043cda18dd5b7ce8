// Reads whose key lists span shards: each shard runs the statement with the lists cut to its own
// keys (IN items of other shards -> NULL, = ANY arrays -> its own elements); keys on one shard
// keep the single-shard route. An INSERT whose VALUES rows fall on several shards: one INSERT per
// shard with only its rows, the rest of the text verbatim, parameters renumbered per part.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "parser/analyze.h"
#include "router/router.h"

using namespace sw::router;

namespace {

RoutingRules split_rules() {
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"items", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"sessions", "token", "text", ""});
  auto rules = RoutingRules::from_config(sharding);
  REQUIRE(rules.is_ok());
  return rules.value();
}

const sw::parser::StatementFacts& first(const std::string& sql) {
  static std::map<std::string, std::shared_ptr<const sw::parser::QueryFacts>> keep;
  auto facts = sw::parser::analyze(sql);
  REQUIRE_MESSAGE(facts.is_ok(), facts.status().message);
  keep[sql] = facts.value();
  return keep[sql]->statements.at(0);
}

// With 16 buckets on s0,s1,s2 (bucket b on shard b % 3): tenant 1 -> bucket 8 (s2),
// 2 -> 10 (s1), 4 -> 3 (s0), 5 -> 13 (s1), -5 -> 15 (s0).
std::map<std::string, std::string> statements(const std::string& sql, Route* out = nullptr) {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route planned = route(first(sql), nullptr, *dir, split_rules());
  REQUIRE_MESSAGE(planned.kind == RouteKind::Scatter, sql << ": " << route_summary(planned, *dir));
  REQUIRE(planned.merge);
  std::map<std::string, std::string> by_shard;
  for (const auto& statement : planned.merge->shard_statements)
    by_shard[dir->shard_name(static_cast<uint16_t>(statement.shard))] = statement.sql;
  if (out != nullptr) *out = planned;
  return by_shard;
}

}  // namespace

TEST_CASE("an IN list spanning shards: each shard gets its own keys, the others' become NULL") {
  auto sql = statements("SELECT id FROM orders WHERE tenant_id IN (1, 2, 4, 5) AND status = 'x'");
  CHECK(sql.size() == 3);
  CHECK(sql["s0"] == "SELECT id FROM orders WHERE tenant_id IN (NULL, NULL, 4, NULL) AND status = 'x'");
  CHECK(sql["s1"] == "SELECT id FROM orders WHERE tenant_id IN (NULL, 2, NULL, 5) AND status = 'x'");
  CHECK(sql["s2"] == "SELECT id FROM orders WHERE tenant_id IN (1, NULL, NULL, NULL) AND status = 'x'");
  // Only the shards of the keys run; negative numbers, quoted and cast literals, NULL items.
  auto two = statements("select * from orders where tenant_id in (-  5, '1'::bigint, NULL, '1')");
  CHECK(two.size() == 2);
  CHECK(two["s0"] == "select * from orders where tenant_id in (-  5, NULL::bigint, NULL, NULL)");
  CHECK(two["s2"] == "select * from orders where tenant_id in (NULL, '1'::bigint, NULL, '1')");
  // A literal written after its type name is replaced whole (`int8 NULL` is no SQL); numbers of
  // other types meet the key as PostgreSQL compares them (1.0 is key 1; 2.5 is no key's: no
  // shard's, kept as written).
  auto typed = statements(
      "SELECT id FROM orders WHERE tenant_id IN (4, int8 '1', CAST('2' AS bigint), varchar(3) '5', 2.5, "
      "1.0)");
  CHECK(typed.size() == 3);
  CHECK(typed["s0"] ==
        "SELECT id FROM orders WHERE tenant_id IN (4, NULL, CAST(NULL AS bigint), NULL, 2.5, NULL)");
  CHECK(typed["s1"] ==
        "SELECT id FROM orders WHERE tenant_id IN (NULL, NULL, CAST('2' AS bigint), varchar(3) '5', 2.5, "
        "NULL)");
  CHECK(typed["s2"] ==
        "SELECT id FROM orders WHERE tenant_id IN (NULL, int8 '1', CAST(NULL AS bigint), NULL, 2.5, 1.0)");
  // The normalized cache gives a text of the same shape its own literal locations.
  auto longer = statements("SELECT id FROM orders WHERE tenant_id IN (4, 2) AND status = 'longer text'");
  CHECK(longer["s0"] == "SELECT id FROM orders WHERE tenant_id IN (4, NULL) AND status = 'longer text'");
  CHECK(longer["s1"] == "SELECT id FROM orders WHERE tenant_id IN (NULL, 2) AND status = 'longer text'");
}

TEST_CASE("= ANY(ARRAY[...]) and = ANY('{...}') spanning shards are cut like IN lists") {
  auto array = statements("SELECT * FROM orders WHERE tenant_id = ANY(ARRAY[1, 2])");
  CHECK(array["s1"] == "SELECT * FROM orders WHERE tenant_id = ANY(ARRAY[NULL, 2])");
  CHECK(array["s2"] == "SELECT * FROM orders WHERE tenant_id = ANY(ARRAY[1, NULL])");
  auto literal = statements("SELECT * FROM orders WHERE tenant_id = ANY('{1, \"2\",4,NULL}'::bigint[])");
  CHECK(literal.size() == 3);
  CHECK(literal["s0"] == "SELECT * FROM orders WHERE tenant_id = ANY('{\"4\"}'::bigint[])");
  CHECK(literal["s1"] == "SELECT * FROM orders WHERE tenant_id = ANY('{\"2\"}'::bigint[])");
  CHECK(literal["s2"] == "SELECT * FROM orders WHERE tenant_id = ANY('{\"1\"}'::bigint[])");
  // Text keys with quotes and backslashes are re-quoted for the array and the SQL string.
  Route text_route;
  auto text = statements("SELECT * FROM sessions WHERE token = ANY('{a,\"it''s\",\"b\\\\c\",abc,x,y,z}')",
                         &text_route);
  REQUIRE(text_route.merge);
  for (const auto& entry : text) {
    const std::string& sql = entry.second;  // not a structured binding: doctest's macros capture it
    CHECK_MESSAGE(sql.find("= ANY('{") != std::string::npos, sql);
  }
}

TEST_CASE("split reads keep the statement's merge: ORDER BY, LIMIT/OFFSET, aggregates") {
  Route planned;
  auto sorted = statements(
      "SELECT id FROM orders WHERE tenant_id IN (1, 2) ORDER BY id DESC LIMIT 3 OFFSET 1", &planned);
  CHECK(planned.merge->kind == sw::merge::MergeKind::MergeSort);
  CHECK(planned.merge->limit == 3);
  CHECK(planned.merge->offset == 1);
  CHECK(sorted["s1"] ==
        "SELECT id FROM orders WHERE tenant_id IN (NULL, 2) ORDER BY id DESC LIMIT 4 OFFSET 0");
  CHECK(sorted["s2"] ==
        "SELECT id FROM orders WHERE tenant_id IN (1, NULL) ORDER BY id DESC LIMIT 4 OFFSET 0");
  auto averaged =
      statements("SELECT status, avg(total) FROM orders WHERE tenant_id IN (4, 1) GROUP BY 1", &planned);
  CHECK(planned.merge->kind == sw::merge::MergeKind::Aggregate);
  CHECK(averaged["s0"] ==
        "SELECT status, sum(total), count(total) + 0 * (avg(total) IS NULL)::int FROM orders WHERE tenant_id "
        "IN (4, "
        "NULL) GROUP BY 1");
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  CHECK(route_summary(planned, *dir) == "scatter s0,s2 aggregate (key of $1, avg of $2/$3)");
  const std::string described = describe_route(planned, *dir);
  CHECK_MESSAGE(described.find(
                    "; s2 runs: SELECT status, sum(total), count(total) + 0 * (avg(total) IS NULL)::int FROM "
                    "orders WHERE tenant_id IN "
                    "(NULL, 1) GROUP BY 1") != std::string::npos,
                described);
  // Joined on the key: both lists are cut.
  auto joined = statements(
      "SELECT o.id FROM orders o JOIN items i ON i.tenant_id = o.tenant_id WHERE o.tenant_id IN (1, 2) AND "
      "i.tenant_id IN (2, 1)");
  CHECK(joined["s1"] ==
        "SELECT o.id FROM orders o JOIN items i ON i.tenant_id = o.tenant_id WHERE o.tenant_id IN (NULL, 2) "
        "AND "
        "i.tenant_id IN (2, NULL)");
}

TEST_CASE("keys on one shard route there; parameters and unsharded joins are not split") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  const RoutingRules rules = split_rules();
  auto summary = [&](const std::string& sql, const BindValues* values = nullptr) {
    return route_summary(route(first(sql), values, *dir, rules), *dir);
  };
  CHECK(summary("SELECT * FROM orders WHERE tenant_id IN (2, 5)") == "shard s1 buckets 10,13");
  CHECK(summary("SELECT * FROM orders WHERE tenant_id = ANY('{2,5}')") == "shard s1 buckets 10,13");
  CHECK(summary("SELECT * FROM orders JOIN countries c ON true WHERE tenant_id IN (1, 2)") ==
        "error 0A000 SELECT reads sharded table orders with keys on several shards (s1, s2) together with "
        "unsharded table countries, which lives on the default shard only");
  CHECK(summary("SELECT json_agg(DISTINCT id) FROM orders WHERE tenant_id IN (1, 2)")
            .find("error 0A000 SELECT on sharded table orders with keys on several shards uses "
                  "json_agg(DISTINCT id)") == 0);
  CHECK(summary("SELECT sum(DISTINCT id), avg(DISTINCT id) FROM orders WHERE tenant_id IN (1, 2)") ==
        "scatter s1,s2 aggregate (sum_distinct of $1, avg_distinct of $2)");
  CHECK(summary("SELECT count(DISTINCT id) FROM orders WHERE tenant_id IN (1, 2)") ==
        "scatter s1,s2 aggregate (count_distinct of $1)");
  // Parameters (extended protocol): each shard's Bind gets NULL for another shard's item, or its
  // own elements of a text array; a parameter used twice, or a binary array, reads every shard.
  BindValues values;
  values.params = {{false, false, "1"}, {false, false, "2"}};
  Route by_params = route(first("SELECT * FROM orders WHERE tenant_id IN ($1, $2)"), &values, *dir, rules);
  CHECK(route_summary(by_params, *dir) == "scatter s1,s2 concat");
  REQUIRE(by_params.merge);
  REQUIRE(by_params.merge->shard_statements.size() == 2);
  const auto& s1 = by_params.merge->shard_statements[0];
  CHECK(s1.sql == "SELECT * FROM orders WHERE tenant_id IN ($1, $2)");
  REQUIRE(s1.params.size() == 1);
  CHECK(s1.params[0].number == 1);
  CHECK_FALSE(s1.params[0].text.has_value());
  CHECK(by_params.merge->shard_statements[1].params[0].number == 2);
  CHECK(summary("SELECT * FROM orders WHERE tenant_id IN ($1, $2) AND note <> $1::text", &values) ==
        "scatter s0,s1,s2 concat");
  BindValues array;
  array.params = {{false, false, "{2,5}"}};
  CHECK(summary("SELECT * FROM orders WHERE tenant_id = ANY($1)", &array) == "shard s1 buckets 10,13");
  array.params = {{false, false, "{1,2,\"5\"}"}};
  Route by_array = route(first("SELECT * FROM orders WHERE tenant_id = ANY($1)"), &array, *dir, rules);
  REQUIRE(by_array.merge);
  REQUIRE(by_array.merge->shard_statements.size() == 2);
  CHECK(by_array.merge->shard_statements[0].params[0].text == std::optional<std::string>("{\"2\",\"5\"}"));
  CHECK(by_array.merge->shard_statements[1].params[0].text == std::optional<std::string>("{\"1\"}"));
  CHECK(summary("SELECT * FROM orders WHERE tenant_id = ANY($1)") == "at-bind");
  array.params = {{false, true, "\x01"}};  // not an array: every shard
  CHECK(summary("SELECT * FROM orders WHERE tenant_id = ANY($1)", &array) == "scatter s0,s1,s2 concat");
  // A binary int8[] (asyncpg binds every list so): cut per shard, each Bind array_send again.
  auto be = [](uint64_t v, int bytes) {
    std::string out;
    for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return out;
  };
  auto int8_array = [&](const std::vector<uint64_t>& keys) {
    std::string out = be(1, 4) + be(0, 4) + be(20, 4) + be(keys.size(), 4) + be(1, 4);
    for (uint64_t key : keys) out += be(8, 4) + be(key, 8);
    return out;
  };
  const std::string three = int8_array({1, 2, 5}), two_on_s1 = int8_array({2, 5});  // viewed by params
  array.params = {{false, true, three}};
  Route binary = route(first("SELECT * FROM orders WHERE tenant_id = ANY($1)"), &array, *dir, rules);
  CHECK(route_summary(binary, *dir) == "scatter s1,s2 concat");
  REQUIRE(binary.merge);
  REQUIRE(binary.merge->shard_statements.size() == 2);
  CHECK(binary.merge->shard_statements[0].params[0].text == std::optional<std::string>(int8_array({2, 5})));
  CHECK(binary.merge->shard_statements[1].params[0].text == std::optional<std::string>(int8_array({1})));
  array.params = {{false, true, two_on_s1}};
  CHECK(summary("DELETE FROM orders WHERE tenant_id = ANY($1)", &array) == "shard s1 buckets 10,13");
}

TEST_CASE("ORDER BY a column not in the select list: selected first as a hidden sort column") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  const RoutingRules rules = split_rules();
  Route planned =
      route(first("SELECT tenant_id, id FROM orders ORDER BY qty DESC, 2 LIMIT 5"), nullptr, *dir, rules);
  REQUIRE(planned.merge);
  CHECK(planned.merge->shard_sql ==
        "SELECT \"qty\" AS sw_order_1, tenant_id, id FROM (SELECT * FROM orders sw_owned WHERE NOT EXISTS "
        "(SELECT 1 FROM shardwire.fenced_buckets sw_fenced WHERE sw_fenced.bucket = "
        "shardwire.bucket_of(sw_owned.\"tenant_id\"::bigint, 16) AND sw_fenced.holds_rows)) AS orders "
        "ORDER BY qty DESC, 3 LIMIT 5");
  CHECK(planned.merge->hidden == 1);
  REQUIRE(planned.merge->order_by.size() == 2);
  CHECK(planned.merge->order_by[0].column == 0);
  CHECK(planned.merge->order_by[1].column == 2);
  CHECK(route_summary(planned, *dir) ==
        "scatter s0,s1,s2 merge_sort by 1 desc nulls first, 3 asc nulls last; drop 1 sort column; limit 5");
  // With a key list too; a name used twice is selected once.
  auto split = statements("SELECT id FROM orders WHERE tenant_id IN (1, 2) ORDER BY \"Note\", qty, note");
  CHECK(split["s1"] ==
        "SELECT \"Note\" AS sw_order_1, \"qty\" AS sw_order_2, \"note\" AS sw_order_3, id FROM orders WHERE "
        "tenant_id IN (NULL, 2) ORDER BY \"Note\", qty, note");
  // Still refused: DISTINCT, GROUP BY, * (found by name instead).
  for (const char* sql :
       {"SELECT * FROM orders ORDER BY qty + 1", "SELECT DISTINCT id FROM orders ORDER BY qty",
        "SELECT status, count(*) FROM orders GROUP BY status ORDER BY max(qty) ^ 2"}) {
    Route refused = route(first(sql), nullptr, *dir, rules);
    CHECK_MESSAGE(refused.kind == RouteKind::Error, sql);
  }
  Route star = route(first("SELECT * FROM orders ORDER BY qty"), nullptr, *dir, rules);
  REQUIRE(star.merge);
  CHECK(star.merge->hidden == 0);
  CHECK(star.merge->order_by[0].column == -1);
}

namespace {

RoutingRules insert_rules() {
  sw::config::Sharding sharding;
  sharding.default_shard = "s0";
  sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
  sharding.tables.push_back({"items", "tenant_id", "bigint", ""});
  auto made = RoutingRules::from_config(sharding);
  REQUIRE(made.is_ok());
  return made.value();
}

// 16 buckets on s0,s1,s2: tenant 1 -> s2, 2 -> s1, 4 -> s0, 5 -> s1.
Route plan(const std::string& sql, const BindValues* values = nullptr) {
  static auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  Route route = sw::router::route(first(sql), values, *dir, insert_rules());
  REQUIRE_MESSAGE(route.kind == RouteKind::Split, sql << ": " << route_summary(route, *dir));
  REQUIRE(route.split);
  CHECK(route.writes);
  CHECK(route.error.sqlstate == "0A000");  // what a caller that cannot run a split answers
  return route;
}

}  // namespace

TEST_CASE("literal rows: each shard's INSERT has its rows in VALUES order, the rest verbatim") {
  Route route = plan(
      "INSERT INTO orders AS o (tenant_id, id, note) VALUES (1, 10, 'a, (b)'), (2, 20, $$x)$$), "
      "(4, 40, NULL) /* c ) */, (1, 11, 'd') ON CONFLICT (tenant_id, id) DO UPDATE SET note = "
      "excluded.note RETURNING id, note");
  const InsertSplit& split = *route.split;
  REQUIRE(split.parts.size() == 3);
  CHECK(split.parts[0].shard == 0);
  const std::string tail =
      " ON CONFLICT (tenant_id, id) DO UPDATE SET note = excluded.note RETURNING id, note";
  const std::string head = "INSERT INTO orders AS o (tenant_id, id, note) VALUES ";
  CHECK(split.parts[0].sql == head + "(4, 40, NULL)" + tail);
  CHECK(split.parts[1].sql == head + "(2, 20, $$x)$$)" + tail);
  CHECK(split.parts[2].sql == head + "(1, 10, 'a, (b)'), (1, 11, 'd')" + tail);
  CHECK(split.parts[2].rows == std::vector<size_t>{0, 3});
  CHECK(split.row_part == std::vector<int>{2, 1, 0, 2});
  for (const auto& part : split.parts) CHECK(part.params.empty());
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  CHECK(route_summary(route, *dir) == "split s0 rows 3 s1 rows 2 s2 rows 1,4");
  const std::string described = describe_route(route, *dir);
  CHECK(described.find("; s2 runs: " + head + "(1, 10, 'a, (b)'), (1, 11, 'd')" + tail) != std::string::npos);
}

TEST_CASE("parameters are renumbered per shard; one used outside the rows goes to every shard") {
  BindValues values;
  values.params = {{false, false, "1"},
                   {false, false, "x"},
                   {false, false, "2"},
                   {false, false, "y"},
                   {false, false, "z"}};
  Route route = plan(
      "INSERT INTO orders (tenant_id, note) VALUES ($1, $2), ($3, $4::text) ON CONFLICT (tenant_id) DO "
      "UPDATE SET note = $5",
      &values);
  const InsertSplit& split = *route.split;
  REQUIRE(split.parts.size() == 2);
  CHECK(split.parts[0].shard == 1);
  CHECK(split.parts[0].sql ==
        "INSERT INTO orders (tenant_id, note) VALUES ($1, $2::text) ON CONFLICT (tenant_id) DO UPDATE SET "
        "note = $3");
  CHECK(split.parts[0].params == std::vector<int>{3, 4, 5});
  CHECK(
      split.parts[1].sql ==
      "INSERT INTO orders (tenant_id, note) VALUES ($1, $2) ON CONFLICT (tenant_id) DO UPDATE SET note = $3");
  CHECK(split.parts[1].params == std::vector<int>{1, 2, 5});
  CHECK(split.row_part == std::vector<int>{1, 0});
}

TEST_CASE("rows on one shard keep the single-shard route; what cannot be cut keeps the refusal") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  auto summary = [&](const std::string& sql) {
    return route_summary(route(first(sql), nullptr, *dir, insert_rules()), *dir);
  };
  CHECK(summary("INSERT INTO orders (tenant_id, id) VALUES (2, 1), (5, 2)") == "shard s1 buckets 10,13");
  auto two = sw::parser::analyze("INSERT INTO orders (tenant_id, id) VALUES (2, 1), (1, 2); SELECT 1");
  REQUIRE(two.is_ok());
  CHECK(route_summary(route_query(*two.value(), nullptr, *dir, insert_rules()), *dir)
            .find("error 0A000 multi-statement query: statement 1 runs on every shard") == 0);
  CHECK(summary("INSERT INTO orders (tenant_id, id) VALUES (2, 1), (1, 2) ON CONFLICT (id) DO UPDATE SET "
                "tenant_id = 4")
            .find("error 0A000 ON CONFLICT DO UPDATE of sharded table orders sets its key") == 0);
  CHECK(summary("WITH i AS (INSERT INTO items (tenant_id) VALUES (2) RETURNING 1) INSERT INTO orders "
                "(tenant_id, id) VALUES (2, 1), (1, 2)")
            .find("error 0A000") == 0);
}

TEST_CASE("a text of the same shape (the normalized cache's facts) is cut at its own rows") {
  const std::string shape = "INSERT INTO orders (tenant_id, note) VALUES (1, 'a'), (2, 'b')";
  Route first_route = plan(shape);
  REQUIRE(first_route.split->parts.size() == 2);
  const uint64_t hits = sw::parser::cache_stats().normalized_hits;
  Route longer = plan("INSERT INTO orders (tenant_id, note) VALUES (1, 'a much longer note'), (2, 'bb')");
  REQUIRE(longer.split->parts.size() == 2);
  CHECK(longer.split->parts[0].sql == "INSERT INTO orders (tenant_id, note) VALUES (2, 'bb')");
  CHECK(longer.split->parts[1].sql ==
        "INSERT INTO orders (tenant_id, note) VALUES (1, 'a much longer note')");
  CHECK(sw::parser::cache_stats().normalized_hits == hits + 1);
}

TEST_CASE("an UPDATE or DELETE whose key lists span shards: each shard writes with its own keys") {
  auto dir = Directory::initial(16, {"s0", "s1", "s2"});
  const RoutingRules rules = split_rules();
  auto planned = [&](const std::string& sql, const BindValues* values = nullptr) {
    return route(first(sql), values, *dir, rules);
  };
  Route del = planned("DELETE FROM orders WHERE tenant_id IN (1, 2, 5) RETURNING id");
  CHECK(route_summary(del, *dir) == "scatter s1,s2 split-write");
  CHECK(del.writes);
  CHECK(del.scatter_write());
  CHECK(del.shards == std::vector<int>{1, 2});
  CHECK(del.buckets == std::vector<uint32_t>{8, 10, 13});
  REQUIRE(del.shard_statements.size() == 2);
  CHECK(del.shard_statements[0].shard == 1);
  CHECK(del.shard_statements[0].sql == "DELETE FROM orders WHERE tenant_id IN (NULL, 2, 5) RETURNING id");
  CHECK(del.shard_statements[1].sql == "DELETE FROM orders WHERE tenant_id IN (1, NULL, NULL) RETURNING id");
  Route typed = planned("DELETE FROM orders WHERE tenant_id IN (int8 '1', bigint '2')");
  REQUIRE(typed.shard_statements.size() == 2);
  CHECK(typed.shard_statements[0].sql == "DELETE FROM orders WHERE tenant_id IN (NULL, bigint '2')");
  CHECK(typed.shard_statements[1].sql == "DELETE FROM orders WHERE tenant_id IN (int8 '1', NULL)");
  // A co-located table's list is cut with it; an array literal becomes each shard's own elements.
  Route update = planned(
      "UPDATE orders o SET total = i.price FROM items i WHERE o.tenant_id = ANY('{1,4}') AND i.tenant_id = "
      "o.tenant_id AND i.tenant_id IN (1, 4)");
  REQUIRE(update.shard_statements.size() == 2);
  CHECK(
      update.shard_statements[0].sql ==
      "UPDATE orders o SET total = i.price FROM items i WHERE o.tenant_id = ANY('{\"4\"}') AND i.tenant_id = "
      "o.tenant_id AND i.tenant_id IN (NULL, 4)");
  // Parameters: the Bind of each shard carries NULL for the other shards' items.
  BindValues values;
  values.params = {{false, false, "1"}, {false, false, "2"}, {false, false, "7"}};
  Route bound = planned("UPDATE orders SET qty = $3 WHERE tenant_id IN ($1, $2)", &values);
  REQUIRE(bound.shard_statements.size() == 2);
  CHECK(bound.shard_statements[0].sql == "UPDATE orders SET qty = $3 WHERE tenant_id IN ($1, $2)");
  REQUIRE(bound.shard_statements[0].params.size() == 1);
  CHECK(bound.shard_statements[0].params[0].number == 1);  // s1 owns 2: $1 (tenant 1) is NULL
  // The key set to a constant (one shard's) moves rows: every shard; an unsharded table read
  // alongside is refused.
  CHECK(planned("UPDATE orders SET tenant_id = 2 WHERE tenant_id IN (1, 2)").key_move);
  CHECK(route_summary(planned("DELETE FROM orders WHERE tenant_id IN (1, 2) AND id IN (SELECT id FROM "
                              "countries)"),
                      *dir)
            .find("error 0A000 IN list on the key tenant_id of sharded table orders spans several shards "
                  "(s1, s2)") == 0);
  // A key kept (SET key = key) writes on both.
  CHECK(route_summary(planned("UPDATE orders SET tenant_id = tenant_id, qty = 1 WHERE tenant_id IN (1, 2)"),
                      *dir) == "scatter s1,s2 split-write");
}
