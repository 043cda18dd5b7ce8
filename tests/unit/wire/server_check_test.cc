// ServerMessageCheck: what a broken or hostile server can send in the middle of a result. Bodies
// are checked from exact-size heap copies so ASan reports any read past the body.
#include "wire/server_check.h"

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::wire {
namespace {
using namespace std::string_literals;

std::string body_of(const std::string& message) {
  const FrameResult r = read_frame(message, Sender::Server, Limits{});
  REQUIRE(r.status == FrameStatus::Complete);
  return std::string(r.frame.body);
}

Status check(ServerMessageCheck& c, char type, const std::string& body) {
  std::unique_ptr<char[]> exact(new char[body.size() + 1]);
  body.copy(exact.get(), body.size());
  return c.on_message(type, std::string_view(exact.get(), body.size()));
}

std::string row_description(const std::vector<std::string>& names) {
  std::vector<RowField> columns;
  for (const auto& n : names) columns.push_back(computed_column(n, 25));
  std::string out;
  encode_row_description(out, columns);
  return body_of(out);
}

std::string data_row(const std::vector<std::optional<std::string>>& values) {
  std::string out;
  encode_data_row(out, values);
  return body_of(out);
}

std::string raw_data_row(uint16_t columns, const std::vector<uint32_t>& lengths, const std::string& bytes) {
  std::string body;
  append_be16(body, columns);
  for (uint32_t l : lengths) append_be32(body, l);
  return body + bytes;
}

void expect_violation(const Status& s, const std::string& part) {
  CHECK_FALSE(s.is_ok());
  CHECK(s.fault == Fault::Server);
  CHECK(s.sqlstate == "08P01");
  CHECK_MESSAGE(s.message.find(part) != std::string::npos, s.message);
}

}  // namespace

TEST_CASE("a well-formed result passes, NULLs and empty values included") {
  ServerMessageCheck c;
  CHECK(check(c, 'T', row_description({"a", "b", "c"})).is_ok());
  CHECK(check(c, 'D', data_row({"1"s, std::nullopt, ""s})).is_ok());
  CHECK(check(c, 'N', "SNOTICE\0C00000\0Mhi\0\0"s).is_ok());  // a notice mid-result changes nothing
  CHECK(check(c, 'D', data_row({"2"s, "x"s, std::nullopt})).is_ok());
  CHECK(check(c, 'C', "SELECT 2\0"s).is_ok());
  // After the result ended, rows of an Execute without Describe have any (well-formed) shape.
  CHECK(check(c, 'D', data_row({"only"s})).is_ok());
}

TEST_CASE("DataRow column count must match the RowDescription of its result") {
  ServerMessageCheck c;
  REQUIRE(check(c, 'T', row_description({"v"})).is_ok());
  expect_violation(check(c, 'D', data_row({"1"s, "2"s, "3"s})),
                   "DataRow has 3 columns but its RowDescription has 1");
  ServerMessageCheck other;
  REQUIRE(check(other, 'T', row_description({"a", "b"})).is_ok());
  expect_violation(check(other, 'D', data_row({})), "DataRow has 0 columns but its RowDescription has 2");
  // reset(): a new server or user starts without a known result.
  other.reset();
  CHECK(check(other, 'D', data_row({"1"s})).is_ok());
  // BindComplete (any non-asynchronous message) ends the described result.
  REQUIRE(check(other, 'T', row_description({"a", "b"})).is_ok());
  CHECK(check(other, '2', "").is_ok());
  CHECK(check(other, 'D', data_row({"1"s})).is_ok());
}

TEST_CASE("DataRow structure: field lengths past the end, negative lengths, missing or extra bytes") {
  ServerMessageCheck c;
  expect_violation(check(c, 'D', raw_data_row(1, {100}, "12345")), "DataRow column 1 claims 100 bytes");
  expect_violation(check(c, 'D', raw_data_row(1, {0x80000000u}, "")), "negative length");
  expect_violation(check(c, 'D', raw_data_row(1, {0xfffffffeu}, "")), "negative length");
  expect_violation(check(c, 'D', raw_data_row(2, {1}, "x")), "DataRow ends before column 2 of 2");
  expect_violation(check(c, 'D', raw_data_row(1, {1}, "xy")), "bytes after its last column");
  expect_violation(check(c, 'D', "\x01"s), "no column count");
  expect_violation(check(c, 'D', ""), "no column count");
  // A length near 2^31 on a small body must not wrap any sum.
  expect_violation(check(c, 'D', raw_data_row(2, {0x7fffffffu}, "abc")), "claims 2147483647 bytes");
  CHECK(check(c, 'D', raw_data_row(2, {0xffffffffu, 0}, "")).is_ok());  // NULL, empty
}

TEST_CASE("RowDescription structure") {
  ServerMessageCheck c;
  std::string valid = row_description({"a", "b"});
  for (size_t cut = 0; cut < valid.size(); ++cut) {
    CAPTURE(cut);
    CHECK_FALSE(check(c, 'T', valid.substr(0, cut)).is_ok());
  }
  expect_violation(check(c, 'T', valid + "x"), "bytes after its last column");
  CHECK(check(c, 'T', valid).is_ok());
}

TEST_CASE("ErrorResponse needs a well-formed SQLSTATE") {
  ServerMessageCheck c;
  CHECK(check(c, 'E', "SERROR\0C42P01\0Mno such table\0\0"s).is_ok());
  expect_violation(check(c, 'E', "SERROR\0Mno code\0\0"s), "ErrorResponse without a SQLSTATE");
  expect_violation(check(c, 'E', "SERROR\0C42\0Mshort\0\0"s), "malformed SQLSTATE");
  expect_violation(check(c, 'E', "SERROR\0Cabcde\0Mlower case\0\0"s), "malformed SQLSTATE");
  CHECK_FALSE(check(c, 'E', "SERROR\0C42P01"s).is_ok());  // no terminators
  // An error ends the result: a row after it is not compared with the old description.
  REQUIRE(check(c, 'T', row_description({"v"})).is_ok());
  REQUIRE(check(c, 'E', "SERROR\0C57014\0Mcanceled\0\0"s).is_ok());
  CHECK(check(c, 'D', data_row({"1"s, "2"s})).is_ok());
}

TEST_CASE("is_sqlstate") {
  CHECK(is_sqlstate("08P01"));
  CHECK(is_sqlstate("SW001"));
  CHECK_FALSE(is_sqlstate(""));
  CHECK_FALSE(is_sqlstate("0800"));
  CHECK_FALSE(is_sqlstate("08P011"));
  CHECK_FALSE(is_sqlstate("08p01"));
  CHECK_FALSE(is_sqlstate(std::string_view("08\0P1", 5)));
}

}  // namespace sw::wire
