// Streamed GROUP BY: the shards' groups arrive sorted by the group keys; each group goes out as
// soon as no shard can still send a row of it, one group held at a time.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "merge/merger.h"
#include "merge_rows.h"

namespace {
using namespace sw::merge;
using namespace sw::merge::test;

std::vector<std::string> drain(Merger& merger) {
  std::vector<std::string> out;
  for (;;) {
    auto next = merger.next();
    REQUIRE_MESSAGE(next.is_ok(), next.status().message);
    if (!next->has_value()) break;
    std::string line;
    for (const auto& v : **next) {
      if (!line.empty()) line += "|";
      line += v ? *v : std::string("NULL");
    }
    out.push_back(line);
  }
  return out;
}

// GROUP BY key ORDER BY key DESC (NULLs first): key, count, avg (as sum and count).
MergePlan streamed() {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.stream_groups = true;
  plan.outputs = {{Combine::Key, 0, ""}, {Combine::Count, 1, ""}, {Combine::Avg, 2, "avg"}};
  plan.order_by = {SortKey{0, {}, true, true}};
  return plan;
}

const std::vector<uint32_t> kTypes = {oid::kText, oid::kInt8, oid::kInt8, oid::kInt8};

}  // namespace

TEST_CASE("groups go out in key order as soon as every shard is past them, past max_groups") {
  Merger merger(streamed(), 2, 1);  // max_groups 1: streaming holds one group
  REQUIRE(merger.describe(kTypes, {}).is_ok());
  REQUIRE(merger.push(0, row({nullptr, "1", "4", "1"})).is_ok());
  REQUIRE(merger.push(0, row({"b", "2", "6", "2"})).is_ok());
  CHECK(drain(merger).empty());  // shard 1 may still send a NULL group
  REQUIRE(merger.push(1, row({"c", "1", "1", "1"})).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"NULL|1|4.0000000000000000"});
  REQUIRE(merger.push(1, row({"b", "3", "3", "3"})).is_ok());
  REQUIRE(merger.push(1, row({"a", "1", "5", "1"})).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"c|1|1.00000000000000000000"});  // shard 0 may send "b"
  REQUIRE(merger.finish_leg(0).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"b|5|1.8000000000000000"});
  CHECK_FALSE(merger.done());
  REQUIRE(merger.finish_leg(1).is_ok());
  CHECK(drain(merger) == std::vector<std::string>{"a|1|5.0000000000000000"});
  CHECK(merger.done());
}

TEST_CASE("streamed groups honour HAVING, OFFSET and LIMIT") {
  MergePlan plan = streamed();
  HavingTerm having;
  having.column = 1;
  having.op = HavingTerm::Op::Gt;
  having.constant = "1";
  plan.having = having;
  plan.offset = 1;
  plan.limit = 1;
  Merger merger(plan, 2, 10);
  REQUIRE(merger.describe(kTypes, {}).is_ok());
  for (const char* key : {"d", "c", "b", "a"}) REQUIRE(merger.push(0, row({key, "1", "1", "1"})).is_ok());
  for (const char* key : {"c", "b", "a"}) REQUIRE(merger.push(1, row({key, "1", "1", "1"})).is_ok());
  REQUIRE(merger.finish_leg(0).is_ok());
  // d has 1 row (dropped by HAVING), c skipped by OFFSET 1, b is the one row of LIMIT 1.
  CHECK(drain(merger) == std::vector<std::string>{"b|2|1.00000000000000000000"});
  CHECK(merger.done());  // LIMIT reached: shard 1 need not finish
}
