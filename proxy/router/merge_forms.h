// Merge forms beyond the plain aggregates, for route_merge.cc (docs/architecture.md §6.3).
#pragma once

#include <optional>
#include <string>

#include "merge/plan.h"
#include "parser/analyze.h"

namespace sw::router::detail {

// What to write instead of an aggregate call no merge computes exactly.
std::string instead_of_aggregate(const parser::OutputItem& item);
// Whether an aggregate call is count(DISTINCT <key>) (the key unquoted): every key value lives on
// one shard, so the shards' distinct counts add up.
bool counts_distinct_keys(const parser::OutputItem& item, const std::string& key);
// Whether an aggregate call is count(DISTINCT x), sum(DISTINCT x) or avg(DISTINCT x) (FILTER
// allowed) of anything but count's key `key` ("" when no key shortcut applies): each shard
// answers array_agg(DISTINCT x), whose elements the merge unions. Its combine
// (CountDistinct, SumDistinct, AvgDistinct), or nullopt.
std::optional<merge::Combine> distinct_values(const parser::OutputItem& item, const std::string& key);
// "count(DISTINCT x) ..." (or sum, avg) as "array_agg(DISTINCT x) ...".
std::string distinct_as_array(const std::string& call);
// An expression over aggregates as the merge computes it (its output columns' numbers are the
// plan's); nullopt when a leaf reads another expression or a cast's type is not a number type.
std::optional<merge::Expression> merge_expression(const parser::AggregateExpression& expression,
                                                  const merge::MergePlan& plan);
// DISTINCT ON: sets plan.distinct_on when its expressions are output columns and the first ORDER
// BY keys (in any order); else the reason it cannot merge.
std::string distinct_on_keys(const parser::SelectShape& shape, merge::MergePlan& plan);

}  // namespace sw::router::detail
