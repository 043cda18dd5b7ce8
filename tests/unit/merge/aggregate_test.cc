// Final aggregation of the shards' partial results (Accumulator) where floats differ from exact
// arithmetic: the sign of a zero sum and overflow, against PostgreSQL 15's float8pl/float8_combine.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "merge/aggregate.h"

TEST_CASE("float sums start from the first partial; float overflow is 22003 as in PostgreSQL") {
  using sw::merge::Accumulator;
  using sw::merge::Combine;
  namespace oid = sw::merge::oid;
  auto opt = [](const char* v) { return std::optional<std::string>(v); };
  // sum(float8) of -0 on every shard is -0 (float8pl from the first value); avg's Sx starts at 0.
  Accumulator sum(Combine::Sum, oid::kFloat8);
  REQUIRE(sum.add(opt("-0"), std::nullopt).is_ok());
  REQUIRE(sum.add(opt("-0"), std::nullopt).is_ok());
  CHECK(sum.result() == opt("-0"));
  Accumulator sum4(Combine::Sum, oid::kFloat4);
  REQUIRE(sum4.add(opt("-0"), std::nullopt).is_ok());
  CHECK(sum4.result() == opt("-0"));
  Accumulator mean(Combine::Avg, oid::kFloat8);
  REQUIRE(mean.add(opt("-0"), opt("1")).is_ok());
  CHECK(mean.result() == opt("0"));
  // Finite partial sums that overflow together: sum and avg raise 22003.
  Accumulator big(Combine::Sum, oid::kFloat8);
  REQUIRE(big.add(opt("1e308"), std::nullopt).is_ok());
  auto over = big.add(opt("1e308"), std::nullopt);
  CHECK(over.sqlstate == "22003");
  CHECK(over.message == "value out of range: overflow");
  // avg: the spread between the shards' means overflows Sxx (float8_combine), though Sx does not.
  Accumulator spread(Combine::Avg, oid::kFloat8);
  REQUIRE(spread.add(opt("1e300"), opt("1")).is_ok());
  CHECK(spread.add(opt("-1e300"), opt("1")).sqlstate == "22003");
  // An infinity is no overflow: Sxx is NaN, the avg Infinity.
  Accumulator infinite(Combine::Avg, oid::kFloat8);
  REQUIRE(infinite.add(opt("1e300"), opt("1")).is_ok());
  REQUIRE(infinite.add(opt("Infinity"), opt("1")).is_ok());
  CHECK(infinite.result() == opt("Infinity"));
  Accumulator plain(Combine::Avg, oid::kFloat8);
  REQUIRE(plain.add(opt("3"), opt("2")).is_ok());
  REQUIRE(plain.add(opt("6"), opt("1")).is_ok());
  CHECK(plain.result() == opt("3"));
}
