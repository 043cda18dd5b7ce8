// Expressions over merged aggregates: PostgreSQL's operator types, results and errors.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "merge/expression.h"
#include "merge/value.h"

using namespace sw::merge;

namespace {

using Kind = Expression::Kind;

Expression output(int column) {
  Expression e;
  e.kind = Kind::Output;
  e.output = column;
  return e;
}

Expression constant(std::optional<std::string> text) {
  Expression e;
  e.kind = Kind::Constant;
  e.constant = std::move(text);
  return e;
}

Expression param(int number) {
  Expression e;
  e.kind = Kind::Param;
  e.param = number;
  return e;
}

Expression node(Kind kind, std::vector<Expression> args, uint32_t type = 0) {
  Expression e;
  e.kind = kind;
  e.args = std::move(args);
  e.type = type;
  return e;
}

// The value (or "ERROR <sqlstate>") and the type of `e` over one row of typed columns.
struct Outcome {
  std::string value;
  uint32_t type = 0;
};

Outcome run(const Expression& e, const std::vector<uint32_t>& types, const Row& row,
            const std::vector<BindParameter>& parameters = {}) {
  Outcome out;
  auto type = expression_type(e, types, parameters);
  if (!type) return Outcome{"ERROR " + type.status().sqlstate, 0};
  out.type = *type;
  auto value = evaluate_expression(e, row, types, parameters);
  if (!value) return Outcome{"ERROR " + value.status().sqlstate, out.type};
  out.value = value->value_or("NULL");
  return out;
}

}  // namespace

TEST_CASE("integer operators: the wider type, truncated division, range and zero errors") {
  const std::vector<uint32_t> types{oid::kInt8, oid::kInt4, oid::kInt2};
  const Row row{"9223372036854775000", "7", "20000"};
  Outcome sum = run(node(Kind::Add, {output(1), constant("1")}), types, row);
  CHECK(sum.value == "8");
  CHECK(sum.type == oid::kInt4);
  CHECK(run(node(Kind::Divide, {output(1), constant("-2")}), types, row).value == "-3");
  CHECK(run(node(Kind::Add, {output(2), output(2)}), types, row).value == "ERROR 22003");  // smallint
  Outcome wide = run(node(Kind::Multiply, {output(2), constant("1000")}), types, row);
  CHECK(wide.value == "20000000");
  CHECK(wide.type == oid::kInt4);
  CHECK(run(node(Kind::Add, {output(0), constant("1000")}), types, row).value == "ERROR 22003");
  CHECK(run(node(Kind::Divide, {output(1), constant("0")}), types, row).value == "ERROR 22012");
  CHECK(run(node(Kind::Negate, {output(1)}), types, row).value == "-7");
  // A NULL operand: NULL, without computing (no division by zero).
  CHECK(run(node(Kind::Divide, {output(1), constant("0")}), types, Row{"1", std::nullopt, "1"}).value ==
        "NULL");
  // A constant past int4 is int8; past int8, numeric.
  CHECK(run(node(Kind::Multiply, {output(1), constant("3000000000")}), types, row).type == oid::kInt8);
  CHECK(run(node(Kind::Add, {output(1), constant("99999999999999999999")}), types, row).type ==
        oid::kNumeric);
}

TEST_CASE("numeric and float8 operators") {
  const std::vector<uint32_t> types{oid::kNumeric, oid::kInt8, oid::kFloat8};
  const Row row{"10.50", "4", "1e308"};
  Outcome quotient = run(node(Kind::Divide, {output(0), output(1)}), types, row);
  CHECK(quotient.value == "2.6250000000000000");
  CHECK(quotient.type == oid::kNumeric);
  CHECK(run(node(Kind::Multiply, {output(0), constant("1.5")}), types, row).value == "15.750");
  CHECK(run(node(Kind::Subtract, {output(0), output(1)}), types, row).value == "6.50");
  CHECK(run(node(Kind::Divide, {output(0), constant("0")}), types, row).value == "ERROR 22012");
  Outcome real = run(node(Kind::Multiply, {output(2), output(1)}), types, row);
  CHECK(real.value == "ERROR 22003");
  CHECK(real.type == oid::kFloat8);
  CHECK(run(node(Kind::Divide, {output(2), constant("0")}), types, row).value == "ERROR 22012");
  CHECK(run(node(Kind::Add, {output(0), output(2)}), types, Row{"0.5", "1", "0.25"}).value == "0.75");
}

TEST_CASE("casts, round, coalesce, nullif") {
  const std::vector<uint32_t> types{oid::kNumeric, oid::kFloat8, oid::kInt4};
  const Row row{"-2.5", "2.5", std::nullopt};
  CHECK(run(node(Kind::Cast, {output(0)}, oid::kInt4), types, row).value == "-3");  // half away from 0
  CHECK(run(node(Kind::Cast, {output(1)}, oid::kInt4), types, row).value == "2");   // rint: to even
  CHECK(run(node(Kind::Cast, {constant("1e10")}, oid::kInt4), types, row).value == "ERROR 22003");
  CHECK(run(node(Kind::Cast, {output(1)}, oid::kNumeric), types, Row{"0", "0.1", "1"}).value == "0.1");
  CHECK(run(node(Kind::Round, {output(0)}), types, row).value == "-3");
  CHECK(run(node(Kind::Round, {output(1)}), types, row).value == "2");
  CHECK(run(node(Kind::Round, {constant("2.345"), constant("2")}), types, row).value == "2.35");
  CHECK(run(node(Kind::Round, {constant("1234.5"), constant("-2")}), types, row).value == "1200");
  CHECK(run(node(Kind::Round, {constant("1.5"), constant("3")}), types, row).value == "1.500");
  Outcome fallback = run(node(Kind::Coalesce, {output(2), constant("0")}), types, row);
  CHECK(fallback.value == "0");
  CHECK(fallback.type == oid::kInt4);
  CHECK(run(node(Kind::Coalesce, {output(2), output(0)}), types, row).value == "-2.5");
  CHECK(run(node(Kind::Nullif, {constant("0"), output(0)}), types, Row{"0.00", "0", "0"}).value == "NULL");
  CHECK(run(node(Kind::Nullif, {constant("1"), output(0)}), types, Row{"0.00", "0", "0"}).value == "1");
}

TEST_CASE("%: integers as int4mod (the dividend's sign, 22012 for zero), numeric as mod_var") {
  const std::vector<uint32_t> types{oid::kInt4, oid::kInt8, oid::kNumeric, oid::kFloat8};
  const Row row{"-7", "-9223372036854775808", "-7.50", "1.5"};
  Outcome rest = run(node(Kind::Modulo, {output(0), constant("3")}), types, row);
  CHECK(rest.value == "-1");
  CHECK(rest.type == oid::kInt4);
  CHECK(run(node(Kind::Modulo, {constant("7"), constant("-3")}), types, row).value == "1");
  CHECK(run(node(Kind::Modulo, {output(1), constant("-1")}), types, row).value == "0");  // no overflow
  CHECK(run(node(Kind::Modulo, {output(0), constant("0")}), types, row).value == "ERROR 22012");
  Outcome decimal = run(node(Kind::Modulo, {output(2), constant("2")}), types, row);
  CHECK(decimal.value == "-1.50");
  CHECK(decimal.type == oid::kNumeric);
  CHECK(run(node(Kind::Modulo, {constant("10"), constant("0.3")}), types, row).value == "0.1");
  CHECK(run(node(Kind::Modulo, {constant("123456789012345678901234567890"), constant("7")}), types, row)
            .value == "0");
  CHECK(run(node(Kind::Modulo, {output(2), constant("0.00")}), types, row).value == "ERROR 22012");
  CHECK(run(node(Kind::Modulo, {output(3), constant("1")}), types, row).value == "ERROR 0A000");
}

TEST_CASE("abs, ceil, floor, greatest, least") {
  const std::vector<uint32_t> types{oid::kInt4, oid::kNumeric, oid::kFloat8, oid::kInt2};
  const Row row{"-2147483648", "-2.50", "-0.5", std::nullopt};
  CHECK(run(node(Kind::Abs, {output(0)}), types, row).value == "ERROR 22003");
  Outcome magnitude = run(node(Kind::Abs, {output(1)}), types, row);
  CHECK(magnitude.value == "2.50");
  CHECK(magnitude.type == oid::kNumeric);
  CHECK(run(node(Kind::Abs, {output(2)}), types, row).value == "0.5");
  CHECK(run(node(Kind::Abs, {constant("-5")}), types, row).type == oid::kInt4);
  CHECK(run(node(Kind::Ceil, {output(1)}), types, row).value == "-2");
  CHECK(run(node(Kind::Floor, {output(1)}), types, row).value == "-3");
  CHECK(run(node(Kind::Ceil, {output(2)}), types, row).value == "-0");
  Outcome whole = run(node(Kind::Floor, {constant("7")}), types, row);
  CHECK(whole.value == "7");
  CHECK(whole.type == oid::kFloat8);  // floor(float8): the number category's preferred type
  CHECK(run(node(Kind::Ceil, {constant("2.0001")}), types, row).value == "3");
  Outcome most = run(node(Kind::Greatest, {output(3), output(1), constant("1")}), types, row);
  CHECK(most.value == "1");
  CHECK(most.type == oid::kNumeric);
  CHECK(run(node(Kind::Least, {output(3), output(1), output(2)}), types, row).value == "-2.5");
  CHECK(run(node(Kind::Greatest, {output(3)}), types, row).value == "NULL");
  CHECK(run(node(Kind::Greatest, {output(2), constant("1")}), types, Row{"1", "1", "NaN", "1"}).value ==
        "NaN");  // NaN greatest
  CHECK(run(node(Kind::Least, {output(2), constant("1")}), types, Row{"1", "1", "NaN", "1"}).value == "1");
}

TEST_CASE("parameters: typed by the Parse or by the other operand") {
  const std::vector<uint32_t> types{oid::kInt8};
  std::vector<BindParameter> parameters(2);
  parameters[0].value = "10";
  parameters[1].value = "2.5";
  parameters[1].type = oid::kNumeric;
  Outcome added = run(node(Kind::Add, {output(0), param(1)}), types, Row{"5"}, parameters);
  CHECK(added.value == "15");
  CHECK(added.type == oid::kInt8);
  CHECK(run(node(Kind::Multiply, {output(0), param(2)}), types, Row{"5"}, parameters).value == "12.5");
  CHECK(run(node(Kind::Add, {param(1), param(1)}), types, Row{"5"}, parameters).value == "ERROR 0A000");
  CHECK(run(node(Kind::Add, {output(0), param(1)}), std::vector<uint32_t>{oid::kText}, Row{"x"}, parameters)
            .value == "ERROR 0A000");
}

TEST_CASE("CASE: comparisons in the common type, NaN ordering, three-valued logic, result types") {
  using namespace sw::merge::oid;
  Expression text = constant("big");
  text.kind = Kind::Text;
  const std::vector<uint32_t> types = {kFloat8, kInt8, kNumeric};
  // float8's NaN is above every number; -0 = 0.
  const auto nan_above =
      node(Kind::Case, {node(Kind::Greater, {output(0), constant("1e300")}), text, constant({})});
  CHECK(run(nan_above, types, {"NaN", "1", "1"}).value == "big");
  CHECK(run(nan_above, types, {"NaN", "1", "1"}).type == kText);
  const auto zero =
      node(Kind::Case, {node(Kind::Equal, {output(0), constant("0")}), constant("1"), constant("2")});
  CHECK(run(zero, types, {"-0", "1", "1"}).value == "1");
  // numeric NaN above Infinity; int8 against numeric compares as numeric.
  const auto numeric =
      node(Kind::Case, {node(Kind::LessEqual, {output(2), output(1)}), output(1), output(2)});
  CHECK(run(numeric, types, {"0", "5", "NaN"}).value == "NaN");
  CHECK(run(numeric, types, {"0", "5", "4.5"}).value == "5");
  CHECK(run(numeric, types, {"0", "5", "4.5"}).type == kNumeric);
  // A NULL comparison is unknown: NOT keeps it unknown, OR with true is true, AND with false false.
  const auto unknown = node(Kind::Not, {node(Kind::Greater, {output(1), constant("1")})});
  auto with = [&](Expression condition) {
    return node(Kind::Case, {std::move(condition), constant("1"), constant("0")});
  };
  CHECK(run(with(unknown), types, {"0", std::nullopt, "1"}).value == "0");
  CHECK(run(with(node(Kind::Or, {unknown, node(Kind::IsNull, {output(1)})})), types, {"0", std::nullopt, "1"})
            .value == "1");
  CHECK(run(with(node(Kind::And, {unknown, node(Kind::IsNotNull, {output(1)})})), types,
            {"0", std::nullopt, "1"})
            .value == "0");
  // Text beside numbers among the results is refused; so is a condition outside a CASE.
  CHECK(run(node(Kind::Case, {node(Kind::Equal, {output(1), constant("1")}), text, output(1)}), types,
            {"0", "1", "1"})
            .value == "ERROR 0A000");
  CHECK(run(node(Kind::Equal, {output(1), constant("1")}), types, {"0", "1", "1"}).value == "ERROR 0A000");
  // Errors only in the branch taken.
  const auto guarded = node(Kind::Case, {node(Kind::Equal, {output(1), constant("0")}), constant({}),
                                         node(Kind::Divide, {constant("1"), output(1)})});
  CHECK(run(guarded, types, {"0", "0", "1"}).value == "NULL");
  CHECK(run(guarded, types, {"0", "2", "1"}).value == "0");
}
