// Expressions over a merged group's output columns (plan.h Expression: `sum(a) / count(*)`,
// `round(avg(x), 2)`, `coalesce(max(x), 0)`), computed as PostgreSQL computes them once the
// aggregates are combined: the operators its type resolution picks for int2, int4, int8, numeric
// and float8 operands (the wider integer; numeric past integers; float8 past numeric), integer
// division and range errors (22003 "integer out of range"), numeric's exact sums and products and
// select_div_scale division, float8's overflow and underflow checks, division by zero (22012),
// NULL in, NULL out; casts as int4(numeric) etc. round (half away from zero for numeric, to even
// for float8), % (int4mod, mod_var; 22012 for zero), abs, ceil, floor, greatest / least (the
// common type, every argument evaluated), coalesce (the common type, later arguments not
// evaluated), nullif, and CASE (searched; a simple one as `operand = value` conditions) whose
// conditions compare numbers in their common type (float8's NaN above every number, -0 = 0;
// numeric's NaN above Infinity), test IS [NOT] NULL and combine with AND / OR / NOT in
// three-valued logic (a NULL condition does not hold), and whose results are numbers of a common
// type or string literals (text). Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "merge/parameter.h"
#include "merge/plan.h"

namespace sw::merge {

using Row = std::vector<std::optional<std::string>>;

// The result type of `expression` over output columns of `types` (a parameter: its Parse type, or
// as PostgreSQL infers it from the other operand); 0A000 for an operand of another type.
Result<uint32_t> expression_type(const Expression& expression, const std::vector<uint32_t>& types,
                                 const std::vector<BindParameter>& parameters);

// Its value for one group's row (text format, nullopt for NULL): PostgreSQL's errors (22012,
// 22003, ...) when the computation fails.
Result<std::optional<std::string>> evaluate_expression(const Expression& expression, const Row& row,
                                                       const std::vector<uint32_t>& types,
                                                       const std::vector<BindParameter>& parameters);

}  // namespace sw::merge
