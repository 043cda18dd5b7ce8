// The node kinds of an expression over aggregates a merge computes (docs/architecture.md §6.3):
// the parser describes such an expression (parser::AggregateExpression) and the merge computes it
// (merge::Expression); both name their nodes with this one list, shared here because neither
// module may include the other (§2).
#pragma once

#include <cstdint>

namespace sw {

enum class ExpressionKind : uint8_t {
  Output,    // an output column (an aggregate, a group key)
  Constant,  // a number or NULL
  Param,     // $n
  Add,
  Subtract,
  Multiply,
  Divide,
  Modulo,  // integers and numeric (PostgreSQL has no float8 %)
  Negate,
  Cast,  // to int2, int4, int8, numeric or float8
  Round,
  Coalesce,
  Nullif,
  Abs,
  Ceil,  // ceil, ceiling
  Floor,
  Greatest,
  Least,
  // CASE: args are (condition, result) pairs, then the ELSE result (a NULL constant when none);
  // a simple CASE's conditions are Equal(operand, value).
  Case,
  Text,  // a string literal as a CASE result (its text in the constant)
  // The conditions of a CASE (boolean): comparisons of two values, IS [NOT] NULL, AND, OR, NOT.
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  IsNull,
  IsNotNull,
  And,
  Or,
  Not
};

}  // namespace sw
