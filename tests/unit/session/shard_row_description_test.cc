#include "session/shard_row_description.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::read_shard_row_description;
using sw::session::rebuilt_columns;
using sw::session::without_hidden_columns;

namespace {

// A shard's RowDescription body: a hidden sort column, then qty (a column of table 16384), then
// a computed one.
std::string body() {
  std::vector<sw::wire::RowField> fields(3);
  fields[0].name = "sw_order_1";
  fields[0].type_oid = 20;
  fields[1].name = "qty";
  fields[1].table_oid = 16384;
  fields[1].column = 4;
  fields[1].type_oid = 23;
  fields[2].name = "?column?";
  fields[2].type_oid = 25;
  std::string out;
  sw::wire::encode_row_description(out, fields);
  return out.substr(5);  // without its type and length
}

}  // namespace

TEST_CASE("a shard's RowDescription: types, names and origins for the merge") {
  const std::string shard = body();
  sw::merge::ShardColumns columns;
  auto read = read_shard_row_description(shard, &columns);
  REQUIRE(read);
  CHECK(read->types == std::vector<uint32_t>{20, 23, 25});
  CHECK(read->names == std::vector<std::string>{"sw_order_1", "qty", "?column?"});
  REQUIRE(columns.origins.size() == 3);
  CHECK(columns.origins[1].table == 16384);
  CHECK(columns.origins[1].attnum == 4);
  sw::merge::ShardColumns ignored;
  CHECK(read_shard_row_description("\x00\x01", &ignored).status().sqlstate == "08P01");
}

TEST_CASE("the client's RowDescription drops the plan's hidden sort columns") {
  const std::string shard = body();
  sw::merge::ShardColumns columns;
  auto read = read_shard_row_description(shard, &columns);
  REQUIRE(read);
  sw::merge::MergePlan plan;
  plan.kind = sw::merge::MergeKind::MergeSort;
  plan.hidden = 1;
  auto client = without_hidden_columns(read->fields, plan);
  REQUIRE(client);
  sw::merge::ShardColumns again;
  auto decoded = read_shard_row_description(std::string_view(client.value()).substr(5), &again);
  REQUIRE(decoded);
  CHECK(decoded->names == std::vector<std::string>{"qty", "?column?"});
  plan.hidden = 4;
  CHECK(without_hidden_columns(read->fields, plan).status().sqlstate == "08P01");
}

TEST_CASE("columns are rebuilt only for aggregates the proxy computes from partial columns") {
  sw::merge::MergePlan plan;
  CHECK_FALSE(rebuilt_columns(plan));
  plan.kind = sw::merge::MergeKind::Aggregate;
  CHECK_FALSE(rebuilt_columns(plan));
  plan.hidden_outputs = 1;
  CHECK(rebuilt_columns(plan));
}
