// The SQL shardwire runs on reference tables: the digest the shards compare and the statements
// init fills a copy with.
#include <doctest/doctest.h>

#include <string>

#include "sqltext/reference_sql.h"

using namespace sw::sqltext;

TEST_CASE("the digest hashes each row image under the configured name, like the bucket verifier") {
  CHECK(reference_digest_sql("plans", "public.plans", "id, name") ==
        "SELECT count(*), coalesce(sum(hashtextextended('plans:' || ROW(id, name)::text, 0)), 0)::text "
        "FROM public.plans");
  // The name is a literal: a quote in it cannot end the string.
  CHECK(reference_digest_sql("o'x", "\"o'x\"", "id").find("'o''x:'") != std::string::npos);
}

TEST_CASE("init stages the default shard's rows and inserts those the copy lacks") {
  CHECK(reference_staging_sql("app.plans") ==
        "CREATE TEMP TABLE sw_reference_rows (LIKE app.plans) ON COMMIT DROP");
  CHECK(reference_copy_in_sql("id, name") == "COPY sw_reference_rows (id, name) FROM STDIN");
  CHECK(reference_copy_out_sql("app.plans", "id, name") == "COPY (SELECT id, name FROM app.plans) TO STDOUT");
  CHECK(reference_fill_sql("app.plans", "id, name") ==
        "INSERT INTO app.plans (id, name) SELECT id, name FROM sw_reference_rows EXCEPT ALL SELECT id, name "
        "FROM "
        "app.plans");
}

TEST_CASE("column lists are by name, so attribute order on each shard does not matter") {
  CHECK(std::string(kColumnsByNameSql).find("ORDER BY attname") != std::string::npos);
  CHECK(std::string(kWritableColumnsSql).find("attgenerated = ''") != std::string::npos);
  CHECK(std::string(kResolveTableSql) == "SELECT to_regclass($1)::text");
}
