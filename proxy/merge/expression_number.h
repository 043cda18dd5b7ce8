// The numbers an expression over aggregates computes with (expression.h): PostgreSQL's int2,
// int4, int8, numeric and float8, their implicit casts and operators, with its errors.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "merge/decimal.h"
#include "merge/expression.h"

namespace sw::merge::detail {

using Kind = Expression::Kind;

// One operand: its type (int2/int4/int8 and a condition's bool in `integer`, numeric in
// `decimal`, float8 in `real`, a CASE's text result in `text`).
struct Number {
  uint32_t type = 0;
  bool null = true;
  Int128 integer = 0;
  double real = 0;
  Decimal decimal = Decimal::from_int(0);
  std::string text;
};

bool is_integer(uint32_t type);
// PostgreSQL's implicit casts among the number types go up this order: an operator (or coalesce)
// over two of them works in the higher one.
int rank(uint32_t type);
uint32_t wider(uint32_t a, uint32_t b);
Status unsupported(const std::string& what);
Status out_of_range(uint32_t type);
Status division_by_zero();
bool fits(Int128 value, uint32_t type);
// A number literal's type as PostgreSQL's make_const gives it: int4, int8 when it needs it,
// numeric for a fraction, an exponent or more digits.
uint32_t constant_type(const std::string& text);
Result<Number> parse_number(uint32_t type, const std::string& text);
// `value` as type `to`: widening as the operators do, or a cast (numeric and float8 to integers
// rounded, range-checked; float8 to numeric through its 15 significant digits).
Result<Number> convert(Number value, uint32_t to);
Result<Number> integer_operation(Kind kind, Int128 a, Int128 b, uint32_t type);
// float8pl, float8mi, float8mul, float8div with float.h's overflow and underflow checks.
Result<Number> real_operation(Kind kind, double a, double b);
Decimal absolute(const Decimal& value);
// mod_var: x - trunc(x / y) * y, at the larger of both scales, the sign of x. Finite, y non-zero.
// The quotient's integer part from the rounded division, corrected by one either way.
Decimal numeric_modulo(const Decimal& x, const Decimal& y);
Result<Number> decimal_operation(Kind kind, const Decimal& a, const Decimal& b);
// Two non-NULL values of one type in PostgreSQL's order (float8: NaN greatest, -0 = 0).
int compare_numbers(const Number& a, const Number& b);

}  // namespace sw::merge::detail
