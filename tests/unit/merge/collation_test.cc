// Which text a merge compares, and whether a shard's collations allow comparing it by bytes.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "merge/collation.h"
#include "merge/value.h"

using namespace sw::merge;
using sw::Status;

namespace {

// A shard with a C database; table 100 "t": id (no collation), c (C), icu (de-x-icu), nd (a
// nondeterministic collation), plain (default).
ShardCollations shard(const std::string& database = "C") {
  ShardCollations out;
  out.database = database;
  out.columns = {{100, 1, "", "t", "id"},
                 {100, 2, "C", "t", "c"},
                 {100, 3, "de-x-icu", "t", "icu"},
                 {100, 4, "nd", "t", "nd"},
                 {100, 5, "default", "t", "plain"}};
  out.nondeterministic = {"nd"};
  return out;
}

TextSource reads(std::vector<std::string> columns) { return TextSource{"", std::move(columns), {}, false}; }

Status check(TextCompare how, const TextSource& source, ColumnOrigin origin = {},
             const ShardCollations& on = shard()) {
  MergePlan plan;
  plan.column_sources = {source};
  const ShardCollations described = shard();
  return check_text_collations({how}, plan, ShardColumns{{"k"}, {origin}, &described}, on);
}

}  // namespace

TEST_CASE("sort keys order, group keys and DISTINCT compare equality, min/max and HAVING < order") {
  MergePlan plan;
  plan.kind = MergeKind::Aggregate;
  plan.outputs = {
      {Combine::Key, 0, ""}, {Combine::Min, 1, ""}, {Combine::Count, 2, ""}, {Combine::Key, 3, ""}};
  const std::vector<uint32_t> types{oid::kText, oid::kText, oid::kInt8, oid::kVarchar};
  CHECK(compared_text_columns(plan, types) == std::vector<TextCompare>{TextCompare::Equal, TextCompare::Order,
                                                                       TextCompare::None,
                                                                       TextCompare::Equal});
  plan.order_by = {SortKey{3, {}, false, false}};
  CHECK(compared_text_columns(plan, types)[3] == TextCompare::Order);
  HavingTerm having;
  having.column = 0;
  having.op = HavingTerm::Op::Gt;
  plan.having = having;
  CHECK(compared_text_columns(plan, types)[0] == TextCompare::Order);
  MergePlan sorted;
  sorted.kind = MergeKind::MergeSort;
  sorted.order_by = {SortKey{0, {}, false, false}};
  CHECK(compared_text_columns(sorted, {oid::kInt4, oid::kText}) ==
        std::vector<TextCompare>{TextCompare::None, TextCompare::None});
  sorted.distinct = true;
  CHECK(compared_text_columns(sorted, {oid::kInt4, oid::kText}) ==
        std::vector<TextCompare>{TextCompare::None, TextCompare::Equal});
}

TEST_CASE("an explicit COLLATE decides: byte-order ones allow ordering, others are named") {
  CHECK(check(TextCompare::Order, TextSource{"C", {}, {}, false}, {100, 3}).is_ok());
  CHECK(check(TextCompare::Order, TextSource{"ucs_basic", {}, {}, true}).is_ok());
  Status icu = check(TextCompare::Order, TextSource{"de-x-icu", {}, {}, false});
  CHECK(icu.sqlstate == "0A000");
  CHECK(icu.message.find("COLLATE \"de-x-icu\"") != std::string::npos);
  CHECK(icu.message.find("COLLATE \"C\"") != std::string::npos);
  // Deterministic: equal text is equal bytes, so grouping by bytes is right.
  CHECK(check(TextCompare::Equal, TextSource{"de-x-icu", {}, {}, false}).is_ok());
  CHECK(check(TextCompare::Equal, TextSource{"nd", {}, {}, false}).sqlstate == "0A000");
}

TEST_CASE("a plain column: the shard column's own collation") {
  CHECK(check(TextCompare::Order, reads({"icu"}), {100, 2}).is_ok());
  Status icu = check(TextCompare::Order, reads({"c"}), {100, 3});
  CHECK(icu.sqlstate == "0A000");
  CHECK(icu.message.find("t.icu (de-x-icu)") != std::string::npos);
  CHECK(check(TextCompare::Equal, reads({}), {100, 3}).is_ok());
  Status nd = check(TextCompare::Equal, reads({}), {100, 4});
  CHECK(nd.message.find("t.nd (nd)") != std::string::npos);
  CHECK(nd.message.find("nondeterministic") != std::string::npos);
  CHECK(check(TextCompare::Order, reads({}), {100, 5}).is_ok());
  Status plain = check(TextCompare::Order, reads({}), {100, 5}, shard("en_US.UTF-8"));
  CHECK(plain.sqlstate == "0A000");
  CHECK(plain.message.find("t.plain (default, the database's en_US.UTF-8)") != std::string::npos);
  Status other = check(TextCompare::Order, reads({}), {200, 1});
  CHECK(other.message.find("cannot tell") != std::string::npos);
}

TEST_CASE("an expression: every collation it could take must allow the comparison") {
  CHECK(check(TextCompare::Order, reads({"c"})).is_ok());        // lower(c)
  CHECK(check(TextCompare::Order, reads({"c", "id"})).is_ok());  // c || id::text
  Status icu = check(TextCompare::Order, reads({"c", "icu"}));
  CHECK(icu.message.find("t.icu (de-x-icu)") != std::string::npos);
  CHECK(check(TextCompare::Order, TextSource{"", {}, {"de-x-icu"}, false}).sqlstate == "0A000");
  CHECK(check(TextCompare::Order, TextSource{"", {"icu"}, {"C"}, false}).sqlstate == "0A000");
  // The database default is one of its possible collations.
  Status database = check(TextCompare::Order, reads({"c"}), {}, shard("de_DE.UTF-8"));
  CHECK(database.message.find("de_DE.UTF-8") != std::string::npos);
  CHECK(check(TextCompare::Equal, reads({"c"}), {}, shard("de_DE.UTF-8")).is_ok());
  // Nothing tells: a subquery, an unknown name, * beside it.
  CHECK(check(TextCompare::Order, TextSource{}).message.find("cannot tell") != std::string::npos);
  CHECK(check(TextCompare::Order, reads({"alias"})).message.find("\"alias\"") != std::string::npos);
  MergePlan star;
  CHECK(check_text_collations({TextCompare::Order}, star, ShardColumns{{"k"}, {{}}, nullptr}, shard())
            .sqlstate == "0A000");
  CHECK(
      check_text_collations({TextCompare::None}, star, ShardColumns{{"k"}, {{}}, nullptr}, shard()).is_ok());
}

TEST_CASE("an origin is the describing shard's OID: found on another shard by relation and name") {
  ShardCollations other = shard();
  for (auto& column : other.columns) column.table = 900;
  MergePlan plan;
  plan.column_sources = {reads({})};
  const ShardCollations described = shard();
  CHECK(check_text_collations({TextCompare::Order}, plan, ShardColumns{{"k"}, {{100, 2}}, &described}, other)
            .is_ok());
  CHECK(check_text_collations({TextCompare::Order}, plan, ShardColumns{{"k"}, {{100, 3}}, &described}, other)
            .message.find("t.icu (de-x-icu)") != std::string::npos);
  other.columns.pop_back();
  CHECK(check_text_collations({TextCompare::Order}, plan, ShardColumns{{"k"}, {{100, 5}}, &described}, other)
            .message.find("cannot tell") != std::string::npos);
}

TEST_CASE("the shard's answer is read back; a malformed one is refused") {
  auto read = parse_shard_collations(std::string("C"), std::string("100,2,1:C1:t1:c100,1,0:1:t2:id"),
                                     std::string("2:nd5:n,d:x"));
  REQUIRE(read.has_value());
  CHECK(read->database == "C");
  REQUIRE(read->columns.size() == 2);
  CHECK((read->columns[0].table == 100 && read->columns[0].attnum == 2 && read->columns[0].collation == "C"));
  CHECK((read->columns[1].collation.empty() && read->columns[1].name == "id"));
  CHECK(read->nondeterministic == std::vector<std::string>{"nd", "n,d:x"});
  CHECK(parse_shard_collations(std::string("C"), std::nullopt, std::nullopt).has_value());
  CHECK_FALSE(parse_shard_collations(std::string("C"), std::string("100,2,9:C"), std::nullopt).has_value());
  CHECK_FALSE(
      parse_shard_collations(std::string("C"), std::string("x,2,1:C1:t1:c"), std::nullopt).has_value());
  CHECK(shard_collations_query({"\"t'x\""}).find("'\"t''x\"'") != std::string::npos);
}
