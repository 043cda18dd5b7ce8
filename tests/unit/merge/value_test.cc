// Text-format values ordered as PostgreSQL orders them.
#include <doctest/doctest.h>

#include "merge/value.h"

namespace {
using namespace sw::merge;
int cmp(uint32_t type, const std::string& a, const std::string& b) {
  auto x = decode_text(type, a);
  auto y = decode_text(type, b);
  REQUIRE(x.is_ok());
  REQUIRE(y.is_ok());
  return x->compare(*y);
}
}  // namespace

TEST_CASE("integers, floats and booleans") {
  CHECK(cmp(oid::kInt4, "-5", "3") < 0);
  CHECK(cmp(oid::kInt8, "9223372036854775807", "-9223372036854775808") > 0);
  CHECK(cmp(oid::kFloat8, "NaN", "Infinity") > 0);
  CHECK(cmp(oid::kFloat8, "-0", "0") == 0);
  CHECK(cmp(oid::kFloat8, "NaN", "NaN") == 0);
  CHECK(cmp(oid::kFloat4, "-1.5", "1e-05") < 0);
  CHECK(cmp(oid::kBool, "f", "t") < 0);
  CHECK(decode_text(oid::kFloat8, "-0")->canonical() == decode_text(oid::kFloat8, "0")->canonical());
}

TEST_CASE("text in C collation, bpchar without trailing blanks") {
  CHECK(cmp(oid::kText, "Zebra", "apple") < 0);              // byte order: upper case first
  CHECK(cmp(oid::kText, "apple", "\xc3\xa9t\xc3\xa9") < 0);  // non-ASCII after ASCII
  CHECK(cmp(oid::kText, "ab", "abc") < 0);
  CHECK(cmp(oid::kBpchar, "ab  ", "ab") == 0);
  CHECK(cmp(oid::kBytea, "\\x00ff", "\\x01") < 0);
  CHECK(cmp(oid::kUuid, "00000000-0000-0000-0000-00000000000a", "10000000-0000-0000-0000-000000000000") < 0);
}

TEST_CASE("dates and times in ISO style") {
  CHECK(cmp(oid::kDate, "2024-02-29", "2024-03-01") < 0);
  CHECK(cmp(oid::kDate, "0001-01-01 BC", "0001-01-01") < 0);
  CHECK(cmp(oid::kDate, "0002-01-01 BC", "0001-01-01 BC") < 0);
  CHECK(cmp(oid::kDate, "infinity", "9999-12-31") > 0);
  CHECK(cmp(oid::kTime, "24:00:00", "23:59:59.999999") > 0);
  CHECK(cmp(oid::kTimestamp, "2024-01-01 00:00:00.5", "2024-01-01 00:00:00.25") > 0);
  CHECK(cmp(oid::kTimestamp, "-infinity", "0100-01-01 00:00:00 BC") < 0);
  // 10:00 in +05:30 is 04:30 UTC, before 05:00 UTC
  CHECK(cmp(oid::kTimestamptz, "2024-01-01 10:00:00+05:30", "2024-01-01 05:00:00+00") < 0);
  CHECK(cmp(oid::kTimestamptz, "2024-01-01 00:00:00-08", "2024-01-01 08:00:00+00") == 0);
}

TEST_CASE("dates and times in DateStyle SQL, German and Postgres, as PostgreSQL 15 prints them") {
  // The same instant in ISO and in each style (DMY: day first).
  auto same = [](uint32_t type, const char* iso, const char* styled, bool dmy) {
    auto a = decode_text(type, iso);
    auto b = decode_text(type, styled, {dmy});
    REQUIRE_MESSAGE(a.is_ok(), iso);
    REQUIRE_MESSAGE(b.is_ok(), styled << ": " << b.status().message);
    return a->compare(*b) == 0;
  };
  CHECK(same(oid::kDate, "2024-01-02", "02/01/2024", true));
  CHECK(same(oid::kDate, "2024-01-02", "01/02/2024", false));
  CHECK(same(oid::kDate, "2024-01-02", "02.01.2024", false));
  CHECK(same(oid::kDate, "2024-01-02", "02-01-2024", true));
  CHECK(same(oid::kDate, "2024-01-02", "01-02-2024", false));
  CHECK(same(oid::kDate, "0044-03-15 BC", "15/03/0044 BC", true));
  CHECK(same(oid::kTimestamp, "2024-01-02 10:11:12.5", "02/01/2024 10:11:12.5", true));
  CHECK(same(oid::kTimestamp, "2024-01-02 10:11:12.5", "02.01.2024 10:11:12.5", true));
  CHECK(same(oid::kTimestamp, "2024-01-02 10:11:12.5", "Tue 02 Jan 10:11:12.5 2024", true));
  CHECK(same(oid::kTimestamp, "2024-01-02 10:11:12.5", "Tue Jan 02 10:11:12.5 2024", false));
  CHECK(same(oid::kTimestamp, "0044-03-15 12:00:00 BC", "Fri Mar 15 12:00:00 0044 BC", false));
  CHECK(same(oid::kTimestamptz, "2024-01-02 10:11:12+00", "Tue Jan 02 10:11:12 2024 UTC", false));
  CHECK(same(oid::kTimestamptz, "2024-01-02 10:11:12+00", "Tue Jan 02 15:56:12 2024 +0545", false));
  CHECK(same(oid::kTimestamptz, "2024-01-02 10:11:12+00", "02.01.2024 07:11:12 -03", true));
  CHECK(same(oid::kTimestamptz, "2024-01-02 10:11:12+00", "01/02/2024 15:41:12 +05:30", false));
  CHECK(cmp(oid::kDate, "2024-01-02", "2024-02-01") < 0);
  CHECK(
      decode_text(oid::kDate, "02/01/2024", {true})->compare(*decode_text(oid::kDate, "01/02/2024", {true})) <
      0);
  CHECK(decode_text(oid::kDate, "02/01/2024")->compare(*decode_text(oid::kDate, "01/02/2024")) > 0);
  // An abbreviation's offset is the time zone database's: refused, naming the fix.
  auto abbreviated = decode_text(oid::kTimestamptz, "Tue Jan 02 10:11:12 2024 EST");
  CHECK(abbreviated.status().sqlstate == "0A000");
  CHECK(abbreviated.status().message.find("EST") != std::string::npos);
  CHECK(day_first("SQL, DMY"));
  CHECK(day_first("German, dmy"));
  CHECK_FALSE(day_first("Postgres, MDY"));
  CHECK_FALSE(day_first("ISO"));
}

TEST_CASE("intervals compare as 30-day months and 24-hour days") {
  CHECK(cmp(oid::kInterval, "1 mon", "30 days") == 0);
  CHECK(cmp(oid::kInterval, "1 day", "23:59:59") > 0);
  CHECK(cmp(oid::kInterval, "-1 days +25:00:00", "01:00:00") == 0);
  CHECK(cmp(oid::kInterval, "1 year 2 mons", "419 days") > 0);
  CHECK(cmp(oid::kInterval, "-00:00:01", "00:00:00") < 0);
  CHECK(decode_text(oid::kInterval, "@ 1 day").status().sqlstate == "0A000");
}

TEST_CASE("unknown types are refused") {
  auto r = decode_text(114, "{}");
  CHECK(r.status().sqlstate == "0A000");
}

TEST_CASE("only byte-order collations are merged") {
  CHECK(byte_order_collation("C"));
  CHECK(byte_order_collation("POSIX"));
  CHECK(byte_order_collation("C.UTF-8"));
  CHECK(byte_order_collation("C.utf8"));
  CHECK_FALSE(byte_order_collation("en_US.UTF-8"));
  CHECK_FALSE(byte_order_collation("en-US"));
  CHECK(is_collatable_type(oid::kVarchar));
  CHECK_FALSE(is_collatable_type(oid::kUuid));
}
