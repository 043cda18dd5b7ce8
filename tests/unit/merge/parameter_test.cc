// The client's Bind parameters read for HAVING: the Bind's layout, and binary values as text.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "merge/parameter.h"
#include "merge/value.h"

using namespace sw::merge;

namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

}  // namespace

TEST_CASE("a Bind's parameters: no, one or per-parameter format codes, NULL, the Parse's types") {
  // one format (binary) for all; two values: int4 7 and NULL
  auto all_binary =
      decode_bind_parameters(bytes({0, 1, 0, 1, 0, 2, 0, 0, 0, 4, 0, 0, 0, 7, -1, -1, -1, -1}), {oid::kInt4});
  REQUIRE(all_binary.has_value());
  REQUIRE(all_binary->size() == 2);
  CHECK((*all_binary)[0].format == 1);
  CHECK((*all_binary)[0].type == oid::kInt4);
  CHECK((*all_binary)[0].value == bytes({0, 0, 0, 7}));
  CHECK((*all_binary)[1].format == 1);
  CHECK((*all_binary)[1].type == 0);
  CHECK_FALSE((*all_binary)[1].value.has_value());
  auto text = decode_bind_parameters(bytes({0, 0, 0, 1, 0, 0, 0, 2, '4', '2'}), {});
  REQUIRE(text.has_value());
  CHECK(((*text)[0].format == 0 && (*text)[0].value == std::string("42")));
  auto each = decode_bind_parameters(bytes({0, 2, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 'x', 0, 0, 0, 1, 1}), {});
  REQUIRE(each.has_value());
  CHECK(((*each)[0].format == 0 && (*each)[1].format == 1));
  CHECK_FALSE(decode_bind_parameters(bytes({0, 0, 0, 1, 0, 0, 0, 5, 'x'}), {}).has_value());  // short
  CHECK_FALSE(decode_bind_parameters(bytes({0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}), {}).has_value());
}

TEST_CASE("binary values as PostgreSQL prints them") {
  CHECK(binary_to_text(oid::kInt2, bytes({-1, -2})).value() == "-2");
  CHECK(binary_to_text(oid::kInt4, bytes({0, 0, 1, 0})).value() == "256");
  CHECK(binary_to_text(oid::kInt8, bytes({-1, -1, -1, -1, -1, -1, -1, -1})).value() == "-1");
  CHECK(binary_to_text(oid::kBool, bytes({1})).value() == "t");
  CHECK(binary_to_text(oid::kFloat8, bytes({0x3f, -8, 0, 0, 0, 0, 0, 0})).value() == "1.5");
  CHECK(binary_to_text(oid::kFloat4, bytes({0x3f, -64, 0, 0})).value() == "1.5");
  CHECK(binary_to_text(oid::kText, "h\xc3\xa9").value() == "h\xc3\xa9");
  // numeric 12345.678 (dscale 3): ndigits 3, weight 1, digits 1 2345 6780
  CHECK(
      binary_to_text(oid::kNumeric, bytes({0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c})).value() ==
      "12345.678");
  // -0.0012 (dscale 4): ndigits 1, weight -1, digits 12
  CHECK(binary_to_text(oid::kNumeric, bytes({0, 1, -1, -1, 0x40, 0, 0, 4, 0, 12})).value() == "-0.0012");
  // 0.00000001 (dscale 8): weight -2, digit 1
  CHECK(binary_to_text(oid::kNumeric, bytes({0, 1, -1, -2, 0, 0, 0, 8, 0, 1})).value() == "0.00000001");
  CHECK(binary_to_text(oid::kNumeric, bytes({0, 0, 0, 0, 0, 0, 0, 2})).value() == "0.00");
  CHECK(binary_to_text(oid::kNumeric, bytes({0, 0, 0, 0, -64, 0, 0, 0})).value() == "NaN");
  CHECK(binary_to_text(oid::kInt4, bytes({0, 1})).status().sqlstate == "22P03");
  CHECK(binary_to_text(oid::kNumeric, bytes({0, 2, 0, 0, 0, 0, 0, 0, 0, 1})).status().sqlstate == "22P03");
  CHECK(binary_to_text(oid::kDate, bytes({0, 0, 0, 1})).status().sqlstate == "0A000");
}

TEST_CASE("LIMIT and OFFSET parameters: bigint in text or binary, NULL is none, negative refused") {
  using sw::merge::BindParameter;
  using sw::merge::count_parameter;
  const std::vector<BindParameter> params = {{0, std::string("3"), 0},
                                             {0, std::nullopt, 0},
                                             {1, std::string("\0\0\0\0\0\0\0\x07", 8), 20},
                                             {0, std::string("-1"), 0},
                                             {0, std::string("x"), 0}};
  CHECK(count_parameter(params, 1, true).value() == 3);
  CHECK(count_parameter(params, 2, true).value() == -1);
  CHECK(count_parameter(params, 2, false).value() == 0);
  CHECK(count_parameter(params, 3, false).value() == 7);
  CHECK(count_parameter(params, 4, true).status().sqlstate == "2201W");
  CHECK(count_parameter(params, 4, false).status().sqlstate == "2201X");
  CHECK(count_parameter(params, 5, true).status().sqlstate == "22P02");
  CHECK(count_parameter(params, 6, true).status().sqlstate == "08P01");
}
