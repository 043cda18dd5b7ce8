#include "session/drop_index.h"

#include <doctest/doctest.h>

using sw::session::guarded_drop_index;
using sw::session::parse_drop_index;

TEST_CASE("DROP INDEX: options, qualified and quoted names, behavior") {
  auto d = parse_drop_index("drop index concurrently if exists Public.Idx_A, \"Mixed\"\"Case\" cascade;");
  REQUIRE(d);
  CHECK(d->concurrently);
  CHECK(d->if_exists);
  CHECK(d->names == std::vector<std::string>{"\"public\".\"idx_a\"", "\"Mixed\"\"Case\""});
  CHECK(d->behavior == "CASCADE");
  auto named_if = parse_drop_index("DROP INDEX if");
  REQUIRE(named_if);
  CHECK_FALSE(named_if->if_exists);
  CHECK(named_if->names == std::vector<std::string>{"\"if\""});
  CHECK_FALSE(parse_drop_index("DROP TABLE t"));
  CHECK_FALSE(parse_drop_index("DROP INDEX"));
  CHECK_FALSE(parse_drop_index("DROP INDEX a b"));
  CHECK_FALSE(parse_drop_index("DROP INDEX \"$sw_drop_index$\""));
}

TEST_CASE("the other shards drop each index only when its table is a sharded one") {
  auto d = parse_drop_index("DROP INDEX a, s.b RESTRICT");
  REQUIRE(d);
  std::string sql = guarded_drop_index(*d, {{"", "orders"}, {"app", "it's"}});
  CHECK(sql.rfind("DO $sw_drop_index$ BEGIN ", 0) == 0);
  CHECK(sql.find("pg_catalog.to_regclass('\"a\"')") != std::string::npos);
  CHECK(sql.find("pg_catalog.to_regclass('\"s\".\"b\"')") != std::string::npos);
  CHECK(sql.find("(t.relname = 'orders') OR (t.relname = 'it''s' AND n.nspname = 'app')") !=
        std::string::npos);
  CHECK(sql.find("EXECUTE 'DROP INDEX \"s\".\"b\" RESTRICT'") != std::string::npos);
  CHECK(guarded_drop_index(*d, {}).find("AND (false)") != std::string::npos);
}
