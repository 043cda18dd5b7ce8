// DROP INDEX read from its text: options, qualified and quoted names, behavior.
#include "parser/drop_index.h"

#include <doctest/doctest.h>

using sw::parser::parse_drop_index;

using Names = std::vector<std::vector<std::string>>;

TEST_CASE("DROP INDEX: options, qualified and quoted names, behavior") {
  auto d = parse_drop_index("drop index concurrently if exists Public.Idx_A, \"Mixed\"\"Case\" cascade;");
  REQUIRE(d);
  CHECK(d->concurrently);
  CHECK(d->if_exists);
  CHECK(d->names == Names{{"public", "idx_a"}, {"Mixed\"Case"}});
  CHECK(d->behavior == "CASCADE");
  auto named_if = parse_drop_index("DROP INDEX if");
  REQUIRE(named_if);
  CHECK_FALSE(named_if->if_exists);
  CHECK(named_if->names == Names{{"if"}});
  auto commented = parse_drop_index("/* c */ DROP -- x\n INDEX a . b RESTRICT ;");
  REQUIRE(commented);
  CHECK(commented->names == Names{{"a", "b"}});
  CHECK(commented->behavior == "RESTRICT");
  CHECK_FALSE(parse_drop_index("DROP TABLE t"));
  CHECK_FALSE(parse_drop_index("DROP INDEX"));
  CHECK_FALSE(parse_drop_index("DROP INDEX a b"));
  CHECK_FALSE(parse_drop_index("DROP INDEX a,"));
}
