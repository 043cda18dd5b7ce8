// catalog/two_phase.h's pure part: the decision row's shard list read back from its text[].
#include "catalog/two_phase.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::catalog::parse_text_array;

TEST_CASE("parse_text_array reads PostgreSQL's text[] output, the inverse of text_array_literal") {
  CHECK(parse_text_array("{}").empty());
  CHECK(parse_text_array("{s0,s1}") == std::vector<std::string>{"s0", "s1"});
  CHECK(parse_text_array(R"({s0,"s\"1,x","s\\2 {y}",NULL})") ==
        std::vector<std::string>{"s0", "s\"1,x", "s\\2 {y}", ""});
  CHECK(parse_text_array("not an array").empty());
}
