// ResultTable and the reply helpers: exact protocol bytes, decoded again with proxy/wire, and
// the value formatters.
#include "admin/result_table.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

using namespace sw::admin;

namespace {

constexpr Column kColumns[] = {{"name", ColumnType::Text}, {"n", ColumnType::Int8}};

std::string be16(uint16_t v) {
  std::string out;
  sw::append_be16(out, v);
  return out;
}
std::string be32(uint32_t v) {
  std::string out;
  sw::append_be32(out, v);
  return out;
}
std::string message(char type, const std::string& body) {
  return std::string(1, type) + be32(4 + body.size()) + body;
}

// Splits `bytes` into server frames; every byte must belong to a complete frame.
std::vector<sw::wire::Frame> frames(const std::string& bytes) {
  std::vector<sw::wire::Frame> out;
  std::string_view rest = bytes;
  while (!rest.empty()) {
    auto r = sw::wire::read_frame(rest, sw::wire::Sender::Server, sw::wire::Limits{});
    REQUIRE(r.status == sw::wire::FrameStatus::Complete);
    out.push_back(r.frame);
    rest.remove_prefix(r.frame.size);
  }
  return out;
}
// The frames point into the bytes: keep them alive.
std::vector<sw::wire::Frame> frames(std::string&&) = delete;

// Every field of an ErrorResponse body, by code.
std::map<char, std::string> error_fields(std::string_view body) {
  std::map<char, std::string> fields;
  size_t at = 0;
  while (at < body.size() && body[at] != '\0') {
    char code = body[at++];
    size_t end = body.find('\0', at);
    REQUIRE(end != std::string_view::npos);
    CHECK(fields.count(code) == 0);
    fields[code] = std::string(body.substr(at, end - at));
    at = end + 1;
  }
  CHECK(at + 1 == body.size());  // the terminator is the last byte
  return fields;
}

}  // namespace

TEST_CASE("encode: RowDescription, DataRows with a NULL, CommandComplete SHOW, byte for byte") {
  ResultTable table(kColumns);
  table.add({text("alpha"), number(int64_t{-7})});
  table.add({text(""), std::nullopt});
  CHECK(table.size() == 2);
  CHECK(table.columns().size() == 2);
  CHECK(table.row(0)[0] == "alpha");
  CHECK_FALSE(table.row(1)[1].has_value());

  auto column = [](const std::string& name, uint32_t oid) {
    return name + '\0' + be32(0) + be16(0) + be32(oid) + be16(0xffff) + be32(0xffffffff) + be16(0);
  };
  const std::string expected = message('T', be16(2) + column("name", 25) + column("n", 20)) +
                               message('D', be16(2) + be32(5) + "alpha" + be32(2) + "-7") +
                               message('D', be16(2) + be32(0) + be32(0xffffffff)) +
                               message('C', std::string("SHOW") + '\0');
  const std::string bytes = table.encode();
  CHECK(bytes == expected);

  // The same bytes, read back with the wire module.
  auto list = frames(bytes);
  REQUIRE(list.size() == 4);
  CHECK(list[0].type == 'T');
  CHECK(sw::load_be16(list[0].body.data()) == 2);
  CHECK(list[1].type == 'D');
  CHECK(list[2].type == 'D');
  CHECK(list[3].type == 'C');
  auto tag = sw::wire::decode_command_complete(list[3].body);
  REQUIRE(tag.is_ok());
  CHECK(*tag == "SHOW");
}

TEST_CASE("an empty table is a RowDescription and the tag") {
  ResultTable table(kColumns, "SELECT");
  const std::string bytes = table.encode();
  auto list = frames(bytes);
  REQUIRE(list.size() == 2);
  CHECK(list[0].type == 'T');
  CHECK(*sw::wire::decode_command_complete(list[1].body) == "SELECT 0");
}

TEST_CASE("the SELECT tag counts rows; other tags are sent as given") {
  ResultTable select(kColumns, "SELECT");
  select.add({text("a"), number(1)});
  select.add({text("b"), number(uint64_t{2})});
  select.add({text("c"), number(int64_t{3})});
  const std::string bytes = select.encode();
  auto list = frames(bytes);
  REQUIRE(list.size() == 5);
  CHECK(*sw::wire::decode_command_complete(list[4].body) == "SELECT 3");

  ResultTable other(kColumns, "SHOW POOLS");
  other.add({text("a"), number(1)});
  const std::string other_bytes = other.encode();
  auto other_list = frames(other_bytes);
  REQUIRE(other_list.size() == 3);
  CHECK(*sw::wire::decode_command_complete(other_list[2].body) == "SHOW POOLS");
}

TEST_CASE("a row with the wrong number of values encodes as one ErrorResponse XX000") {
  for (size_t values : {0u, 1u, 3u}) {
    CAPTURE(values);
    ResultTable table(kColumns);
    table.add({text("ok"), number(1)});
    table.add(std::vector<Value>(values, text("x")));
    table.add({text("ok"), number(2)});
    const std::string bytes = table.encode();
    auto list = frames(bytes);
    REQUIRE(list.size() == 1);
    CHECK(list[0].type == 'E');
    auto fields = sw::wire::decode_error_fields(list[0].body);
    REQUIRE(fields.is_ok());
    CHECK(fields->severity == "ERROR");
    CHECK(fields->sqlstate == "XX000");
    CHECK(fields->message.find(std::to_string(values) + " values for 2 columns") != std::string_view::npos);
  }
}

TEST_CASE("number() overloads") {
  CHECK(number(0) == "0");
  CHECK(number(-5) == "-5");
  CHECK(number(int64_t{-9223372036854775807ll - 1}) == "-9223372036854775808");
  CHECK(number(uint64_t{18446744073709551615ull}) == "18446744073709551615");
  CHECK(text("") == std::string());
}

TEST_CASE("timestamp: 0 is NULL, otherwise UTC to the second") {
  CHECK_FALSE(timestamp(0).has_value());
  CHECK(timestamp(1700000000ll * 1000000) == "2023-11-14 22:13:20 UTC");
  CHECK(timestamp(1700000000ll * 1000000 + 999999) == "2023-11-14 22:13:20 UTC");  // truncated
  CHECK(timestamp(1709208000ll * 1000000) == "2024-02-29 12:00:00 UTC");
  CHECK(timestamp(951782400ll * 1000000) == "2000-02-29 00:00:00 UTC");
  CHECK(timestamp(1) == "1970-01-01 00:00:00 UTC");
}

TEST_CASE("decimal: fixed, three decimals") {
  CHECK(decimal(0) == "0.000");
  CHECK(decimal(1.5) == "1.500");
  CHECK(decimal(-0.25) == "-0.250");
  CHECK(decimal(1234.56789) == "1234.568");
  CHECK(decimal(0.0004) == "0.000");
  CHECK(decimal(1e9) == "1000000000.000");
}

TEST_CASE("command_complete") {
  CHECK(command_complete("PAUSE") == message('C', std::string("PAUSE") + '\0'));
}

TEST_CASE("error() carries severity, SQLSTATE, message and the hint") {
  const std::string bytes = error("55000", "already paused", "RESUME first");
  auto list = frames(bytes);
  REQUIRE(list.size() == 1);
  CHECK(list[0].type == 'E');
  auto decoded = sw::wire::decode_error_fields(list[0].body);
  REQUIRE(decoded.is_ok());
  CHECK(decoded->severity == "ERROR");
  CHECK(decoded->sqlstate == "55000");
  CHECK(decoded->message == "already paused");
  auto fields = error_fields(list[0].body);
  CHECK(fields ==
        std::map<char, std::string>{
            {'S', "ERROR"}, {'V', "ERROR"}, {'C', "55000"}, {'M', "already paused"}, {'H', "RESUME first"}});

  // Without a hint there is no H field.
  const std::string plain_bytes = error("42704", "no client with id 9");
  auto plain = frames(plain_bytes);
  REQUIRE(plain.size() == 1);
  auto plain_fields = error_fields(plain[0].body);
  CHECK(plain_fields.count('H') == 0);
  CHECK(plain_fields.at('C') == "42704");
  CHECK(plain_fields.at('M') == "no client with id 9");
}
