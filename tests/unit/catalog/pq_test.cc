// catalog/pq.h's pure helpers: text array literals for parameters, strict int64 parsing.
#include "catalog/pq.h"

#include <doctest/doctest.h>

#include <string>

using namespace sw::catalog;

TEST_CASE("text array literals quote every element") {
  CHECK(text_array_literal({}) == "{}");
  CHECK(text_array_literal({"s0", "s1"}) == "{\"s0\",\"s1\"}");
  CHECK(text_array_literal({"a\"b", "c\\d", "e,f"}) == "{\"a\\\"b\",\"c\\\\d\",\"e,f\"}");
}

TEST_CASE("parse_int64 accepts only whole decimal numbers") {
  int64_t v = 0;
  CHECK(parse_int64(std::string("42"), &v));
  CHECK(v == 42);
  CHECK(parse_int64(std::string("-7"), &v));
  CHECK(v == -7);
  CHECK(parse_int64(std::string("9223372036854775807"), &v));
  CHECK_FALSE(parse_int64(std::string("9223372036854775808"), &v));
  CHECK_FALSE(parse_int64(std::string(""), &v));
  CHECK_FALSE(parse_int64(std::string("12x"), &v));
  CHECK_FALSE(parse_int64(std::string(" 1"), &v));
}
