// part_bind_rest / part_parse_types: a split INSERT part's own Bind values and Parse types;
// replaced_bind_rest: a Bind's values with another shard's key list items swapped.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "session/split_bind.h"

using sw::session::part_bind_rest;
using sw::session::part_parse_types;
using sw::session::replaced_bind_rest;

namespace {

std::string int16(uint16_t v) { return std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }
std::string value(const std::string& text) {
  const auto n = static_cast<uint32_t>(text.size());
  return std::string{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                     static_cast<char>(n)} +
         text;
}
const std::string kNull = "\xff\xff\xff\xff";

}  // namespace

TEST_CASE("a part's Bind carries its parameters in its order, the result formats unchanged") {
  // $1 = "a", $2 = NULL, $3 = "c"; no format codes; results: one code, binary.
  const std::string rest = int16(0) + int16(3) + value("a") + kNull + value("c") + int16(1) + int16(1);
  CHECK(part_bind_rest(rest, {3, 1}) == int16(0) + int16(2) + value("c") + value("a") + int16(1) + int16(1));
  CHECK(part_bind_rest(rest, {2}) == int16(0) + int16(1) + kNull + int16(1) + int16(1));
}

TEST_CASE("format codes: one for all stays, one per parameter is picked per part parameter") {
  const std::string one = int16(1) + int16(1) + int16(2) + value("x") + value("y") + int16(0);
  CHECK(part_bind_rest(one, {2}) == int16(1) + int16(1) + int16(1) + value("y") + int16(0));
  const std::string each =
      int16(3) + int16(0) + int16(1) + int16(0) + int16(3) + value("t") + value("b") + value("u") + int16(0);
  CHECK(part_bind_rest(each, {2, 3}) ==
        int16(2) + int16(1) + int16(0) + int16(2) + value("b") + value("u") + int16(0));
}

TEST_CASE("a part's Parse types are the client's for its parameters, trailing unknowns dropped") {
  CHECK(part_parse_types({20, 25, 20, 25}, {3, 4}) == std::vector<uint32_t>{20, 25});
  CHECK(part_parse_types({20, 0}, {2, 1}) == std::vector<uint32_t>{0, 20});
  CHECK(part_parse_types({20}, {2}).empty());
  CHECK(part_parse_types({}, {1, 2}).empty());
}

TEST_CASE("a shard's Bind: other shards' list items NULL, an array its own elements, the rest as sent") {
  // $1 = "1", $2 = "2", $3 = "{1,2}"; one format code (text) for all; results: none.
  const std::string params = int16(1) + int16(0) + int16(3) + value("1") + value("2") + value("{1,2}");
  const std::vector<sw::merge::ShardStatement::Param> replaced = {{1, std::nullopt},
                                                                  {3, std::string("{\"2\"}")}};
  CHECK(replaced_bind_rest(params, replaced) ==
        int16(1) + int16(0) + int16(3) + kNull + value("2") + value("{\"2\"}"));
  // With the result format codes after the values (a whole Bind rest): kept.
  CHECK(replaced_bind_rest(params + int16(1) + int16(1), {{2, std::nullopt}}) ==
        int16(1) + int16(0) + int16(3) + value("1") + kNull + value("{1,2}") + int16(1) + int16(1));
  CHECK(replaced_bind_rest(params, {}) == params);
}
