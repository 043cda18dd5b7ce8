// The catch-up applier's SQL (proxy/sqltext/apply_sql.h): the exact statements and parameters for
// every change kind on a table with a composite primary key and a version column, unchanged-TOAST
// columns, key-changing updates across the bucket set's edge, truncate, quoting, the table match,
// and the prerequisites that are refused.
#include "sqltext/apply_sql.h"

#include <doctest/doctest.h>

#include "router/bucket_hash.h"

namespace sw::sqltext {
namespace {
namespace pgo = wire::pgoutput;
using router::BucketSet;
using Params = std::vector<std::optional<std::string>>;

constexpr uint32_t kBuckets = 16;

uint32_t bucket(int64_t tenant) { return router::bucket_of_hash(router::hash_int8(tenant), kBuckets); }

// Tenants 1 (in the set) and the first tenant of another bucket (out), and a third tenant of yet
// another bucket that is in the set too.
int64_t tenant_out() {
  for (int64_t k = 2;; ++k)
    if (bucket(k) != bucket(1)) return k;
}
int64_t tenant_in2() {
  for (int64_t k = tenant_out() + 1;; ++k)
    if (bucket(k) != bucket(1) && bucket(k) != bucket(tenant_out())) return k;
}
BucketSet moving() { return BucketSet(kBuckets, {bucket(1), bucket(tenant_in2())}); }

pgo::ColumnValue text(std::string v) { return {pgo::ColumnKind::Text, std::move(v)}; }
pgo::ColumnValue null() { return {pgo::ColumnKind::Null, std::nullopt}; }
pgo::ColumnValue toast() { return {pgo::ColumnKind::UnchangedToast, std::nullopt}; }
std::string str(int64_t v) { return std::to_string(v); }

// orders (tenant_id bigint, id bigint, note text, row_version bigint, PRIMARY KEY (tenant_id, id))
pgo::Relation orders_relation() {
  pgo::Relation r;
  r.oid = 16401;
  r.namespace_name = "public";
  r.name = "orders";
  r.replica_identity = 'd';
  r.columns = {{true, "tenant_id", 20, -1},
               {true, "id", 20, -1},
               {false, "note", 25, -1},
               {false, "row_version", 20, -1}};
  return r;
}
const config::ShardedTable kOrders{"orders", "tenant_id", "bigint", "row_version"};
const config::ShardedTable kOrdersNoVersion{"orders", "tenant_id", "bigint", ""};

pgo::TupleData row(int64_t tenant, int64_t id, pgo::ColumnValue note, pgo::ColumnValue version) {
  return {text(str(tenant)), text(str(id)), std::move(note), std::move(version)};
}
pgo::TupleData key_tuple(int64_t tenant, int64_t id) {
  return {text(str(tenant)), text(str(id)), null(), null()};
}

const std::string kUpsert =
    "INSERT INTO \"public\".\"orders\" (\"tenant_id\", \"id\", \"note\", \"row_version\") OVERRIDING SYSTEM "
    "VALUE VALUES ($1, $2, "
    "$3, $4) "
    "ON CONFLICT (\"tenant_id\", \"id\") DO UPDATE SET \"note\" = EXCLUDED.\"note\", \"row_version\" = "
    "EXCLUDED.\"row_version\" WHERE (\"public\".\"orders\".\"row_version\" > EXCLUDED.\"row_version\") IS "
    "NOT TRUE";
const std::string kDeleteByKey = "DELETE FROM \"public\".\"orders\" WHERE \"tenant_id\" = $1 AND \"id\" = $2";

std::vector<ApplyStatement> ok(Result<std::vector<ApplyStatement>> r) {
  if (!r.is_ok()) FAIL(r.status().message);  // (the message only exists on failure)
  return std::move(*r);
}

pgo::Update update_of(std::optional<pgo::TupleData> old_key, pgo::TupleData new_tuple) {
  pgo::Update u;
  u.relation_oid = 16401;
  if (old_key) {
    u.old_kind = pgo::OldTuple::Key;
    u.old_tuple = std::move(*old_key);
  }
  u.new_tuple = std::move(new_tuple);
  return u;
}

TEST_CASE("insert: upsert-if-newer in the set, nothing outside it") {
  const auto rel = orders_relation();
  pgo::Insert ins{std::nullopt, rel.oid, row(1, 7, text("hello"), text("3"))};
  auto s = ok(insert_statements(rel, kOrders, moving(), ins));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql == kUpsert);
  CHECK(s[0].params == Params{"1", "7", "hello", "3"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});

  ins.new_tuple = row(1, 8, null(), text("1"));
  s = ok(insert_statements(rel, kOrders, moving(), ins));
  REQUIRE(s.size() == 1);
  CHECK(s[0].params == Params{"1", "8", std::nullopt, "1"});

  ins.new_tuple = row(tenant_out(), 7, text("x"), text("1"));
  CHECK(ok(insert_statements(rel, kOrders, moving(), ins)).empty());
}

TEST_CASE(
    "insert: without a version column the upsert overwrites; a table of key columns only does nothing") {
  const auto rel = orders_relation();
  pgo::Insert ins{std::nullopt, rel.oid, row(1, 7, text("hello"), text("3"))};
  auto s = ok(insert_statements(rel, kOrdersNoVersion, moving(), ins));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "INSERT INTO \"public\".\"orders\" (\"tenant_id\", \"id\", \"note\", \"row_version\") OVERRIDING "
        "SYSTEM VALUE VALUES ($1, "
        "$2, $3, $4) "
        "ON CONFLICT (\"tenant_id\", \"id\") DO UPDATE SET \"note\" = EXCLUDED.\"note\", \"row_version\" = "
        "EXCLUDED.\"row_version\"");

  pgo::Relation links = rel;
  links.name = "links";
  links.columns.resize(2);
  pgo::Insert link{std::nullopt, links.oid, {text("1"), text("2")}};
  s = ok(insert_statements(links, {"links", "tenant_id", "bigint", ""}, moving(), link));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "INSERT INTO \"public\".\"links\" (\"tenant_id\", \"id\") OVERRIDING SYSTEM VALUE VALUES ($1, $2) "
        "ON CONFLICT (\"tenant_id\", \"id\") DO NOTHING");
}

TEST_CASE("update, key unchanged: UPDATE of the sent non-key columns, guarded by the version") {
  const auto rel = orders_relation();
  auto s = ok(
      update_statements(rel, kOrders, moving(), update_of(std::nullopt, row(1, 7, text("new"), text("4")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "UPDATE \"public\".\"orders\" SET \"note\" = $1, \"row_version\" = $2 "
        "WHERE \"tenant_id\" = $3 AND \"id\" = $4 AND (\"row_version\" > $5) IS NOT TRUE");
  CHECK(s[0].params == Params{"new", "4", "1", "7", "4"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});

  s = ok(update_statements(rel, kOrdersNoVersion, moving(),
                           update_of(std::nullopt, row(1, 7, null(), text("4")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "UPDATE \"public\".\"orders\" SET \"note\" = $1, \"row_version\" = $2 WHERE \"tenant_id\" = $3 AND "
        "\"id\" = $4");
  CHECK(s[0].params == Params{std::nullopt, "4", "1", "7"});

  CHECK(ok(update_statements(rel, kOrders, moving(),
                             update_of(std::nullopt, row(tenant_out(), 7, text("n"), text("4")))))
            .empty());
}

TEST_CASE("update: unchanged-TOAST columns are left out") {
  const auto rel = orders_relation();
  auto s =
      ok(update_statements(rel, kOrders, moving(), update_of(std::nullopt, row(1, 7, toast(), text("5")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "UPDATE \"public\".\"orders\" SET \"row_version\" = $1 "
        "WHERE \"tenant_id\" = $2 AND \"id\" = $3 AND (\"row_version\" > $4) IS NOT TRUE");
  CHECK(s[0].params == Params{"5", "1", "7", "5"});

  // Nothing sent but the key: no statement at all.
  pgo::Relation docs = rel;
  docs.columns.resize(3);
  pgo::Update u = update_of(std::nullopt, {text("1"), text("7"), toast()});
  CHECK(ok(update_statements(docs, kOrdersNoVersion, moving(), u)).empty());
}

TEST_CASE("update with a changed key, both rows in the set") {
  const auto rel = orders_relation();
  const int64_t other = tenant_in2();
  // Every column sent: DELETE the old key, upsert the new row.
  auto s = ok(update_statements(rel, kOrders, moving(),
                                update_of(key_tuple(1, 7), row(other, 9, text("n"), text("6")))));
  REQUIRE(s.size() == 2);
  CHECK(s[0].sql == kDeleteByKey);
  CHECK(s[0].params == Params{"1", "7"});
  CHECK(s[1].sql == kUpsert);
  CHECK(s[1].params == Params{str(other), "9", "n", "6"});
  // Each may change either bucket (live verification explains differences with them).
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1), bucket(other)});
  CHECK(s[1].buckets == s[0].buckets);

  // A TOASTed column not sent: UPDATE in place, keys included, found by the old key.
  s = ok(
      update_statements(rel, kOrders, moving(), update_of(key_tuple(1, 7), row(1, 10, toast(), text("6")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "UPDATE \"public\".\"orders\" SET \"tenant_id\" = $1, \"id\" = $2, \"row_version\" = $3 "
        "WHERE \"tenant_id\" = $4 AND \"id\" = $5 AND (\"row_version\" > $6) IS NOT TRUE");
  CHECK(s[0].params == Params{"1", "10", "6", "1", "7", "6"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});
}

TEST_CASE("update with a changed key across the set's edge") {
  const auto rel = orders_relation();
  const int64_t out = tenant_out();
  // Out of the set: the target's old row goes.
  auto s = ok(
      update_statements(rel, kOrders, moving(), update_of(key_tuple(1, 7), row(out, 7, toast(), text("2")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql == kDeleteByKey);
  CHECK(s[0].params == Params{"1", "7"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});  // the bucket outside the set is not named

  // Into the set: the whole new row.
  s = ok(update_statements(rel, kOrders, moving(),
                           update_of(key_tuple(out, 7), row(1, 7, text("n"), text("2")))));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql == kUpsert);
  CHECK(s[0].params == Params{"1", "7", "n", "2"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});

  // Into the set without an unchanged TOAST value: the row cannot be built.
  auto bad =
      update_statements(rel, kOrders, moving(), update_of(key_tuple(out, 7), row(1, 7, toast(), text("2"))));
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().sqlstate == "55000");
  CHECK(bad.status().message.find("\"note\"") != std::string::npos);

  // Neither in the set.
  CHECK(ok(update_statements(rel, kOrders, moving(),
                             update_of(key_tuple(out, 7), row(out, 8, text("n"), text("2")))))
            .empty());
}

TEST_CASE("delete: by the old key, only in the set") {
  const auto rel = orders_relation();
  pgo::Delete del{std::nullopt, rel.oid, pgo::OldTuple::Key, key_tuple(1, 7)};
  auto s = ok(delete_statements(rel, kOrders, moving(), del));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql == kDeleteByKey);
  CHECK(s[0].params == Params{"1", "7"});
  CHECK(s[0].buckets == std::vector<uint32_t>{bucket(1)});
  del.old_tuple = key_tuple(tenant_out(), 7);
  CHECK(ok(delete_statements(rel, kOrders, moving(), del)).empty());
}

TEST_CASE("truncate: deletes the set's buckets only; tables not configured are skipped") {
  pgo::RelationCache relations;
  relations.put(orders_relation());
  pgo::Relation audit = orders_relation();
  audit.oid = 16500;
  audit.name = "audit";
  relations.put(audit);
  pgo::Truncate t;
  t.relation_oids = {16401, 16500};
  auto s = ok(change_statements(t, relations, {kOrders}, moving()));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "DELETE FROM \"public\".\"orders\" WHERE shardwire.bucket_of(\"tenant_id\"::bigint, 16) = "
        "ANY($1::int[])");
  CHECK(s[0].params == Params{moving().array_literal()});
  CHECK(s[0].buckets == moving().list());
  CHECK(ok(change_statements(t, relations, {kOrders}, BucketSet(kBuckets, {}))).empty());
}

TEST_CASE("change_statements: dispatch, tables not configured, messages without statements, errors") {
  pgo::RelationCache relations;
  relations.put(orders_relation());
  pgo::Insert ins{std::nullopt, 16401, row(1, 7, text("a"), text("1"))};
  CHECK(ok(change_statements(ins, relations, {kOrders}, moving())).size() == 1);
  CHECK(ok(change_statements(ins, relations, {{"accounts", "name", "text", ""}}, moving())).empty());
  CHECK(ok(change_statements(pgo::Begin{}, relations, {kOrders}, moving())).empty());
  CHECK(ok(change_statements(pgo::Commit{}, relations, {kOrders}, moving())).empty());
  CHECK(is_row_change(ins));
  CHECK_FALSE(is_row_change(pgo::Begin{}));

  ins.relation_oid = 999;
  auto unknown = change_statements(ins, relations, {kOrders}, moving());
  REQUIRE_FALSE(unknown.is_ok());
  CHECK(unknown.status().sqlstate == "08P01");
  auto streamed = change_statements(pgo::StreamStart{}, relations, {kOrders}, moving());
  REQUIRE_FALSE(streamed.is_ok());
  CHECK(streamed.status().sqlstate == "08P01");
}

TEST_CASE("identifiers are quoted; a table matches by name in any schema or by its qualified name") {
  pgo::Relation rel;
  rel.oid = 1;
  rel.namespace_name = "My Schema";
  rel.name = "Order\"s";
  rel.columns = {{true, "Tenant Id", 25, -1}, {false, "select", 25, -1}};
  const config::ShardedTable table{"Order\"s", "Tenant Id", "text", ""};
  const uint32_t b = router::bucket_of_hash(router::hash_text("acme"), kBuckets);
  pgo::Insert ins{std::nullopt, 1, {text("acme"), text("v")}};
  auto s = ok(insert_statements(rel, table, BucketSet(kBuckets, {b}), ins));
  REQUIRE(s.size() == 1);
  CHECK(s[0].sql ==
        "INSERT INTO \"My Schema\".\"Order\"\"s\" (\"Tenant Id\", \"select\") OVERRIDING SYSTEM VALUE VALUES "
        "($1, $2) "
        "ON CONFLICT (\"Tenant Id\") DO UPDATE SET \"select\" = EXCLUDED.\"select\"");
  CHECK(ok(insert_statements(rel, table, BucketSet(kBuckets, {(b + 1) % kBuckets}), ins)).empty());
  auto t = ok(truncate_statements(rel, table, BucketSet(kBuckets, {b})));
  REQUIRE(t.size() == 1);
  CHECK(t[0].sql ==
        "DELETE FROM \"My Schema\".\"Order\"\"s\" WHERE shardwire.bucket_of(\"Tenant Id\"::text, 16) = "
        "ANY($1::int[])");

  const auto orders = orders_relation();
  const std::vector<config::ShardedTable> tables{{"app.orders", "tenant_id", "bigint", ""}, table};
  CHECK(find_sharded_table(tables, orders) == nullptr);  // public.orders is not app.orders
  pgo::Relation app_orders = orders;
  app_orders.namespace_name = "app";
  CHECK(find_sharded_table(tables, app_orders) == &tables[0]);
  CHECK(find_sharded_table(tables, rel) == &tables[1]);
  CHECK(find_sharded_table({kOrders}, app_orders) != nullptr);  // unqualified: any schema
}

TEST_CASE("a NULL shard key is bucket 0") {
  const auto rel = orders_relation();
  pgo::Insert ins{std::nullopt, rel.oid, {null(), text("1"), null(), null()}};
  CHECK(ok(insert_statements(rel, kOrders, BucketSet(kBuckets, {0}), ins)).size() == 1);
  CHECK(ok(insert_statements(rel, kOrders, BucketSet(kBuckets, {1}), ins)).empty());
}

TEST_CASE(
    "refused: REPLICA IDENTITY FULL or NOTHING, a shard key outside the identity, binary values, bad "
    "tuples") {
  auto rel = orders_relation();
  pgo::Insert ins{std::nullopt, rel.oid, row(1, 7, text("a"), text("1"))};
  auto check_refused = [&](const pgo::Relation& r, const std::string& sqlstate, const std::string& fragment) {
    auto res = insert_statements(r, kOrders, moving(), ins);
    REQUIRE_FALSE(res.is_ok());
    CHECK(res.status().sqlstate == sqlstate);
    CHECK_MESSAGE(res.status().message.find(fragment) != std::string::npos, res.status().message);
  };
  pgo::Relation full = rel;
  full.replica_identity = 'f';
  for (auto& c : full.columns) c.key = true;
  check_refused(full, "55000", "REPLICA IDENTITY FULL");
  pgo::Relation nothing = rel;
  nothing.replica_identity = 'n';
  for (auto& c : nothing.columns) c.key = false;
  check_refused(nothing, "55000", "no replica identity");
  pgo::Relation by_id = rel;
  by_id.columns[0].key = false;
  check_refused(by_id, "55000", "not part of the replica identity");
  pgo::Relation no_version = rel;
  no_version.columns.pop_back();
  ins.new_tuple.pop_back();
  check_refused(no_version, "55000", "version column");
  check_refused(rel, "08P01", "columns");  // 3 values for 4 columns

  ins.new_tuple = row(1, 7, {pgo::ColumnKind::Binary, std::string("\x01", 1)}, text("1"));
  check_refused(rel, "08P01", "binary");
}

}  // namespace
}  // namespace sw::sqltext
