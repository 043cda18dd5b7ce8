// The SQL that `shardwire init` runs, as strings: what each script must contain. (That it runs,
// is idempotent and behaves is checked against PostgreSQL in tests/integration/catalog_test.cc.)
#include <doctest/doctest.h>

#include <string>

#include "sqltext/bucket_sql.h"
#include "sqltext/catalog_sql.h"

using namespace sw::sqltext;

namespace {
bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }
}  // namespace

TEST_CASE("catalog schema: tables, version bump and NOTIFY, all idempotent") {
  const std::string sql = catalog_schema_sql();
  CHECK(has(sql, "CREATE SCHEMA IF NOT EXISTS shardwire"));
  for (const char* table : {"directory_version", "buckets", "routers", "migrations"})
    CHECK(has(sql, std::string("CREATE TABLE IF NOT EXISTS shardwire.") + table + " ("));
  CHECK(has(sql, "CHECK (state IN ('ACTIVE', 'MIGRATING'))"));
  CHECK(has(sql, "ON CONFLICT (id) DO NOTHING"));
  CHECK(has(sql, "pg_notify('shardwire_directory', v::text)"));
  CHECK(has(sql, "BEFORE INSERT OR UPDATE ON shardwire.buckets"));
  CHECK(has(sql, "AFTER DELETE OR TRUNCATE ON shardwire.buckets"));
  CHECK(has(sql, "steps jsonb"));
  // Every DDL statement can be re-run.
  CHECK_FALSE(has(sql, "CREATE TABLE shardwire"));
  CHECK_FALSE(has(sql, "CREATE FUNCTION"));
  CHECK_FALSE(has(sql, "CREATE TRIGGER"));
  CHECK(std::string(kNotifyChannel) == "shardwire_directory");
}

TEST_CASE("shard schema: bucket_of first, then fenced_buckets and install_fence") {
  const std::string sql = shard_schema_sql();
  const std::string bucket_sql = bucket_function_sql();
  CHECK(sql.compare(0, bucket_sql.size(), bucket_sql) == 0);
  CHECK(has(sql, "CREATE TABLE IF NOT EXISTS shardwire.fenced_buckets ("));
  CHECK(
      has(sql,
          "CREATE OR REPLACE FUNCTION shardwire.install_fence(tbl regclass, key_column text, key_type text, "
          "buckets integer)"));
  // The documented error, SQLSTATE and the escaped placeholders of the generated function.
  CHECK(has(sql, "ERRCODE = 'SW001'"));
  CHECK(has(sql, "'bucket %%s is not owned by this shard; directory version %%s'"));
  CHECK(has(sql, "CREATE OR REPLACE TRIGGER shardwire_fence BEFORE INSERT OR UPDATE OR DELETE ON %s"));
  CHECK(has(sql, "FOR EACH ROW EXECUTE FUNCTION shardwire.%I()"));
  CHECK(std::string(kFenceSqlstate) == "SW001");
}

TEST_CASE("shard schema: holds_rows on a new fence table and added to an old one as true") {
  const std::string sql = shard_schema_sql();
  CHECK(has(sql, "  holds_rows boolean NOT NULL DEFAULT true\n);"));
  // An upgrade adds it only when missing (ALTER TABLE alone would lock the fence table on every
  // run), with true on every fence an older version made.
  CHECK(has(sql,
            "AND attname = 'holds_rows' AND NOT attisdropped) THEN\n"
            "    ALTER TABLE shardwire.fenced_buckets ADD COLUMN holds_rows boolean NOT NULL DEFAULT true;"));
  // init's fences of a new shard say "no rows"; the marking statement then corrects those that do.
  CHECK(std::string(kFenceBucketsSql) ==
        "INSERT INTO shardwire.fenced_buckets (bucket, version, holds_rows) SELECT unnest($1::int[]), "
        "$2::bigint, false ON CONFLICT (bucket) DO NOTHING");
}

TEST_CASE("mark_fences_holding_rows_sql locks out writers, then probes by the bucket index's expression") {
  sw::config::ShardedTable t;
  t.name = "public.orders";
  t.key = "tenant_id";
  t.type = "int8";
  auto sql = mark_fences_holding_rows_sql(t, 4096);
  REQUIRE(sql);
  CHECK(*sql ==
        "LOCK TABLE public.orders IN SHARE MODE; "
        "UPDATE shardwire.fenced_buckets sw_fenced SET holds_rows = true WHERE NOT sw_fenced.holds_rows "
        "AND EXISTS (SELECT 1 FROM public.orders WHERE "
        "shardwire.bucket_of(\"tenant_id\"::bigint, 4096) = sw_fenced.bucket)");
  // The same expression the bucket index is built on, so the index serves the probe.
  auto expression = bucket_expression(t, 4096);
  REQUIRE(expression);
  CHECK(has(bucket_index_statement(t, 4096), "((" + *expression + "))"));
  CHECK(has(*sql, *expression + " = sw_fenced.bucket"));
  t.type = "numeric";
  auto refused = mark_fences_holding_rows_sql(t, 4096);
  REQUIRE_FALSE(refused);
  CHECK(refused.status().sqlstate == "22023");
}

TEST_CASE("quote_literal doubles quotes and switches to E'' for backslashes") {
  CHECK(quote_literal("orders") == "'orders'");
  CHECK(quote_literal("") == "''");
  CHECK(quote_literal("o'brien") == "'o''brien'");
  CHECK(quote_literal("a\\b") == "E'a\\\\b'");
  CHECK(quote_literal("it's\\") == "E'it''s\\\\'");
}

TEST_CASE("install_fence_statement quotes every value") {
  sw::config::ShardedTable t;
  t.name = "public.orders";
  t.key = "tenant_id";
  t.type = "bigint";
  CHECK(install_fence_statement(t, 4096) ==
        "SELECT shardwire.install_fence('public.orders'::regclass, 'tenant_id', 'bigint', 4096)");
  t.name = "we'ird";
  CHECK(has(install_fence_statement(t, 8), "'we''ird'::regclass"));
}

TEST_CASE("array literals") {
  CHECK(int_array_literal({}) == "{}");
  CHECK(int_array_literal({1, 2, 4095}) == "{1,2,4095}");
}
