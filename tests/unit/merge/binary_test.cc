// Text-format result values converted to PostgreSQL's binary (send) format.
#include <doctest/doctest.h>

#include <string>

#include "merge/binary.h"
#include "merge/value.h"

using namespace sw::merge;

namespace {
std::string bytes(uint32_t type, const std::string& text) {
  auto out = to_binary(type, text);
  REQUIRE_MESSAGE(out.is_ok(), out.status().message);
  return out.value();
}
}  // namespace

TEST_CASE("integers, floats and bool in network byte order") {
  CHECK(bytes(oid::kInt2, "-2") == std::string("\xff\xfe", 2));
  CHECK(bytes(oid::kInt4, "258") == std::string("\0\0\1\2", 4));
  CHECK(bytes(oid::kInt8, "-1") == std::string(8, '\xff'));
  CHECK(bytes(oid::kFloat8, "1") == std::string("\x3f\xf0\0\0\0\0\0\0", 8));
  CHECK(bytes(oid::kFloat4, "-0.5") == std::string("\xbf\0\0\0", 4));
  CHECK(bytes(oid::kBool, "t") == std::string("\1", 1));
  CHECK(bytes(oid::kBool, "f") == std::string("\0", 1));
}

TEST_CASE("text as is, bytea and uuid from hex, dates and timestamps from 2000-01-01") {
  CHECK(bytes(oid::kText, "caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(bytes(oid::kBytea, "\\x00ff41") == std::string("\0\xff"
                                                       "A",
                                                       3));
  CHECK(bytes(oid::kUuid, "6ba7b810-9dad-11d1-80b4-00c04fd430c8").size() == 16);
  CHECK(bytes(oid::kDate, "2000-01-02") == std::string("\0\0\0\1", 4));
  CHECK(bytes(oid::kDate, "1999-12-31") == std::string("\xff\xff\xff\xff", 4));
  CHECK(bytes(oid::kDate, "infinity") == std::string("\x7f\xff\xff\xff", 4));
  CHECK(bytes(oid::kTimestamp, "2000-01-01 00:00:01") == std::string("\0\0\0\0\0\x0f\x42\x40", 8));
  CHECK(bytes(oid::kTimestamptz, "2000-01-01 02:00:01+02") == std::string("\0\0\0\0\0\x0f\x42\x40", 8));
  CHECK(bytes(oid::kTime, "00:00:00.000002") == std::string("\0\0\0\0\0\0\0\2", 8));
}

TEST_CASE("types without a conversion and malformed text are refused") {
  CHECK_FALSE(has_binary_form(oid::kNumeric));
  CHECK_FALSE(has_binary_form(oid::kInterval));
  CHECK(has_binary_form(oid::kTimestamptz));
  CHECK(to_binary(oid::kNumeric, "1.5").status().sqlstate == "22P02");
  CHECK_FALSE(to_binary(oid::kInt4, "x").is_ok());
  CHECK_FALSE(to_binary(oid::kUuid, "abc").is_ok());
  CHECK_FALSE(to_binary(oid::kBytea, "00ff").is_ok());
}
