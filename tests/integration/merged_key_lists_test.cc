// Reads whose key lists span shards (`key IN (...)`, `key = ANY(ARRAY[...])`, `key = ANY('{...}')`)
// against the same rows in one plain PostgreSQL database: 1500 rows of 200 tenants on 3 shards
// through shardwire and, with the same statements, in a reference database. Each generated query
// (lists over 2 and 3 shards, with NULL items, duplicates, keys without rows, quoted keys; plain
// rows, ORDER BY/LIMIT/OFFSET, aggregates, GROUP BY with and without the key, DISTINCT) must
// return the reference's rows. Lists on one shard keep the single-shard route. A copy of another
// shard's rows (as a move leaves on its target before cutover) is not read: each shard gets only
// the keys it owns.
#include "it_test.h"

#include <algorithm>
#include <sstream>

#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreate =
    "CREATE TABLE m (id bigint NOT NULL, tenant_id bigint NOT NULL, grp integer, i integer, n numeric, t "
    "text, "
    "PRIMARY KEY (tenant_id, id))";

std::string row_values(int i, int64_t tenant) {
  std::ostringstream v;
  v << "(" << i << ", " << tenant << ", " << (i % 11 == 0 ? "NULL" : std::to_string(i % 6)) << ", "
    << (i % 13 == 0 ? "NULL" : std::to_string((i * 37) % 2001 - 1000)) << ", "
    << (i % 7 == 0 ? "NULL" : std::to_string((i * 7919) % 100000 - 50000) + "." + std::to_string(i % 100))
    << ", "
    << (i % 9 == 0 ? "NULL" : "'" + std::string(i % 2 ? "Ab" : "\xc3\xa9") + std::to_string(i % 40) + "'")
    << ")";
  return v.str();
}

// The first `n` tenants (of -60..139) on each shard in `shards`.
std::vector<int64_t> tenants_on(std::initializer_list<int> shards, size_t n) {
  std::vector<int64_t> out;
  for (int shard : shards) {
    size_t found = 0;
    for (int64_t tenant = -60; tenant < 140 && found < n; ++tenant) {
      if (shard_of_key(tenant) != shard) continue;
      out.push_back(tenant);
      ++found;
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

struct Query {
  std::string sql;
  bool ordered;
};

std::vector<Query> generated_queries() {
  std::vector<std::vector<std::string>> key_sets;
  for (const auto& tenants : {tenants_on({0, 1, 2}, 2), tenants_on({2, 0}, 1)}) {
    std::vector<std::string> keys;
    for (int64_t tenant : tenants) keys.push_back(std::to_string(tenant));
    key_sets.push_back(keys);
  }
  std::vector<std::string> odd = key_sets[0];  // a duplicate, a key without rows, NULL
  odd.push_back(odd.front());
  odd.push_back("5000");
  std::vector<std::vector<std::string>> with_null = {odd};
  with_null[0].push_back("NULL");
  std::vector<std::string> predicates;
  for (const auto& keys : key_sets) {
    predicates.push_back("tenant_id IN (" + joined(keys, ", ") + ")");
    predicates.push_back("tenant_id = ANY(ARRAY[" + joined(keys, ",") + "])");
    predicates.push_back("tenant_id = ANY('{" + joined(keys, ",") + "}')");
    predicates.push_back("tenant_id = ANY('{" + joined(keys, ", ") + "}'::bigint[])");
    predicates.push_back("tenant_id IN ('" + joined(keys, "', '") + "')");
  }
  predicates.push_back("tenant_id IN (" + joined(with_null[0], ", ") + ")");
  predicates.push_back("tenant_id = ANY('{" + joined(with_null[0], ",") + "}')");
  const char* templates[] = {
      "SELECT tenant_id, id, t FROM m WHERE %",
      "SELECT tenant_id, id, i FROM m WHERE % AND i > 0 ORDER BY i DESC, tenant_id, id LIMIT 15 OFFSET 3",
      "SELECT count(*), count(i), sum(i), avg(n), min(t), max(t) FROM m WHERE %",
      "SELECT grp, count(*), avg(i), max(n) FROM m WHERE % GROUP BY grp ORDER BY grp NULLS FIRST",
      "SELECT tenant_id, count(*), sum(n) FROM m WHERE % GROUP BY tenant_id ORDER BY 1",
      "SELECT DISTINCT grp FROM m WHERE % ORDER BY 1",
      "SELECT t, tenant_id, id FROM m WHERE % ORDER BY t NULLS FIRST, tenant_id, id LIMIT 20",
      "SELECT tenant_id, id FROM m WHERE % ORDER BY i DESC NULLS LAST, n, tenant_id, id LIMIT 12",
  };
  std::vector<Query> out;
  for (const std::string& predicate : predicates) {
    for (const char* pattern : templates) {
      std::string sql = pattern;
      sql.replace(sql.find('%'), 1, predicate);
      out.push_back({sql, sql.find("ORDER BY") != std::string::npos ||
                              sql.find("count(*), count(i)") != std::string::npos});
    }
  }
  return out;
}

}  // namespace

TEST_SUITE("merged_key_lists") {
  TEST_CASE("key lists spanning shards return what one PostgreSQL database returns") {
    PROXY_ONLY();
    ShardedOptions options;
    options.tables_yaml += "    - name: m\n      key: tenant_id\n      type: bigint\n";
    options.proxy.users.push_back({"admin", "adminpw"});
    options.proxy.extra_yaml += "admin:\n  users: [admin]\n";
    ShardedFixture f(options);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(kCreate));
    PgConn ref = reference_database(f, "swlists_ref", kCreate);
    std::vector<std::vector<std::string>> per_shard(kShards);
    for (int i = 1; i <= 1500; ++i) {
      const int64_t tenant = (i * 7) % 200 - 60;
      per_shard[static_cast<size_t>(shard_of_key(tenant))].push_back(row_values(i, tenant));
    }
    for (const auto& rows : per_shard) {
      REQUIRE(rows.size() > 300);
      const std::string sql = "INSERT INTO m (id, tenant_id, grp, i, n, t) VALUES " + joined(rows, ", ");
      REQUIRE_OK(c.exec(sql));
      REQUIRE_OK(ref.exec(sql));
    }

    const std::vector<Query> queries = generated_queries();
    int matched = 0;
    for (const Query& query : queries) {
      const std::string diff = compare_results(ref.exec(query.sql), c.exec(query.sql), query.ordered);
      CHECK_MESSAGE(diff.empty(), query.sql << "\n  " << diff << "\n" << f.log_tail(5));
      if (diff.empty()) ++matched;
    }
    MESSAGE("key lists: " << matched << " of " << queries.size() << " queries returned the reference's rows");
    CHECK(queries.size() >= 90);

    // Routes: the shards of the keys only, each with its own keys; one shard keeps the fast path.
    ConnectResult admin_connect =
        connect(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    REQUIRE_MESSAGE(admin_connect.ok, admin_connect.error);
    PgConn admin = std::move(admin_connect.conn);
    const std::vector<int64_t> two = tenants_on({2, 0}, 1);
    const std::string two_list = std::to_string(two[0]) + ", " + std::to_string(two[1]);
    PgResult split = admin.exec("SHOW ROUTE SELECT * FROM m WHERE tenant_id IN (" + two_list + ")");
    REQUIRE_OK(split);
    CHECK(split.value(0, 7) == "scatter s0,s2 concat");
    const std::vector<int64_t> one = tenants_on({1}, 3);
    PgResult single =
        admin.exec("SHOW ROUTE SELECT * FROM m WHERE tenant_id = ANY('{" + std::to_string(one[0]) + "," +
                   std::to_string(one[1]) + "," + std::to_string(one[2]) + "}')");
    REQUIRE_OK(single);
    CHECK(single.value(0, 0) == "shard");
    CHECK(single.value(0, 1) == "s1");

    // A write whose keys span shards runs on those shards, each with its own keys (split_write has
    // the rest): the same rows go as from the reference. Parameters (extended protocol): each
    // shard's Bind gets NULL for the other shards' items, or its own elements of a text array.
    const std::string delete_sql = "DELETE FROM m WHERE tenant_id IN (" + two_list + ") AND id % 2 = 0";
    PgResult write = c.exec(delete_sql);
    REQUIRE_OK(write);
    PgResult ref_write = ref.exec(delete_sql);
    REQUIRE_OK(ref_write);
    CHECK(write.command_tag() == ref_write.command_tag());
    CHECK(write.command_tag() != "DELETE 0");
    const std::string params_sql = "SELECT tenant_id, id, t FROM m WHERE tenant_id IN ($1, $2)";
    const std::string literal_sql = "SELECT tenant_id, id, t FROM m WHERE tenant_id IN (" + two_list + ")";
    PgResult with_params = c.exec_params(params_sql, {std::to_string(two[0]), std::to_string(two[1])});
    const std::string params_diff = compare_results(ref.exec(literal_sql), with_params, false);
    CHECK_MESSAGE(params_diff.empty(), params_diff);
    const std::string array_sql =
        "SELECT tenant_id, id, i FROM m WHERE tenant_id = ANY($1) AND i > $2 ORDER BY i DESC, 1, 2 LIMIT 30";
    const std::string keys = "{" + std::to_string(two[0]) + "," + std::to_string(two[1]) + ",5000}";
    const std::string array_diff = compare_results(ref.exec_params(array_sql, {keys, "-500"}),
                                                   c.exec_params(array_sql, {keys, "-500"}), true);
    CHECK_MESSAGE(array_diff.empty(), array_diff);
    CHECK(c.value("SELECT count(*) FROM m") == ref.value("SELECT count(*) FROM m"));
  }

  TEST_CASE("a shard holding a copy of another shard's rows returns only the keys it owns") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    const int64_t owned_by_0 = tenants_on({0}, 1)[0];
    const int64_t owned_by_1 = tenants_on({1}, 1)[0];
    for (int n = 0; n < 4; ++n) {
      for (int64_t tenant : {owned_by_0, owned_by_1})
        REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'n" +
                          std::to_string(n) + "')"));
    }
    // The fault: shard 1 gets a copy of tenant owned_by_0's rows, as a move's copy phase writes
    // them (replication role replica: the fence does not fire) before the cutover.
    PgConn target = f.setup.shard(1);
    REQUIRE_OK(mark_fences_holding_rows(target));
    REQUIRE_OK(target.exec("SET session_replication_role = replica"));
    REQUIRE_OK(target.exec("INSERT INTO orders (id, tenant_id, note) VALUES (100001, " +
                           std::to_string(owned_by_0) + ", 'copy'), (100002, " + std::to_string(owned_by_0) +
                           ", 'copy')"));
    const std::string list = std::to_string(owned_by_0) + ", " + std::to_string(owned_by_1);
    CHECK(target.value("SELECT count(*) FROM orders WHERE tenant_id IN (" + list + ")") ==
          "6");  // fault in place
    PgResult rows =
        c.exec("SELECT tenant_id, note FROM orders WHERE tenant_id IN (" + list + ") ORDER BY 1, 2");
    REQUIRE_OK(rows);
    CHECK(rows.rows() == 8);
    for (int r = 0; r < rows.rows(); ++r) CHECK(rows.value(r, 1) != "copy");
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = ANY('{" + list + "}')") == "8");
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = ANY(ARRAY[" + list + "])") == "8");
    const std::vector<std::optional<std::string>> keys = {std::to_string(owned_by_0),
                                                          std::to_string(owned_by_1)};
    CHECK(c.exec_params("SELECT count(*) FROM orders WHERE tenant_id IN ($1, $2)", keys).value() == "8");
    PgResult by_array =
        c.exec_params("SELECT note FROM orders WHERE tenant_id = ANY($1) ORDER BY 1", {"{" + list + "}"});
    REQUIRE_OK(by_array);
    CHECK(by_array.rows() == 8);
    for (int r = 0; r < by_array.rows(); ++r) CHECK(by_array.value(r) != "copy");
  }
}
