// A multi-row INSERT whose rows fall on several shards: the router's split (one INSERT per shard
// with only its rows) checked against real PostgreSQL. SHOW ROUTE through the admin console
// names the split and what each shard runs; each part, run directly on its shard, inserts exactly
// that shard's rows (RETURNING in VALUES order, ON CONFLICT kept, DO NOTHING with RETURNING one
// INSERT per row); parts with renumbered
// parameters, run with only their own Bind values and no Parse types, are accepted (PostgreSQL
// infers every parameter's type). Running the split through the proxy: split_insert_test.cc.
#include "it_test.h"

#include <map>
#include <optional>

#include "harness/sharded_fixture.h"
#include "parser/analyze.h"
#include "router/router.h"

using namespace it;

namespace {

// "<reason>; s0 runs: SQL; s2 runs: SQL" -> {shard name -> SQL} (the SQL holds no "; s").
std::map<std::string, std::string> parts_of(const std::string& reason) {
  std::map<std::string, std::string> out;
  for (size_t at = reason.find("; s"); at != std::string::npos;) {
    const size_t runs = reason.find(" runs: ", at);
    if (runs == std::string::npos) break;
    const size_t next = reason.find("; s", runs);
    out[reason.substr(at + 2, runs - at - 2)] =
        reason.substr(runs + 7, next == std::string::npos ? next : next - runs - 7);
    at = next;
  }
  return out;
}

long long rows_everywhere(const ShardedFixture& f) {
  long long total = 0;
  for (int s = 0; s < kShards; ++s) total += static_cast<long long>(f.rows_on(s).size());
  return total;
}

}  // namespace

TEST_SUITE("insert_split") {
  TEST_CASE("each shard's part of a split INSERT inserts exactly its rows") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.users.push_back({"admin", "adminpw"});
    options.proxy.extra_yaml += "admin:\n  users: [admin]\n";
    ShardedFixture f(options);
    const int64_t a = key_where([](uint32_t bucket) { return bucket % kShards == 0; });
    const int64_t b = key_where([](uint32_t bucket) { return bucket % kShards == 1; });
    const int64_t c = key_where([](uint32_t bucket) { return bucket % kShards == 2; });
    const int64_t a2 = key_where([](uint32_t bucket) { return bucket % kShards == 0; }, a + 1);
    const std::string sql = "INSERT INTO orders (tenant_id, id, note) VALUES (" + std::to_string(c) +
                            ", 1, 'c, (1)'), (" + std::to_string(a) + ", 2, 'a'), (" + std::to_string(b) +
                            ", 3, 'b'), (" + std::to_string(a2) +
                            ", 4, 'a2') ON CONFLICT (tenant_id, id) DO NOTHING RETURNING id, note";

    ConnectResult admin_connect =
        connect(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    REQUIRE_MESSAGE(admin_connect.ok, admin_connect.error);
    PgResult route = admin_connect.conn.exec("SHOW ROUTE " + sql);
    REQUIRE_OK(route);
    CHECK(route.value(0, 0) == "split");
    CHECK(route.value(0, 7) == "split s0 rows 2,4 s1 rows 3 s2 rows 1");
    std::map<std::string, std::string> parts = parts_of(route.value(0, 5));
    REQUIRE_MESSAGE(parts.size() == 3, route.value(0, 5));

    CHECK(rows_everywhere(f) == 0);

    // Each part on its own shard: its rows only, RETURNING in VALUES order; again: ON CONFLICT
    // DO NOTHING inserts nothing.
    const std::vector<std::vector<std::string>> returned = {{"2|a", "4|a2"}, {"3|b"}, {"1|c, (1)"}};
    for (int s = 0; s < kShards; ++s) {
      PgConn shard = f.setup.shard(s);
      const std::string& part = parts["s" + std::to_string(s)];
      // DO NOTHING with RETURNING runs row by row: one INSERT per row, each on its own line.
      std::vector<std::string> statements;
      for (size_t at = 0; at <= part.size();) {
        size_t end = part.find("\n;\n", at);
        if (end == std::string::npos) end = part.size();
        statements.push_back(part.substr(at, end - at));
        at = end + 3;
      }
      CHECK(statements.size() == returned[static_cast<size_t>(s)].size());
      std::vector<std::string> got;
      for (const std::string& statement : statements) {
        PgResult first = shard.exec(statement);
        REQUIRE_MESSAGE(first.ok(), statement << ": " << first.describe());
        for (const auto& row : first.data()) got.push_back(row.at(0) + "|" + row.at(1));
        PgResult again = shard.exec(statement);
        REQUIRE_OK(again);
        CHECK(again.rows() == 0);
      }
      CHECK_MESSAGE(got == returned[static_cast<size_t>(s)], part);
      CHECK(f.misplaced_on(s) == 0);
    }
    std::vector<std::string> on_first = {row_of(a, "a"), row_of(a2, "a2")};
    std::sort(on_first.begin(), on_first.end());
    CHECK(f.rows_on(0) == on_first);
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "b")});
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(c, "c, (1)")});
  }

  TEST_CASE("parts with renumbered parameters run on their shards with only their own values") {
    PROXY_ONLY();
    ShardedFixture f;
    const int64_t a = key_where([](uint32_t bucket) { return bucket % kShards == 0; });
    const int64_t b = key_where([](uint32_t bucket) { return bucket % kShards == 1; });
    // The note of b's row is $4 and the ON CONFLICT value is $5: b's shard gets $1..$3 for them.
    const std::string sql =
        "INSERT INTO orders (tenant_id, id, note) VALUES ($1, 10, $2), ($3, 11, $4) "
        "ON CONFLICT (tenant_id, id) DO UPDATE SET note = $5 RETURNING note";
    auto facts = sw::parser::analyze(sql);
    REQUIRE(facts.is_ok());
    sw::config::Sharding sharding;
    sharding.default_shard = "s0";
    sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
    auto rules = sw::router::RoutingRules::from_config(sharding);
    REQUIRE(rules.is_ok());
    const std::vector<std::string> values = {std::to_string(a), "note a", std::to_string(b), "note b",
                                             "again"};
    sw::router::BindValues bind;
    for (const std::string& v : values) bind.params.push_back({false, false, v});
    auto dir = sw::router::Directory::initial(kBuckets, {"s0", "s1", "s2"});
    sw::router::Route route = sw::router::route(facts.value()->statements.at(0), &bind, *dir, rules.value());
    REQUIRE_MESSAGE(route.kind == sw::router::RouteKind::Split, sw::router::describe_route(route, *dir));
    REQUIRE(route.split->parts.size() == 2);
    for (int round = 0; round < 2; ++round) {
      for (const auto& part : route.split->parts) {
        std::vector<std::optional<std::string>> own;
        for (int client : part.params) own.emplace_back(values.at(static_cast<size_t>(client - 1)));
        PgConn shard = f.setup.shard(part.shard);
        PgResult done = shard.exec_params(part.sql, own);
        REQUIRE_MESSAGE(done.ok(), part.sql << ": " << done.describe());
        REQUIRE(done.rows() == 1);
        CHECK(done.value() == (round == 1 ? "again" : part.shard == 0 ? "note a" : "note b"));
      }
    }
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(a, "again")});
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(b, "again")});
    CHECK(f.rows_on(2).empty());
  }
}
