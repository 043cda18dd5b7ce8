// The other shards' guarded DROP INDEX: each index dropped only where its table is a sharded one.
#include "session/drop_index.h"

#include <doctest/doctest.h>

using sw::parser::parse_drop_index;
using sw::session::fits_guard;
using sw::session::guarded_drop_index;

TEST_CASE("the other shards drop each index only when its table is a sharded one") {
  auto d = parse_drop_index("DROP INDEX a, s.b RESTRICT");
  REQUIRE(d);
  REQUIRE(fits_guard(*d));
  std::string sql = guarded_drop_index(*d, {{"", "orders"}, {"app", "it's"}});
  CHECK(sql.rfind("DO $sw_drop_index$ BEGIN ", 0) == 0);
  CHECK(sql.find("pg_catalog.to_regclass('\"a\"')") != std::string::npos);
  CHECK(sql.find("pg_catalog.to_regclass('\"s\".\"b\"')") != std::string::npos);
  CHECK(sql.find("(t.relname = 'orders') OR (t.relname = 'it''s' AND n.nspname = 'app')") !=
        std::string::npos);
  CHECK(sql.find("EXECUTE 'DROP INDEX \"s\".\"b\" RESTRICT'") != std::string::npos);
  CHECK(guarded_drop_index(*d, {}).find("AND (false)") != std::string::npos);
}

TEST_CASE("a name holding the guard's dollar-quote tag does not fit the guard") {
  auto tagged = parse_drop_index("DROP INDEX \"$sw_drop_index$\"");
  REQUIRE(tagged);
  CHECK_FALSE(fits_guard(*tagged));
  auto inside = parse_drop_index("DROP INDEX s.\"x$sw_drop_index$y\"");
  REQUIRE(inside);
  CHECK_FALSE(fits_guard(*inside));
  auto quoted = parse_drop_index("DROP INDEX \"Mixed\"\"Case\"");
  REQUIRE(quoted);
  CHECK(fits_guard(*quoted));
  CHECK(guarded_drop_index(*quoted, {}).find("to_regclass('\"Mixed\"\"Case\"')") != std::string::npos);
}
