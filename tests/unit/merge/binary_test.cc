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

TEST_CASE("numeric as numeric_send: base-10000 digits, weight, sign, display scale") {
  using std::string;
  CHECK(bytes(oid::kNumeric, "0") == string(8, '\0'));
  CHECK(bytes(oid::kNumeric, "0.000") == string("\0\0\0\0\0\0\0\3", 8));
  CHECK(bytes(oid::kNumeric, "-0.00") == string("\0\0\0\0\0\0\0\2", 8));  // zero is positive
  CHECK(bytes(oid::kNumeric, "0.00000000000000000001") == string("\0\1\xff\xfb\0\0\0\x14\0\1", 10));
  CHECK(bytes(oid::kNumeric, "123456789.987654321") ==
        string("\0\6\0\2\0\0\0\x09"
               "\0\x01\x09\x29\x1a\x85\x26\x94\x15\x38\x03\xe8",
               20));
  CHECK(bytes(oid::kNumeric, "-12.5") == string("\0\2\0\0\x40\0\0\1\0\x0c\x13\x88", 12));
  CHECK(bytes(oid::kNumeric, "10000") == string("\0\1\0\1\0\0\0\0\0\1", 10));  // trailing zero digit cut
  CHECK(bytes(oid::kNumeric, "NaN") == string("\0\0\0\0\xc0\0\0\0", 8));
  CHECK(bytes(oid::kNumeric, "Infinity") == string("\0\0\0\0\xd0\0\0\x20", 8));  // as PostgreSQL sends it
  CHECK(bytes(oid::kNumeric, "-Infinity") == string("\0\0\0\0\xf0\0\0\x20", 8));
  for (const char* malformed : {"", "-", "1.", ".5", "1e5", "1.2.3", "12a", "nan"})
    CHECK_MESSAGE(to_binary(oid::kNumeric, malformed).status().sqlstate == "22P02", malformed);
}

TEST_CASE("interval as interval_send: microseconds, days, months") {
  using std::string;
  // 14 months, 3 days, 04:05:06.5 = 14706500000 us.
  CHECK(bytes(oid::kInterval, "1 year 2 mons 3 days 04:05:06.5") == string("\0\0\0\x03\x6c\x93\x61\xa0"
                                                                           "\0\0\0\x03\0\0\0\x0e",
                                                                           16));
  CHECK(bytes(oid::kInterval, "-1 days +00:00:00.000001") ==
        string("\0\0\0\0\0\0\0\1\xff\xff\xff\xff\0\0\0\0", 16));
  CHECK(bytes(oid::kInterval, "-00:00:01") == string("\xff\xff\xff\xff\xff\xf0\xbd\xc0\0\0\0\0\0\0\0\0", 16));
  CHECK(bytes(oid::kInterval, "00:00:00") == string(16, '\0'));
  CHECK(to_binary(oid::kInterval, "@ 1 day").status().sqlstate == "0A000");  // IntervalStyle
  CHECK(to_binary(oid::kInterval, "3 fortnights").status().sqlstate == "22P02");
}

TEST_CASE("types without a conversion and malformed text are refused") {
  CHECK(has_binary_form(oid::kNumeric));
  CHECK(has_binary_form(oid::kInterval));
  CHECK(has_binary_form(oid::kTimestamptz));
  CHECK(has_binary_form(1231));        // numeric[]
  CHECK_FALSE(has_binary_form(114));   // json
  CHECK_FALSE(has_binary_form(3904));  // int4range
  CHECK_FALSE(has_binary_form(199));   // json[]
  CHECK(to_binary(114, "{}").status().sqlstate == "22P02");
  CHECK_FALSE(to_binary(oid::kInt4, "x").is_ok());
  CHECK_FALSE(to_binary(oid::kUuid, "abc").is_ok());
  CHECK_FALSE(to_binary(oid::kBytea, "00ff").is_ok());
}
