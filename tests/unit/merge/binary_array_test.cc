// Arrays from array_out's text to array_send's bytes.
#include <doctest/doctest.h>

#include <string>

#include "merge/binary.h"
#include "merge/binary_array.h"
#include "merge/value.h"

using namespace sw::merge;

namespace {

std::string int32(int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  return {static_cast<char>(u >> 24), static_cast<char>(u >> 16), static_cast<char>(u >> 8),
          static_cast<char>(u)};
}

std::string bytes(uint32_t element, const std::string& text) {
  auto out = array_to_binary(element, text);
  REQUIRE_MESSAGE(out.is_ok(), text << ": " << out.status().message);
  return out.value();
}

// The header array_send writes: ndim, has-nulls, element type, (length, lower bound) per dim.
std::string header(int32_t has_nulls, uint32_t element,
                   std::initializer_list<std::pair<int32_t, int32_t>> dims) {
  std::string out =
      int32(static_cast<int32_t>(dims.size())) + int32(has_nulls) + int32(static_cast<int32_t>(element));
  for (const auto& [length, lower] : dims) out += int32(length) + int32(lower);
  return out;
}

std::string text_element(const std::string& s) { return int32(static_cast<int32_t>(s.size())) + s; }

}  // namespace

TEST_CASE("array types map to their element types") {
  CHECK(array_element_type(1007) == oid::kInt4);
  CHECK(array_element_type(1009) == oid::kText);
  CHECK(array_element_type(1231) == oid::kNumeric);
  CHECK(array_element_type(1187) == oid::kInterval);
  CHECK(array_element_type(oid::kInt4) == 0);
  CHECK(array_element_type(199) == 0);  // json[]
}

TEST_CASE("one-dimensional arrays with NULLs, and the empty array") {
  CHECK(bytes(oid::kInt4, "{1,NULL,3}") ==
        header(1, oid::kInt4, {{3, 1}}) + int32(4) + int32(1) + int32(-1) + int32(4) + int32(3));
  CHECK(bytes(oid::kInt8, "{-1}") == header(0, oid::kInt8, {{1, 1}}) + int32(8) + std::string(8, '\xff'));
  CHECK(bytes(oid::kText, "{}") == header(0, oid::kText, {}));
  CHECK(to_binary(1007, "{}").value() == header(0, oid::kInt4, {}));  // through to_binary
}

TEST_CASE("quoted elements: escapes, blanks, and the word NULL as a string") {
  CHECK(bytes(oid::kText, R"({"a b","say \"hi\"","back\\slash","NULL",null,"",x})") ==
        header(1, oid::kText, {{7, 1}}) + text_element("a b") + text_element("say \"hi\"") +
            text_element("back\\slash") + text_element("NULL") + int32(-1) + text_element("") +
            text_element("x"));
  CHECK(bytes(oid::kBytea, R"({"\\x00ff"})") ==
        header(0, oid::kBytea, {{1, 1}}) + text_element(std::string("\0\xff", 2)));
  CHECK(bytes(oid::kInterval, R"({"1 day"})") ==
        header(0, oid::kInterval, {{1, 1}}) + int32(16) + std::string(8, '\0') + int32(1) + int32(0));
}

TEST_CASE("multi-dimensional arrays and explicit lower bounds") {
  auto int2 = [](int v) { return int32(2) + std::string{'\0', static_cast<char>(v)}; };
  CHECK(bytes(oid::kInt2, "{{1,2,3},{4,5,6}}") ==
        header(0, oid::kInt2, {{2, 1}, {3, 1}}) + int2(1) + int2(2) + int2(3) + int2(4) + int2(5) + int2(6));
  CHECK(bytes(oid::kInt2, "[0:1]={7,8}") == header(0, oid::kInt2, {{2, 0}}) + int2(7) + int2(8));
  CHECK(bytes(oid::kInt2, "[-2:-2][3:4]={{NULL,9}}") ==
        header(1, oid::kInt2, {{1, -2}, {2, 3}}) + int32(-1) + int2(9));
  CHECK(bytes(oid::kText, "{{{a}},{{b}}}") ==
        header(0, oid::kText, {{2, 1}, {1, 1}, {1, 1}}) + text_element("a") + text_element("b"));
}

TEST_CASE("text that is not array_out's output is refused with 22P02") {
  for (const char* malformed : {"", "1,2", "{1,2", "{1,,2}", "{{1,2},{3}}", "{{1},2}", "{1,{2}}", "{{}}",
                                "{\"a}", "{1}x", "[1:3]={1,2}", "[0:1]{1,2}", "[1:1]={}", "{{{{{{{1}}}}}}}"})
    CHECK_MESSAGE(array_to_binary(oid::kInt4, malformed).status().sqlstate == "22P02", malformed);
  CHECK(array_to_binary(oid::kInt4, "{1,x}").status().sqlstate == "22P02");  // an element's own check
}
