// Reading SQL text as PostgreSQL's scanner splits it: comments, quoted tokens, identifiers,
// keywords, lists.
#include "parser/sql_scan.h"

#include <doctest/doctest.h>

namespace sw::parser {

TEST_CASE("sql_scan: comments and quoted tokens are skipped whole") {
  CHECK(skip_comment("-- x\nSELECT", 0) == 5);
  CHECK(skip_comment("/* a /* nested */ b */x", 0) == 22);
  CHECK(skip_comment("SELECT", 0) == 0);
  CHECK(skip_space("  /* c */ -- d\n  x", 0) == 17);
  CHECK(skip_quoted("'it''s' x", 0) == 7);
  CHECK(skip_quoted("E'a\\'b' x", 1) == 7);  // from the quote after E
  CHECK(skip_quoted("\"a\"\"b\" x", 0) == 6);
  CHECK(skip_quoted("$t$ a $ b $t$ x", 0) == 13);
  CHECK(skip_quoted("abc", 0) == 0);
}

TEST_CASE("sql_scan: identifiers fold unless quoted, keywords, lists, the end") {
  size_t i = 0;
  auto plain = read_identifier("  Name rest", &i);
  REQUIRE(plain);
  CHECK(plain->text == "name");
  CHECK_FALSE(plain->quoted);
  i = 0;
  auto quoted = read_identifier("\"Mi\"\"xed\"", &i);
  REQUIRE(quoted);
  CHECK(quoted->text == "Mi\"xed");
  CHECK(quoted->quoted);
  i = 0;
  CHECK(read_keyword("  PREPARE s", &i, "prepare"));
  CHECK_FALSE(read_keyword(" prepared", &(i = 0), "prepare"));
  CHECK(i == 0);
  i = 0;
  auto list = read_list(" (int4, 'a,b', f(1, 2))", &i);
  REQUIRE(list);
  CHECK(*list == std::vector<std::string>{"int4", "'a,b'", "f(1, 2)"});
  i = 0;
  CHECK_FALSE(read_list("(a, b", &i));
  CHECK(at_end(" -- done\n ;; ", 0));
  CHECK_FALSE(at_end(" ; x", 0));
  CHECK(trim("  /* c */ SELECT 1 ;; ") == "SELECT 1");
}

}  // namespace sw::parser
