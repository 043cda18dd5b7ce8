// HAVING applied by the proxy to a merged group (plan.h HavingTerm), in SQL's three-valued logic:
// (a parameter in place of a constant is bound first, from the client's Bind)
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
#include "merge/parameter.h"
#include "merge/plan.h"
#include "merge/value.h"

namespace sw::merge {

using Row = std::vector<std::optional<std::string>>;

// true, false, or nullopt for unknown. 0A000 when a constant is not a value of its column's type
// (nor, for integer and numeric columns, a number).
Result<std::optional<bool>> evaluate_having(const HavingTerm& term, const Row& row,
                                            const std::vector<uint32_t>& column_types,
                                            DateReading dates = {});

// The output columns the term compares (appended to `columns`).
void having_columns(const HavingTerm& term, std::vector<int>& columns);

// Each comparison with a parameter gets the parameter's value as its constant: text as sent; a
// binary value read as its Parse type, or (unspecified) as the compared column's type, which is
// what PostgreSQL infers for `column op $n`. 08P01 when the Bind has no such parameter.
Status bind_having_parameters(HavingTerm& term, const std::vector<BindParameter>& parameters,
                              const std::vector<uint32_t>& column_types);

}  // namespace sw::merge
