// HAVING applied to merged groups: comparisons with constants in three-valued logic.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "merge/having.h"
#include "merge/value.h"

using namespace sw::merge;

namespace {

HavingTerm compare(int column, HavingTerm::Op op, std::optional<std::string> constant) {
  HavingTerm term;
  term.column = column;
  term.op = op;
  term.constant = std::move(constant);
  return term;
}

HavingTerm combine(HavingTerm::Kind kind, std::vector<HavingTerm> children) {
  HavingTerm term;
  term.kind = kind;
  term.children = std::move(children);
  return term;
}

// "t", "f" or "unknown".
std::string truth(const HavingTerm& term, const Row& row, const std::vector<uint32_t>& types) {
  auto result = evaluate_having(term, row, types);
  REQUIRE_MESSAGE(result.is_ok(), result.status().message);
  if (!result->has_value()) return "unknown";
  return **result ? "t" : "f";
}

const std::vector<uint32_t> kTypes = {oid::kText, oid::kInt8, oid::kNumeric, oid::kFloat8};
const Row kRow = {std::string("apple"), std::string("12"), std::string("10.50"), std::nullopt};

}  // namespace

TEST_CASE("comparisons read both sides as the column's type") {
  using Op = HavingTerm::Op;
  CHECK(truth(compare(1, Op::Gt, "5"), kRow, kTypes) == "t");
  CHECK(truth(compare(1, Op::Gt, "12"), kRow, kTypes) == "f");
  CHECK(truth(compare(1, Op::Ge, "12"), kRow, kTypes) == "t");
  CHECK(truth(compare(1, Op::Lt, "12.5"), kRow, kTypes) == "t");  // integer against a fraction: numeric
  CHECK(truth(compare(2, Op::Eq, "10.5"), kRow, kTypes) == "t");  // 10.50 = 10.5
  CHECK(truth(compare(2, Op::Ne, "1e1"), kRow, kTypes) == "t");
  CHECK(truth(compare(0, Op::Eq, "apple"), kRow, kTypes) == "t");
  CHECK(truth(compare(0, Op::Lt, "Apple"), kRow, kTypes) == "f");  // byte order: 'A' < 'a'
  CHECK(truth(compare(0, Op::Le, "apple "), kRow, kTypes) == "t");
}

TEST_CASE("NULL on either side is unknown; AND, OR and NOT in three-valued logic") {
  using Op = HavingTerm::Op;
  using Kind = HavingTerm::Kind;
  const HavingTerm unknown = compare(3, Op::Gt, "1");
  const HavingTerm yes = compare(1, Op::Eq, "12");
  const HavingTerm no = compare(1, Op::Ne, "12");
  CHECK(truth(unknown, kRow, kTypes) == "unknown");
  CHECK(truth(compare(1, Op::Eq, std::nullopt), kRow, kTypes) == "unknown");
  CHECK(truth(combine(Kind::And, {yes, unknown}), kRow, kTypes) == "unknown");
  CHECK(truth(combine(Kind::And, {unknown, no}), kRow, kTypes) == "f");
  CHECK(truth(combine(Kind::Or, {unknown, yes}), kRow, kTypes) == "t");
  CHECK(truth(combine(Kind::Or, {no, unknown}), kRow, kTypes) == "unknown");
  CHECK(truth(combine(Kind::Or, {no, no}), kRow, kTypes) == "f");
  CHECK(truth(combine(Kind::Not, {unknown}), kRow, kTypes) == "unknown");
  CHECK(truth(combine(Kind::Not, {no}), kRow, kTypes) == "t");
  CHECK(truth(combine(Kind::And, {yes, combine(Kind::Not, {no})}), kRow, kTypes) == "t");
}

TEST_CASE("a constant that is not a value of the column's type is refused") {
  auto bad = evaluate_having(compare(1, HavingTerm::Op::Eq, "twelve"), kRow, kTypes);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().sqlstate == "0A000");
}

TEST_CASE("a parameter in place of a constant takes the Bind's value: text as sent, binary as its type") {
  HavingTerm by_text = compare(1, HavingTerm::Op::Gt, "");
  by_text.param = 2;
  const std::vector<BindParameter> parameters{{0, std::string("x"), 0}, {0, std::string("11"), 0}};
  REQUIRE(bind_having_parameters(by_text, parameters, kTypes).is_ok());
  CHECK(by_text.constant == std::optional<std::string>("11"));
  CHECK(truth(by_text, kRow, kTypes) == "t");
  // Binary with no Parse type: read as the compared column's type (as PostgreSQL infers it).
  HavingTerm by_binary = compare(1, HavingTerm::Op::Eq, "");
  by_binary.param = 1;
  const std::string twelve("\0\0\0\0\0\0\0\x0c", 8);
  REQUIRE(bind_having_parameters(by_binary, {{1, twelve, 0}}, {oid::kText, oid::kInt8}).is_ok());
  CHECK(by_binary.constant == std::optional<std::string>("12"));
  HavingTerm declared = compare(1, HavingTerm::Op::Eq, "");
  declared.param = 1;
  REQUIRE(bind_having_parameters(declared, {{1, std::string("\0\0\0\x0c", 4), oid::kInt4}}, kTypes).is_ok());
  CHECK(declared.constant == std::optional<std::string>("12"));
  // NULL: unknown; a missing parameter: 08P01.
  HavingTerm null = compare(1, HavingTerm::Op::Eq, "1");
  null.param = 1;
  REQUIRE(bind_having_parameters(null, {{0, std::nullopt, 0}}, kTypes).is_ok());
  CHECK(truth(null, kRow, kTypes) == "unknown");
  HavingTerm missing = combine(HavingTerm::Kind::And, {compare(1, HavingTerm::Op::Eq, "")});
  missing.children[0].param = 3;
  CHECK(bind_having_parameters(missing, parameters, kTypes).sqlstate == "08P01");
}

TEST_CASE("a timestamptz group value reads its zone abbreviation, the constant does not") {
  // Under TimeZone Europe/Dublin the shards print IST (+01); a client's 'IST' is PostgreSQL's
  // timezone_abbreviations entry (Israel, +02), which the zone's file does not know: refused.
  const DateReading dublin{true, system_zone("Europe/Dublin")};
  REQUIRE(dublin.zone != nullptr);
  const Row row = {std::string("01/07/2024 13:00:00 IST")};
  const std::vector<uint32_t> types = {oid::kTimestamptz};
  auto numeric =
      evaluate_having(compare(0, HavingTerm::Op::Eq, "01/07/2024 12:00:00 +00"), row, types, dublin);
  REQUIRE_MESSAGE(numeric.is_ok(), numeric.status().message);
  CHECK(**numeric);
  auto named = evaluate_having(compare(0, HavingTerm::Op::Eq, "01/07/2024 13:00:00 IST"), row, types, dublin);
  REQUIRE_FALSE(named.is_ok());
  CHECK(named.status().sqlstate == "0A000");
}
