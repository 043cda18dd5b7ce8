// plan_copy_in: the client's COPY options as the splitter needs them, the key's position from the
// column list (or the shards' catalog), and what is refused before any shard is asked.
#include "session/copy_in_plan.h"

#include <doctest/doctest.h>

#include <string>

namespace sw::session {
namespace {

router::TableRule orders() {
  router::TableRule rule;
  rule.config_name = "orders";
  rule.name = "orders";
  rule.key = "tenant_id";
  rule.key_type = router::KeyType::Int8;
  return rule;
}

Result<CopyInPlan> plan(const std::string& sql) {
  auto facts = parser::analyze_uncached(sql);
  REQUIRE(facts.is_ok());
  return plan_copy_in(facts.value()->statements.front(), orders());
}

TEST_CASE("the column list gives the key's position; without one the shards' catalog does") {
  auto listed = plan("COPY orders (id, note, tenant_id) FROM STDIN");
  REQUIRE(listed.is_ok());
  CHECK(listed->key_known);
  CHECK(listed->options.key_field == 2);
  CHECK(listed->options.format == wire::CopyFormat::Text);
  CHECK(listed->options.delimiter == '\t');
  CHECK(listed->options.null_string == "\\N");
  auto whole = plan("COPY public.orders FROM STDIN");
  REQUIRE(whole.is_ok());
  CHECK_FALSE(whole->key_known);
  CHECK(whole->key_position_sql.find("'\"public\".\"orders\"'::pg_catalog.regclass") != std::string::npos);
  auto missing = plan("COPY orders (id, note) FROM STDIN");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().sqlstate == "0A000");
  CHECK(missing.status().message.find("tenant_id") != std::string::npos);
}

TEST_CASE("CSV options, their defaults, FORCE_NULL / FORCE_NOT_NULL of the key") {
  auto csv = plan(
      "COPY orders (tenant_id) FROM STDIN WITH (FORMAT csv, HEADER match, DELIMITER ';', NULL 'x', "
      "QUOTE '''', FORCE_NOT_NULL (tenant_id), FORCE_NULL (note))");
  REQUIRE(csv.is_ok());
  CHECK(csv->options.format == wire::CopyFormat::Csv);
  CHECK(csv->options.header);
  CHECK(csv->options.delimiter == ';');
  CHECK(csv->options.null_string == "x");
  CHECK(csv->options.quote == '\'');
  CHECK(csv->options.escape == '\'');  // ESCAPE defaults to QUOTE
  CHECK(csv->options.key_force_not_null);
  CHECK_FALSE(csv->options.key_force_null);
  auto old = plan("COPY orders (tenant_id) FROM STDIN CSV HEADER ESCAPE '\\'");
  REQUIRE(old.is_ok());
  CHECK(old->options.delimiter == ',');
  CHECK(old->options.null_string.empty());
  CHECK(old->options.escape == '\\');
  CHECK(old->options.quote == '"');
  auto binary = plan("COPY orders (tenant_id) FROM STDIN (FORMAT binary)");
  REQUIRE(binary.is_ok());
  CHECK(binary->options.format == wire::CopyFormat::Binary);
}

TEST_CASE("options PostgreSQL refuses, and ENCODING, are refused before any shard is asked") {
  for (const char* sql : {"COPY orders (tenant_id) FROM STDIN (FORMAT xml)",
                          "COPY orders (tenant_id) FROM STDIN (DELIMITER '::')",
                          "COPY orders (tenant_id) FROM STDIN (QUOTE '\"')",
                          "COPY orders (tenant_id) FROM STDIN (FORMAT binary, HEADER)",
                          "COPY orders (tenant_id) FROM STDIN (FORMAT csv, DELIMITER '\"')",
                          "COPY orders (tenant_id) FROM STDIN (HEADER maybe)",
                          "COPY orders (tenant_id) FROM STDIN (ENCODING 'UTF8')"}) {
    CAPTURE(sql);
    auto refused = plan(sql);
    CHECK_FALSE(refused.is_ok());
  }
}

TEST_CASE("a reference table's COPY reads only from the client") {
  for (const char* sql : {"COPY plans FROM STDIN", "COPY plans (id, name) FROM STDIN WITH (FORMAT csv)"}) {
    INFO(sql);
    auto facts = parser::analyze_uncached(sql);
    REQUIRE(facts.is_ok());
    CHECK(plan_reference_copy_in(facts.value()->statements.front(), "plans").is_ok());
  }
  for (const char* sql : {"COPY plans FROM '/tmp/plans.csv'", "COPY plans FROM PROGRAM 'cat /tmp/p'"}) {
    INFO(sql);
    auto facts = parser::analyze_uncached(sql);
    REQUIRE(facts.is_ok());
    auto refused = plan_reference_copy_in(facts.value()->statements.front(), "plans");
    REQUIRE_FALSE(refused.is_ok());
    CHECK(refused.status().sqlstate == "0A000");
    CHECK(refused.status().message.find("reference table plans") != std::string::npos);
    CHECK(refused.status().message.find("FROM STDIN") != std::string::npos);
  }
}

}  // namespace
}  // namespace sw::session
