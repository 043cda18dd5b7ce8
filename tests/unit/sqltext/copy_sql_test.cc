// copy_key_position_sql: the table and key are quoted (identifiers inside a literal); the real
// catalog query runs against PostgreSQL in integration.copy_in.
#include "sqltext/copy_sql.h"

#include <doctest/doctest.h>

namespace sw::sqltext {
namespace {

TEST_CASE("copy_key_position_sql names the table through search_path or its schema, quoted") {
  const std::string plain = copy_key_position_sql("", "orders", "tenant_id");
  CHECK(plain.find("k.attrelid = '\"orders\"'::pg_catalog.regclass") != std::string::npos);
  CHECK(plain.find("k.attname = 'tenant_id'") != std::string::npos);
  CHECK(plain.find("c.attgenerated = ''") != std::string::npos);
  const std::string odd = copy_key_position_sql("App", "it's", "we\"ird");
  CHECK(odd.find("'\"App\".\"it''s\"'::pg_catalog.regclass") != std::string::npos);
  CHECK(odd.find("k.attname = 'we\"ird'") != std::string::npos);
}

}  // namespace
}  // namespace sw::sqltext
