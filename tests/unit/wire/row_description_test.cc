#include "wire/row_description.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace sw::wire;

namespace {
// A RowDescription as PostgreSQL 15 sends it for `SELECT id, note FROM orders` (table OID 16384),
// plus a computed binary column: built by hand, byte by byte.
std::string server_bytes() {
  std::string body;
  body += std::string("\x00\x03", 2);
  body += std::string("id\0", 3) + std::string(
                                       "\x00\x00\x40\x00"
                                       "\x00\x01"
                                       "\x00\x00\x00\x14"
                                       "\x00\x08"
                                       "\xff\xff\xff\xff"
                                       "\x00\x00",
                                       18);
  body += std::string("note\0", 5) + std::string(
                                         "\x00\x00\x40\x00"
                                         "\x00\x03"
                                         "\x00\x00\x00\x19"
                                         "\xff\xff"
                                         "\xff\xff\xff\xff"
                                         "\x00\x00",
                                         18);
  body += std::string("sum\0", 4) + std::string(
                                        "\x00\x00\x00\x00"
                                        "\x00\x00"
                                        "\x00\x00\x06\xa4"
                                        "\xff\xff"
                                        "\x00\x0a\x00\x06"
                                        "\x00\x01",
                                        18);
  const uint32_t length = static_cast<uint32_t>(body.size() + 4);
  std::string out = "T";
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((length >> shift) & 0xff);
  return out + body;
}
}  // namespace

TEST_CASE("row description: every field decoded, and encoded back to the same bytes") {
  const std::string frame = server_bytes();
  auto fields = decode_row_description(std::string_view(frame).substr(5));
  REQUIRE(fields);
  REQUIRE(fields->size() == 3);
  const RowField& id = (*fields)[0];
  CHECK(id.name == "id");
  CHECK(id.table_oid == 16384);
  CHECK(id.column == 1);
  CHECK(id.type_oid == 20);
  CHECK(id.type_size == 8);
  CHECK(id.type_modifier == -1);
  CHECK(id.format == 0);
  CHECK((*fields)[1].type_size == -1);
  const RowField& sum = (*fields)[2];
  CHECK(sum.table_oid == 0);
  CHECK(sum.type_oid == 1700);
  CHECK(sum.type_modifier == 0x000a0006);  // numeric(10,2) + VARHDRSZ
  CHECK(sum.format == 1);
  std::string again;
  encode_row_description(again, *fields);
  CHECK(again == frame);
}

TEST_CASE("row description: no fields is a result without columns") {
  std::string frame;
  encode_row_description(frame, std::vector<RowField>{});
  CHECK(frame == std::string("T\x00\x00\x00\x06\x00\x00", 7));
  auto fields = decode_row_description(std::string_view(frame).substr(5));
  REQUIRE(fields);
  CHECK(fields->empty());
}

TEST_CASE("row description: malformed bodies are 08P01, at every cut") {
  const std::string frame = server_bytes();
  const std::string_view body = std::string_view(frame).substr(5);
  for (size_t cut = 0; cut < body.size(); ++cut) {
    auto fields = decode_row_description(body.substr(0, cut));
    INFO("cut at " << cut);
    REQUIRE_FALSE(fields);
    CHECK(fields.status().sqlstate == "08P01");
  }
  auto trailing = decode_row_description(std::string(body) + "x");
  REQUIRE_FALSE(trailing);
  CHECK(trailing.status().message == "RowDescription has bytes after its last field");
  auto no_nul = decode_row_description(std::string("\x00\x01name", 6));
  REQUIRE_FALSE(no_nul);
  CHECK(no_nul.status().message == "RowDescription field 1 is cut short");
}

TEST_CASE("row description: the field count is read unsigned (65535 fields claimed, none there)") {
  auto fields = decode_row_description(std::string("\xff\xff", 2));
  REQUIRE_FALSE(fields);
  CHECK(fields.status().sqlstate == "08P01");
}
