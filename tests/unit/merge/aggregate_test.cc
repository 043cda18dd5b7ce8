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

TEST_CASE("variances combine the shards' partials as PostgreSQL 15 computes them") {
  using sw::merge::Accumulator;
  using sw::merge::Combine;
  namespace oid = sw::merge::oid;
  auto opt = [](const char* v) { return std::optional<std::string>(v); };
  // 1, 2 on one shard (sum 3, count 2, sum of squares 5, var_pop 0.25), 4 on another.
  auto feed = [&](Accumulator& a) {
    REQUIRE(a.add_variance(opt("3"), opt("2"), opt("5"), opt("0.25")).is_ok());
    REQUIRE(a.add_variance(std::nullopt, opt("0"), std::nullopt, std::nullopt).is_ok());  // no rows
    REQUIRE(a.add_variance(opt("4"), opt("1"), opt("16"), opt("0")).is_ok());
  };
  // Integers (the shards' sum is bigint) and numeric: numeric_stddev_internal, select_div_scale.
  Accumulator var_samp(Combine::VarSamp, oid::kInt8), var_pop(Combine::VarPop, oid::kNumeric);
  Accumulator stddev_samp(Combine::StddevSamp, oid::kInt8), stddev_pop(Combine::StddevPop, oid::kInt8);
  for (Accumulator* a : {&var_samp, &var_pop, &stddev_samp, &stddev_pop}) feed(*a);
  CHECK(var_samp.result() == opt("2.3333333333333333"));
  CHECK(var_pop.result() == opt("1.5555555555555556"));
  CHECK(stddev_samp.result() == opt("1.5275252316519467"));
  CHECK(stddev_pop.result() == opt("1.2472191289246471"));
  // numeric 1.5, 2.25 | 7.125: sum's scale 3 makes the numerator's 6; the quotient's scale 16.
  Accumulator scaled(Combine::StddevSamp, oid::kNumeric);
  REQUIRE(scaled.add_variance(opt("3.75"), opt("2"), opt("7.3125"), opt("0.140625")).is_ok());
  REQUIRE(scaled.add_variance(opt("7.125"), opt("1"), opt("50.765625"), opt("0")).is_ok());
  CHECK(scaled.result() == opt("3.0541979307176541"));
  // One row: var_samp NULL, var_pop 0 (a numerator that is not positive gives 0 unscaled).
  Accumulator one_samp(Combine::VarSamp, oid::kNumeric), one_pop(Combine::VarPop, oid::kNumeric);
  REQUIRE(one_samp.add_variance(opt("2.50"), opt("1"), opt("6.2500"), opt("0")).is_ok());
  REQUIRE(one_pop.add_variance(opt("2.50"), opt("1"), opt("6.2500"), opt("0")).is_ok());
  CHECK(one_samp.result() == std::nullopt);
  CHECK(one_pop.result() == opt("0"));
  // No rows: NULL. A NaN (or infinity) anywhere: NaN, even for a sample of one.
  Accumulator none(Combine::StddevPop, oid::kNumeric);
  REQUIRE(none.add_variance(std::nullopt, opt("0"), std::nullopt, std::nullopt).is_ok());
  CHECK(none.result() == std::nullopt);
  Accumulator nan(Combine::StddevSamp, oid::kNumeric);
  REQUIRE(nan.add_variance(opt("NaN"), opt("1"), opt("NaN"), opt("NaN")).is_ok());
  CHECK(nan.result() == opt("NaN"));
  // float8: float8_combine of (N, Sx, Sxx = var_pop * N), then Sxx / (N - 1) and sqrt.
  Accumulator real_samp(Combine::VarSamp, oid::kFloat8), real_stddev(Combine::StddevSamp, oid::kFloat8);
  for (Accumulator* a : {&real_samp, &real_stddev}) feed(*a);
  CHECK(real_samp.result() == opt("2.3333333333333335"));
  // float8 partials come without a sum of squares; integers and numeric need it.
  Accumulator no_squares(Combine::VarPop, oid::kFloat8), exact(Combine::VarPop, oid::kNumeric);
  REQUIRE(no_squares.add_variance(opt("3"), opt("2"), std::nullopt, opt("0.25")).is_ok());
  CHECK(no_squares.result() == opt("0.25"));
  CHECK(exact.add_variance(opt("3"), opt("2"), std::nullopt, opt("0.25")).sqlstate == "22P02");
  CHECK(real_stddev.result() == opt("1.5275252316519468"));
  // Finite shards whose spread overflows Sxx: 22003 as float8_combine raises it.
  Accumulator spread(Combine::VarPop, oid::kFloat8);
  REQUIRE(spread.add_variance(opt("1e300"), opt("1"), opt("1e600"), opt("0")).is_ok());
  CHECK(spread.add_variance(opt("-1e300"), opt("1"), opt("1e600"), opt("0")).sqlstate == "22003");
  // A bad count is the shard's fault, named.
  Accumulator bad(Combine::VarPop, oid::kFloat8);
  CHECK(bad.add_variance(opt("1"), opt("x"), opt("1"), opt("0")).sqlstate == "22P02");
}
