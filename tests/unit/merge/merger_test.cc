// The proxy's merge: streaming k-way merge, LIMIT/OFFSET, final aggregation, DISTINCT.
#include <doctest/doctest.h>

#include <algorithm>

#include "merge/merger.h"
#include "merge_rows.h"

namespace {
using namespace sw::merge;
using namespace sw::merge::test;
using sw::Status;

std::vector<std::string> drain(Merger& merger) {
  std::vector<std::string> out;
  for (;;) {
    auto next = merger.next();
    REQUIRE(next.is_ok());
    if (!next->has_value()) break;
    std::string line;
    for (const auto& v : **next) line += (line.empty() ? "" : "|") + (v ? *v : std::string("NULL"));
    out.push_back(line);
  }
  return out;
}
}  // namespace

TEST_CASE("merge_sort interleaves sorted shards, waits for a shard without rows, applies OFFSET/LIMIT") {
  MergePlan plan;
  plan.kind = MergeKind::MergeSort;
  plan.order_by = {SortKey{0, {}, true, true}};  // DESC NULLS FIRST
  plan.limit = 4;
  plan.offset = 1;
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kInt4, oid::kText}, {"v", "t"}).is_ok());
  REQUIRE(merger.push(0, row({nullptr, "n"})).is_ok());
  REQUIRE(merger.push(0, row({"10", "a"})).is_ok());
  REQUIRE(merger.push(0, row({"-3", "b"})).is_ok());
  CHECK(drain(merger).empty());  // shard 1 has sent nothing yet
  CHECK(merger.waiting_for(1));
  REQUIRE(merger.push(1, row({"7", "c"})).is_ok());
  REQUIRE(merger.push(1, row({"-20", "d"})).is_ok());
  // NULL skipped by OFFSET; -3 goes before -20, then shard 0 must send again
  CHECK(drain(merger) == std::vector<std::string>{"10|a", "7|c", "-3|b"});
  CHECK(merger.waiting_for(0));
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"-20|d"});
  CHECK(merger.done());
}

TEST_CASE("aggregate without GROUP BY answers one row, also when no shard had a row") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.outputs = {{Combine::Count, 0, ""}, {Combine::Sum, 1, ""}, {Combine::Avg, 2, "avg"},
                  {Combine::Min, 4, ""},   {Combine::Max, 5, ""}, {Combine::BoolAnd, 6, ""},
                  {Combine::BoolOr, 7, ""}};
  std::vector<uint32_t> types = {oid::kInt8,        oid::kInt8,   oid::kInt8, oid::kInt8,
                                 oid::kTimestamptz, oid::kFloat8, oid::kBool, oid::kBool};
  {
    Merger merger(plan, 2, 100);
    REQUIRE(merger.describe(types, {}).is_ok());
    CHECK(merger.output_types() == std::vector<uint32_t>{oid::kInt8, oid::kInt8, oid::kNumeric,
                                                         oid::kTimestamptz, oid::kFloat8, oid::kBool,
                                                         oid::kBool});
    REQUIRE(merger.push(0, row({"2", "3", "3", "2", "2024-01-01 10:00:00+05", "NaN", "t", "f"})).is_ok());
    REQUIRE(
        merger.push(1, row({"1", "-7", "2", "1", "2024-01-01 06:00:00+00", "1.5", "f", nullptr})).is_ok());
    REQUIRE(merger.finish_leg(0).is_ok());
    REQUIRE(merger.finish_leg(1).is_ok());
    CHECK(drain(merger) ==
          std::vector<std::string>{"3|-4|1.6666666666666667|2024-01-01 10:00:00+05|NaN|f|f"});
  }
  Merger empty(plan, 2, 100);
  REQUIRE(empty.describe(types, {}).is_ok());
  REQUIRE(empty.push(0, row({"0", nullptr, nullptr, "0", nullptr, nullptr, nullptr, nullptr})).is_ok());
  REQUIRE(empty.finish_leg(0).is_ok());
  REQUIRE(empty.finish_leg(1).is_ok());
  CHECK(drain(empty) == std::vector<std::string>{"0|NULL|NULL|NULL|NULL|NULL|NULL"});
}

TEST_CASE("GROUP BY: groups of equal keys meet, sorted afterwards, bounded by max_groups") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.outputs = {{Combine::Key, 0, ""}, {Combine::Count, 1, ""}};
  plan.order_by = {SortKey{1, {}, true, false}, SortKey{0, {}, false, false}};
  Merger merger(plan, 2, 3);
  REQUIRE(merger.describe({oid::kNumeric, oid::kInt8}, {}).is_ok());
  REQUIRE(merger.push(0, row({"1.0", "2"})).is_ok());
  REQUIRE(merger.push(0, row({nullptr, "1"})).is_ok());
  REQUIRE(merger.push(1, row({"1.00", "1"})).is_ok());  // numeric 1.0 = 1.00: one group
  REQUIRE(merger.push(1, row({"-5", "1"})).is_ok());
  REQUIRE(merger.push(1, row({nullptr, "4"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  CHECK(drain(merger).empty());  // a shard is still sending
  REQUIRE(merger.finish_leg(1).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"NULL|5", "1.0|3", "-5|1"});
  Merger small(plan, 1, 1);
  REQUIRE(small.describe({oid::kNumeric, oid::kInt8}, {}).is_ok());
  REQUIRE(small.push(0, row({"1", "1"})).is_ok());
  Status too_many = small.push(0, row({"2", "1"}));
  CHECK(too_many.sqlstate == "54000");
}

TEST_CASE("DISTINCT drops rows equal under the type's equality; concat with LIMIT stops early") {
  MergePlan plan;
  plan.kind = MergeKind::Concat;
  plan.distinct = true;
  plan.limit = 2;
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kFloat8}, {}).is_ok());
  REQUIRE(merger.push(0, row({"0"})).is_ok());
  REQUIRE(merger.push(1, row({"-0"})).is_ok());
  REQUIRE(merger.push(1, row({"NaN"})).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"0", "NaN"});
  CHECK(merger.done());  // LIMIT reached while shards still send
}

TEST_CASE("ORDER BY on a type without a known order is refused") {
  MergePlan plan;
  plan.kind = MergeKind::MergeSort;
  plan.order_by = {SortKey{0, {}, false, false}};
  Merger merger(plan, 2, 100);
  Status s = merger.describe({3802}, {"doc"});
  CHECK(s.sqlstate == "0A000");
  CHECK(s.message.find("\"doc\"") != std::string::npos);
}

TEST_CASE("malformed DataRows are rejected") {
  CHECK_FALSE(
      decode_data_row(std::string("\x00\x01\x00\x00\x00\x05"
                                  "ab",
                                  8)));
  auto ok = decode_data_row(std::string("\x00\x02\xff\xff\xff\xff\x00\x00\x00\x01x", 11));
  REQUIRE(ok);
  CHECK(!(*ok)[0]);
  CHECK(*(*ok)[1] == "x");
}

TEST_CASE("an ORDER BY name behind * is found in the shards' column names") {
  MergePlan plan;
  plan.kind = MergeKind::MergeSort;
  plan.order_by = {SortKey{-1, "total", false, false}};
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kInt4, oid::kNumeric}, {"id", "total"}).is_ok());
  REQUIRE(merger.push(0, row({"1", "10.5"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "9"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"2|9", "1|10.5"});
  Merger ambiguous(plan, 2, 100);
  CHECK(ambiguous.describe({oid::kInt4, oid::kInt4}, {"total", "total"}).sqlstate == "0A000");
  Merger missing(plan, 2, 100);
  CHECK(missing.describe({oid::kInt4}, {"id"}).sqlstate == "0A000");
}

TEST_CASE("the merger says which shard columns' text it orders or groups") {
  MergePlan sorted;
  sorted.kind = MergeKind::MergeSort;
  sorted.order_by = {SortKey{1, {}, false, false}};
  Merger by_text(sorted, 2, 100);
  REQUIRE(by_text.describe({oid::kInt4, oid::kText}, {}).is_ok());
  CHECK(by_text.compared_text() == std::vector<TextCompare>{TextCompare::None, TextCompare::Order});
  Merger by_int(MergePlan{MergeKind::MergeSort, "", {}, {SortKey{0, {}, false, false}}, false, -1, 0}, 2,
                100);
  REQUIRE(by_int.describe({oid::kInt4, oid::kText}, {}).is_ok());
  CHECK(by_int.compared_text() == std::vector<TextCompare>{TextCompare::None, TextCompare::None});
  MergePlan grouped;
  grouped.kind = MergeKind::Aggregate;
  grouped.outputs = {{Combine::Key, 0, ""}, {Combine::Max, 1, ""}};
  Merger max_text(grouped, 2, 100);
  REQUIRE(max_text.describe({oid::kText, oid::kVarchar}, {}).is_ok());
  // GROUP BY text alone needs equality only; max orders.
  CHECK(max_text.compared_text() == std::vector<TextCompare>{TextCompare::Equal, TextCompare::Order});
}

TEST_CASE("hidden sort columns order the merge and are dropped from the client's rows") {
  MergePlan plan;
  plan.kind = MergeKind::MergeSort;
  plan.order_by = {SortKey{0, {}, false, false}, SortKey{2, {}, false, false}};
  plan.hidden = 1;
  plan.limit = 3;
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kInt4, oid::kText, oid::kInt4}, {"sw_order_1", "t", "id"}).is_ok());
  REQUIRE(merger.push(0, row({"1", "a", "5"})).is_ok());
  REQUIRE(merger.push(0, row({"3", "b", "1"})).is_ok());
  REQUIRE(merger.push(1, row({"1", "c", "2"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "d", "9"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"c|2", "a|5", "d|9"});
  CHECK(merger.done());
}

TEST_CASE("DISTINCT ON keeps the first merged row per value of the leading sort keys") {
  MergePlan plan;
  plan.kind = MergeKind::MergeSort;
  plan.order_by = {SortKey{0, {}, false, false}, SortKey{1, {}, true, true}};  // g, v DESC
  plan.distinct_on = 1;
  plan.offset = 1;
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kNumeric, oid::kInt4}, {"g", "v"}).is_ok());
  // Each shard sends its first row per g; 1.0 and 1.00 are one value.
  REQUIRE(merger.push(0, row({"0", "5"})).is_ok());
  REQUIRE(merger.push(0, row({"1.0", "3"})).is_ok());
  REQUIRE(merger.push(0, row({nullptr, "1"})).is_ok());
  REQUIRE(merger.push(1, row({"1.00", "9"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "4"})).is_ok());
  REQUIRE(merger.push(1, row({nullptr, "2"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  // OFFSET 1 skips g 0; g 1 is shard 1's row (v 9 first under DESC); NULLs are one value.
  CHECK(drain(merger) == std::vector<std::string>{"1.00|9", "2|4", "NULL|2"});
}

TEST_CASE("HAVING on a hidden aggregate output: compared, then dropped from the client's rows") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.outputs = {{Combine::Key, 1, ""}, {Combine::Count, 0, ""}};
  plan.hidden_outputs = 1;
  HavingTerm having;
  having.column = 1;
  having.op = HavingTerm::Op::Gt;
  having.constant = "2";
  plan.having = having;
  Merger merger(plan, 2, 100);
  REQUIRE(merger.describe({oid::kInt8, oid::kText}, {"count", "g"}).is_ok());
  CHECK(merger.output_types() == std::vector<uint32_t>{oid::kText});
  REQUIRE(merger.push(0, row({"2", "a"})).is_ok());
  REQUIRE(merger.push(0, row({"1", "b"})).is_ok());
  REQUIRE(merger.push(1, row({"1", "a"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "b"})).is_ok());
  REQUIRE(merger.push(1, row({"2", "c"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  REQUIRE(merger.finish_leg(1).is_ok());
  std::vector<std::string> rows = drain(merger);
  std::sort(rows.begin(), rows.end());
  CHECK(rows == std::vector<std::string>{"a", "b"});  // c counts 2
}
