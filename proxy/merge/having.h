// HAVING applied by the proxy to a merged group (plan.h HavingTerm), in SQL's three-valued logic:
// a comparison with NULL on either side is unknown, AND / OR / NOT combine true, false and
// unknown as PostgreSQL does, and a group is kept only when the whole term is true. Values
// compare as their column type orders them (value.h); an integer column against a constant with
// a fraction compares as numeric, as PostgreSQL's int-numeric operators do. Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "merge/plan.h"

namespace sw::merge {

using Row = std::vector<std::optional<std::string>>;

// true, false, or nullopt for unknown. 0A000 when a constant is not a value of its column's type
// (nor, for integer and numeric columns, a number).
Result<std::optional<bool>> evaluate_having(const HavingTerm& term, const Row& row,
                                            const std::vector<uint32_t>& column_types);

// Whether the term compares a column of a type compared under a collation (text).
bool having_compares_text(const HavingTerm& term, const std::vector<uint32_t>& column_types);

}  // namespace sw::merge
