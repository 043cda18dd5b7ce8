// array_agg / string_agg merged across shards (OrderedList, Accumulator, Merger): each shard's
// values in the call's order with their sort keys' arrays, merged by the keys, printed as
// PostgreSQL prints them, DISTINCT's repeats across shards dropped, and the merge's budget
// (fanout.max_distinct_values, 54000 beyond).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "merge/aggregate.h"
#include "merge/collation.h"
#include "merge/merger.h"
#include "merge/ordered_list.h"
#include "merge_rows.h"

namespace {
using namespace sw::merge;
using namespace sw::merge::test;

constexpr uint32_t kTextArray = 1009;
constexpr uint32_t kInt4Array = 1007;
constexpr uint32_t kNumericArray = 1231;

}  // namespace

TEST_CASE("array_out's quoting of one element") {
  CHECK(array_element_text("abc") == "abc");
  CHECK(array_element_text("") == R"("")");
  CHECK(array_element_text("null") == R"("null")");
  CHECK(array_element_text("a b") == R"("a b")");
  CHECK(array_element_text(R"(x"y\z)") == R"("x\"y\\z")");
  CHECK(array_element_text("a,b") == R"("a,b")");
  CHECK(array_element_text("{}") == R"("{}")");
  CHECK(array_element_text("nulls") == "nulls");
}

TEST_CASE("two shards' runs merge by the sort keys: direction, NULLs, ties in shard order") {
  OrderedList list;
  // ORDER BY k DESC (NULLS FIRST, PostgreSQL's default for DESC), then the value ascending.
  list.configure({SortKey{1, {}, true, true}}, {oid::kInt4}, false);
  REQUIRE(list.add(row({R"({"a b",c,NULL,e})", "{NULL,9,5,1}"}), {}, nullptr).is_ok());
  REQUIRE(list.add(row({R"({x,"",y})", "{NULL,7,5}"}), {}, nullptr).is_ok());
  REQUIRE(list.add(row({nullptr, nullptr}), {}, nullptr).is_ok());  // a shard without rows
  CHECK(list.array_text() == opt(R"({"a b",x,c,"",NULL,y,e})"));
  CHECK(list.joined(", ") == opt("a b, x, c, , y, e"));  // NULL values skipped
  OrderedList empty;
  empty.configure({}, {}, false);
  CHECK(empty.array_text() == std::nullopt);
  CHECK(empty.joined(",") == std::nullopt);
  OrderedList nulls;
  nulls.configure({}, {}, false);
  REQUIRE(nulls.add(row({"{NULL}"}), {}, nullptr).is_ok());
  CHECK(nulls.array_text() == opt("{NULL}"));
  CHECK(nulls.joined(",") == std::nullopt);  // string_agg of only NULLs is NULL
}

TEST_CASE("DISTINCT inside: a value two shards hold goes out once; keys compare as the type does") {
  OrderedList list;
  list.configure({SortKey{1, {}, false, false}}, {oid::kNumeric}, true);
  REQUIRE(list.add(row({"{1.5,2,NULL}", "{1.5,2,NULL}"}), {}, nullptr).is_ok());
  REQUIRE(list.add(row({"{1.50,3,NULL}", "{1.50,3,NULL}"}), {}, nullptr).is_ok());
  CHECK(list.array_text() == opt("{1.5,2,3,NULL}"));
}

TEST_CASE("malformed or unmergeable shard arrays are errors, and the budget is 54000") {
  OrderedList list;
  list.configure({SortKey{1, {}, false, false}}, {oid::kInt4}, false);
  CHECK(list.add(row({"{a,b}", "{1}"}), {}, nullptr).sqlstate == "XX000");            // lengths differ
  CHECK(list.add(row({"{{1,2},{3,4}}", "{1,2}"}), {}, nullptr).sqlstate == "0A000");  // arrays of arrays
  CHECK(list.add(row({"{a}", "{x}"}), {}, nullptr).sqlstate == "22P02");
  DistinctBudget budget{3, 0};
  OrderedList small;
  small.configure({}, {}, false);
  REQUIRE(small.add(row({"{a,b,c}"}), {}, &budget).is_ok());
  auto past = small.add(row({"{d}"}), {}, &budget);
  CHECK(past.sqlstate == "54000");
  CHECK(past.message.find("fanout.max_distinct_values") != std::string::npos);
}

TEST_CASE("array_agg answers the shards' array type, string_agg text of text or varchar only") {
  CHECK(combined_type(Combine::ArrayAgg, kInt4Array).value() == kInt4Array);
  CHECK(combined_type(Combine::ArrayAgg, oid::kInt4).status().sqlstate == "0A000");
  CHECK(combined_type(Combine::StringAgg, kTextArray).value() == oid::kText);
  CHECK(combined_type(Combine::StringAgg, kInt4Array).status().sqlstate == "0A000");
}

TEST_CASE("a grouped merge orders each group's values across shards beside other aggregates") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  OutputColumn names{Combine::StringAgg, 1, "names"};
  names.within = {SortKey{2, {}, false, false}};
  names.separator = "; ";
  OutputColumn amounts{Combine::ArrayAgg, 3, "amounts"};
  amounts.within = {SortKey{4, {}, true, true}};
  plan.outputs = {{Combine::Key, 0, "g"}, names, amounts, {Combine::Count, 5, "n"}};
  plan.order_by = {SortKey{0, {}, false, false}};
  Merger merger(plan, 2, 100);
  REQUIRE(merger
              .describe({oid::kInt4, kTextArray, kInt4Array, kNumericArray, kNumericArray, oid::kInt8},
                        {"g", "names", "array_agg", "amounts", "array_agg", "n"})
              .is_ok());
  REQUIRE(merger.push(0, row({"1", "{b,d}", "{2,4}", "{2.5,0}", "{2.5,0}", "2"})).is_ok());
  REQUIRE(merger.push(1, row({"1", "{a,c}", "{1,3}", "{3,1}", "{3,1}", "2"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "{z}", "{1}", nullptr, nullptr, "1"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  std::vector<std::string> out;
  for (;;) {
    auto next = merger.next();
    REQUIRE(next.is_ok());
    if (!next->has_value()) break;
    const Row& r = **next;
    out.push_back(*r[0] + "|" + *r[1] + "|" + r[2].value_or("NULL") + "|" + *r[3]);
  }
  CHECK(out == std::vector<std::string>{"1|a; b; c; d|{3,2.5,1,0}|4", "2|z|NULL|1"});
  // A sort key of a type the merge cannot order.
  Merger other(plan, 1, 100);
  CHECK(other
            .describe({oid::kInt4, kTextArray, 1000 /* bool[]: ordered */, kNumericArray, 1017, oid::kInt8},
                      {"g", "names", "k", "amounts", "k2", "n"})
            .sqlstate == "0A000");
}

TEST_CASE("text sort keys go through the collation check for order; the values do not") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  OutputColumn names{Combine::StringAgg, 0, "names"};
  names.within = {SortKey{1, {}, false, false}, SortKey{2, {}, false, false}};
  plan.outputs = {names};
  const auto compared = compared_text_columns(plan, {kTextArray, kTextArray, kInt4Array});
  CHECK(compared == std::vector<TextCompare>{TextCompare::None, TextCompare::Order, TextCompare::None});
}
