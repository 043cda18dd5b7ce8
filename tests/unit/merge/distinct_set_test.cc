// count/sum/avg(DISTINCT x) of a non-key column: the union of the shards' array_agg(DISTINCT x) per group
// (DistinctSet, Accumulator, Merger), equal values in another spelling counted once, NULLs not,
// and the merge's budget of distinct values (fanout.max_distinct_values, 54000 beyond).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "merge/aggregate.h"
#include "merge/distinct_set.h"
#include "merge/merger.h"
#include "merge_rows.h"

namespace {
using namespace sw::merge;
using namespace sw::merge::test;

constexpr uint32_t kNumericArray = 1231;
constexpr uint32_t kTextArray = 1009;
constexpr uint32_t kFloat8Array = 1022;
constexpr uint32_t kFloat4Array = 1021;
constexpr uint32_t kInt4Array = 1007;
constexpr uint32_t kInt8Array = 1016;
constexpr uint32_t kIntervalArray = 1187;

// sum/avg(DISTINCT) of one group: each array one shard's, then finish().
std::optional<std::string> distinct_total(Combine combine, uint32_t array_type,
                                          std::initializer_list<const char*> arrays) {
  Accumulator total(combine, array_type);
  for (const char* array : arrays) REQUIRE(total.add(opt(array), std::nullopt).is_ok());
  REQUIRE(total.finish().is_ok());
  return total.result();
}

}  // namespace

TEST_CASE("the union of the shards' distinct values: equal spellings once, NULL elements never") {
  DistinctSet set;
  REQUIRE(set.add_array(oid::kNumeric, "{1.5,2,NULL}", {}, nullptr).is_ok());
  REQUIRE(set.add_array(oid::kNumeric, "{1.50,3}", {}, nullptr).is_ok());
  CHECK(set.size() == 3);  // 1.5, 2, 3
  DistinctSet floats;
  REQUIRE(floats.add_array(oid::kFloat8, "{-0,NaN}", {}, nullptr).is_ok());
  REQUIRE(floats.add_array(oid::kFloat8, "{0,NaN}", {}, nullptr).is_ok());
  CHECK(floats.size() == 2);  // -0 = 0, NaN = NaN as PostgreSQL compares them
  DistinctSet texts;
  REQUIRE(texts.add_array(oid::kText, R"({"a b",NULL,"NULL","x\"y"})", {}, nullptr).is_ok());
  REQUIRE(texts.add_array(oid::kText, R"({"a b",c})", {}, nullptr).is_ok());
  CHECK(texts.size() == 4);  // "a b", the text NULL, x"y, c
  CHECK(texts.add_array(oid::kText, "{unterminated", {}, nullptr).sqlstate == "22P02");
}

TEST_CASE("every set of a merge draws on one budget: 54000 past it, naming the setting") {
  DistinctBudget budget{3, 0};
  DistinctSet one, two;
  REQUIRE(one.add_array(oid::kInt4, "{1,2}", {}, &budget).is_ok());
  REQUIRE(two.add_array(oid::kInt4, "{1}", {}, &budget).is_ok());
  CHECK(budget.held == 3);
  REQUIRE(one.add_array(oid::kInt4, "{2,1}", {}, &budget).is_ok());  // held already
  auto past = two.add_array(oid::kInt4, "{9}", {}, &budget);
  CHECK(past.sqlstate == "54000");
  CHECK(past.message.find("fanout.max_distinct_values") != std::string::npos);
}

TEST_CASE("count_distinct answers int8 from arrays of comparable types only") {
  CHECK(combined_type(Combine::CountDistinct, kNumericArray).value() == oid::kInt8);
  CHECK(combined_type(Combine::CountDistinct, kTextArray).value() == oid::kInt8);
  CHECK(combined_type(Combine::CountDistinct, oid::kInt8).status().sqlstate == "0A000");  // not an array
  Accumulator count(Combine::CountDistinct, kFloat8Array);
  CHECK(count.result() == opt("0"));  // no shard had a value
  REQUIRE(count.add(opt("{1,2}"), std::nullopt).is_ok());
  REQUIRE(count.add(std::nullopt, std::nullopt).is_ok());  // a group with only FILTERed-out rows
  REQUIRE(count.add(opt("{2,3}"), std::nullopt).is_ok());
  CHECK(count.result() == opt("3"));
}

TEST_CASE("a grouped merge counts each group's distinct values beside the other aggregates") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.outputs = {{Combine::Key, 0, "g"}, {Combine::CountDistinct, 1, "kinds"}, {Combine::Count, 2, "n"}};
  plan.order_by = {SortKey{0, {}, false, false}};
  Merger merger(plan, 2, 100);
  merger.set_max_distinct_values(4);
  REQUIRE(merger.describe({oid::kInt4, kTextArray, oid::kInt8}, {"g", "kinds", "n"}).is_ok());
  REQUIRE(merger.push(0, row({"1", "{a,b}", "3"})).is_ok());
  REQUIRE(merger.push(0, row({"2", "{a}", "1"})).is_ok());
  REQUIRE(merger.push(1, row({"1", "{b,c}", "2"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  std::vector<std::string> out;
  for (;;) {
    auto next = merger.next();
    REQUIRE(next.is_ok());
    if (!next->has_value()) break;
    out.push_back(*(**next)[0] + "|" + *(**next)[1] + "|" + *(**next)[2]);
  }
  CHECK(out == std::vector<std::string>{"1|3|5", "2|1|1"});
  // Four values held (a, b, c in group 1; a in group 2): one more is past the budget.
  Merger small(plan, 1, 100);
  small.set_max_distinct_values(2);
  REQUIRE(small.describe({oid::kInt4, kTextArray, oid::kInt8}, {"g", "kinds", "n"}).is_ok());
  CHECK(small.push(0, row({"1", "{a,b,c}", "3"})).sqlstate == "54000");
}

TEST_CASE("sum/avg(DISTINCT): PostgreSQL's result types, NULL without values") {
  CHECK(combined_type(Combine::SumDistinct, kInt4Array).value() == oid::kInt8);
  CHECK(combined_type(Combine::SumDistinct, kInt8Array).value() == oid::kNumeric);
  CHECK(combined_type(Combine::SumDistinct, kNumericArray).value() == oid::kNumeric);
  CHECK(combined_type(Combine::SumDistinct, kFloat4Array).value() == oid::kFloat4);
  CHECK(combined_type(Combine::SumDistinct, kFloat8Array).value() == oid::kFloat8);
  CHECK(combined_type(Combine::AvgDistinct, kInt4Array).value() == oid::kNumeric);
  CHECK(combined_type(Combine::AvgDistinct, kInt8Array).value() == oid::kNumeric);
  CHECK(combined_type(Combine::AvgDistinct, kFloat4Array).value() == oid::kFloat8);
  CHECK(combined_type(Combine::AvgDistinct, kFloat8Array).value() == oid::kFloat8);
  auto interval = combined_type(Combine::SumDistinct, kIntervalArray);
  CHECK(interval.status().sqlstate == "0A000");
  CHECK(interval.status().message.find("add a shard key value") != std::string::npos);
  CHECK(distinct_total(Combine::SumDistinct, kInt4Array, {"{}"}) == std::nullopt);
  CHECK(distinct_total(Combine::AvgDistinct, kFloat8Array, {"{NULL}"}) == std::nullopt);
}

TEST_CASE("sum/avg(DISTINCT): each value once over the shards, exact integers and numeric") {
  CHECK(distinct_total(Combine::SumDistinct, kInt4Array, {"{1,2,NULL}", "{2,3}"}) == opt("6"));
  CHECK(distinct_total(Combine::AvgDistinct, kInt4Array, {"{1,2}", "{2}"}) == opt("1.5000000000000000"));
  CHECK(distinct_total(Combine::SumDistinct, kInt8Array,
                       {"{9000000000000000000}", "{9000000000000000000,8000000000000000000}"}) ==
        opt("17000000000000000000"));
  CHECK(distinct_total(Combine::SumDistinct, kNumericArray, {"{1.25,0.5}", "{1.25}"}) == opt("1.75"));
  CHECK(distinct_total(Combine::AvgDistinct, kNumericArray, {"{1.25,0.5}", "{1.25,3}"}) ==
        opt("1.5833333333333333"));
}

TEST_CASE("sum/avg(DISTINCT) of floats: added in sorted order, float8_accum's overflow") {
  // In arrival order 1e16 + 1 - 1e16 + 0.5 = 0.5; sorted (-1e16, 0.5, 1, 1e16) it is 0.
  CHECK(distinct_total(Combine::SumDistinct, kFloat8Array, {"{1e+16,1}", "{-1e+16,0.5,1}"}) == opt("0"));
  CHECK(distinct_total(Combine::SumDistinct, kFloat4Array, {"{16777216,1}", "{1}"}) == opt("1.6777216e+07"));
  CHECK(distinct_total(Combine::SumDistinct, kFloat8Array, {"{-0}"}) == opt("-0"));
  CHECK(distinct_total(Combine::AvgDistinct, kFloat8Array, {"{1,2}", "{3,2}"}) == opt("2"));
  Accumulator sum(Combine::SumDistinct, kFloat8Array);
  REQUIRE(sum.add(opt("{1.7e+308}"), std::nullopt).is_ok());
  REQUIRE(sum.add(opt("{1.6e+308}"), std::nullopt).is_ok());
  CHECK(sum.finish().sqlstate == "22003");
  // float8_accum's Sxx overflows (N_old * (x - mean))^2 where float8_combine's would not.
  Accumulator avg(Combine::AvgDistinct, kFloat8Array);
  REQUIRE(avg.add(opt("{1,2,3,4}"), std::nullopt).is_ok());
  REQUIRE(avg.add(opt("{6e+153}"), std::nullopt).is_ok());
  CHECK(avg.finish().sqlstate == "22003");
  CHECK(distinct_total(Combine::AvgDistinct, kFloat8Array, {"{Infinity,1}"}) == opt("Infinity"));
}
