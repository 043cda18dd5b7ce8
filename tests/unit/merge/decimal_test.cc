// Exact decimals against values printed by PostgreSQL 15 for the same inputs.
#include <doctest/doctest.h>

#include "merge/decimal.h"
#include "merge/value.h"

using sw::merge::Decimal;

namespace {
std::string avg_of(const std::string& sum, int64_t count) {
  return Decimal::parse(sum)->divide_for_avg(count).text();
}
std::string add(const std::string& a, const std::string& b) {
  return Decimal::parse(a)->add(*Decimal::parse(b)).text();
}
int cmp(const std::string& a, const std::string& b) { return Decimal::parse(a)->compare(*Decimal::parse(b)); }
}  // namespace

TEST_CASE("avg's division has PostgreSQL's result scale and rounding") {
  CHECK(avg_of("5", 3) == "1.6666666666666667");                // avg of 1,2,2
  CHECK(avg_of("3.75", 2) == "1.8750000000000000");             // avg of 1.50, 2.25
  CHECK(avg_of("10000000001", 2) == "5000000000.50000000");     // avg of int8
  CHECK(avg_of("-3", 2) == "-1.5000000000000000");              // negative
  CHECK(avg_of("0.00003", 2) == "0.000015000000000000000000");  // small
  CHECK(avg_of("NaN", 2) == "NaN");
  CHECK(avg_of("0", 5) == "0.00000000000000000000");
}

TEST_CASE("sums are exact and keep the larger scale") {
  CHECK(add("1.50", "2.255") == "3.755");
  CHECK(add("-1.50", "1.5") == "0.00");
  CHECK(add("-10", "3.3") == "-6.7");
  CHECK(add("99999999999999999999", "1") == "100000000000000000000");
  CHECK(add("NaN", "1") == "NaN");
  CHECK(add("Infinity", "-Infinity") == "NaN");
}

TEST_CASE("numeric order: exact, scale-blind, NaN greatest") {
  CHECK(cmp("1.0", "1.00") == 0);
  CHECK(cmp("0.1000000000000000000001", "0.1") > 0);
  CHECK(cmp("-2", "-10") > 0);
  CHECK(cmp("NaN", "Infinity") > 0);
  CHECK(cmp("-Infinity", "-1e100") < 0);
  CHECK(Decimal::parse("1.500")->canonical() == Decimal::parse("1.5")->canonical());
  CHECK_FALSE(Decimal::parse("abc"));
}

TEST_CASE("floats print as PostgreSQL's shortest output") {
  using sw::merge::format_float4;
  using sw::merge::format_float8;
  CHECK(format_float8(1e15) == "1e+15");
  CHECK(format_float8(1e14) == "100000000000000");
  CHECK(format_float8(123456789012345.6) == "123456789012345.6");
  CHECK(format_float8(0.0001) == "0.0001");
  CHECK(format_float8(0.00001) == "1e-05");
  CHECK(format_float8(-2.5) == "-2.5");
  CHECK(format_float4(1e6f) == "1e+06");
  CHECK(format_float4(100000.0f) == "100000");
  CHECK(format_float4(1.5e-5f) == "1.5e-05");
}

TEST_CASE("products, differences, quotients and square roots for the variances") {
  auto num = [](const char* text) { return *Decimal::parse(text); };
  CHECK(num("1.5").multiply(num("-2.25")).text() == "-3.375");
  CHECK(num("99999999999").multiply(num("99999999999")).text() == "9999999999800000000001");
  CHECK(num("3").subtract(num("4.50")).text() == "-1.50");
  CHECK(num("1.5").with_scale(4).text() == "1.5000");
  // div_var rounded at select_div_scale: 16 significant digits at least, the operands' scales.
  CHECK(num("14").divide(num("6")).text() == "2.3333333333333333");
  CHECK(num("1").divide(num("3")).text() == "0.33333333333333333333");
  CHECK(num("-2").divide(num("3")).text() == "-0.66666666666666666667");
  CHECK(num("55.968750").divide(num("6")).text() == "9.3281250000000000");
  CHECK(num("100000000000000000000000").divide(num("7")).text() == "14285714285714285714286");
  // sqrt_var at a given scale, rounded half away from zero.
  CHECK(num("2").sqrt(16).text() == "1.4142135623730950");
  CHECK(num("9.328125").sqrt(16).text() == "3.0541979307176541");
  CHECK(num("0.0004").sqrt(4).text() == "0.0200");
  CHECK(num("0").sqrt(2).text() == "0.00");
  CHECK(num("NaN").sqrt(2).text() == "NaN");
  // Beyond 38 digits (128 bits): the digit-by-digit paths.
  CHECK(num("2").sqrt(30).text() == "1.414213562373095048801688724210");
  CHECK(num("2").divide(num("3000000000000000000000000000000000000000")).text() ==
        "0.00000000000000000000000000000000000000066666666666666667");
}
