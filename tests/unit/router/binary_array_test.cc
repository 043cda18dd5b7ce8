// decode_binary_array / encode_binary_array: PostgreSQL's array_send of the key types, decoded to
// the elements' text and encoded back with one shard's elements.
#include <doctest/doctest.h>

#include <string>

#include "router/binary_array.h"

using sw::router::BinaryArray;
using sw::router::decode_binary_array;
using sw::router::encode_binary_array;

namespace {

std::string be(uint64_t v, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// array_send of one dimension: `elements` already in binary ("" with null = true for NULL).
std::string array_send(uint32_t type, const std::vector<std::pair<std::string, bool>>& elements) {
  bool nulls = false;
  for (const auto& element : elements) nulls = nulls || element.second;
  std::string out = be(1, 4) + be(nulls ? 1 : 0, 4) + be(type, 4) + be(elements.size(), 4) + be(1, 4);
  for (const auto& element : elements)
    out += element.second ? be(0xffffffff, 4) : be(element.first.size(), 4) + element.first;
  return out;
}

}  // namespace

TEST_CASE("int2, int4 and int8 arrays decode to decimal text, negatives sign-extended") {
  auto int8 = decode_binary_array(
      array_send(20, {{be(5, 8), false}, {be(static_cast<uint64_t>(-7), 8), false}, {"", true}}));
  REQUIRE(int8);
  REQUIRE(int8->elements.size() == 3);
  CHECK(int8->elements[0] == std::optional<std::string>("5"));
  CHECK(int8->elements[1] == std::optional<std::string>("-7"));
  CHECK_FALSE(int8->elements[2].has_value());
  auto int4 = decode_binary_array(array_send(23, {{be(0xffffffff, 4), false}, {be(2147483647, 4), false}}));
  REQUIRE(int4);
  CHECK(int4->elements[0] == std::optional<std::string>("-1"));
  CHECK(int4->elements[1] == std::optional<std::string>("2147483647"));
  auto int2 = decode_binary_array(array_send(21, {{be(0x8000, 2), false}}));
  REQUIRE(int2);
  CHECK(int2->elements[0] == std::optional<std::string>("-32768"));
}

TEST_CASE("text and uuid arrays; an empty array; what is not a key array is refused") {
  auto text = decode_binary_array(array_send(25, {{"a,b", false}, {"\xc3\xa9", false}}));
  REQUIRE(text);
  CHECK(text->elements[0] == std::optional<std::string>("a,b"));
  CHECK(text->elements[1] == std::optional<std::string>("\xc3\xa9"));
  const std::string raw_uuid = "\x12\x34\x56\x78\x9a\xbc\xde\xf0\x01\x23\x45\x67\x89\xab\xcd\xef";
  auto uuid = decode_binary_array(array_send(2950, {{raw_uuid, false}}));
  REQUIRE(uuid);
  CHECK(uuid->elements[0] == std::optional<std::string>("12345678-9abc-def0-0123-456789abcdef"));
  auto empty = decode_binary_array(be(0, 4) + be(0, 4) + be(20, 4));
  REQUIRE(empty);
  CHECK(empty->elements.empty());
  CHECK_FALSE(decode_binary_array(array_send(700, {{be(0, 4), false}})));       // float4: not a key type
  CHECK_FALSE(decode_binary_array(array_send(20, {{be(5, 4), false}})));        // int8 of 4 bytes
  CHECK_FALSE(decode_binary_array(array_send(20, {{be(5, 8), false}}) + "x"));  // trailing bytes
  CHECK_FALSE(decode_binary_array(array_send(20, {{be(5, 8), false}}).substr(0, 27)));  // cut short
  CHECK_FALSE(decode_binary_array(be(2, 4) + be(0, 4) + be(20, 4) + be(1, 4) + be(1, 4) + be(1, 4) +
                                  be(1, 4) + be(8, 4) + be(5, 8)));  // two dimensions
  CHECK_FALSE(decode_binary_array("\x01"));
}

TEST_CASE("encoding one shard's elements gives array_send of them, with the client's type") {
  const std::string client = array_send(20, {{be(1, 8), false}, {be(2, 8), false}, {"", true}});
  auto decoded = decode_binary_array(client);
  REQUIRE(decoded);
  CHECK(encode_binary_array(*decoded, decoded->elements) == client);
  CHECK(encode_binary_array(*decoded, {std::string("2")}) == array_send(20, {{be(2, 8), false}}));
  CHECK(encode_binary_array(*decoded, {}) == be(0, 4) + be(0, 4) + be(20, 4));
  CHECK_FALSE(encode_binary_array(*decoded, {std::string("x")}));
  const std::string raw_uuid(16, '\xab');
  auto uuid = decode_binary_array(array_send(2950, {{raw_uuid, false}}));
  REQUIRE(uuid);
  CHECK(encode_binary_array(*uuid, uuid->elements) == array_send(2950, {{raw_uuid, false}}));
}
