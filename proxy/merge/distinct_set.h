// count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x) of a column that is not the shard key
// (docs/architecture.md §6.3): each shard answers array_agg(DISTINCT x) per group; the proxy keeps
// the union of the shards' non-NULL elements per group, compared as GROUP BY keys are
// (canonical(): 1.0 = 1.00, -0 = 0), and counts it, or gives its values in order for the sum.
// Every set of one merge draws on one budget (fanout.max_distinct_values). Pure, never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "merge/value.h"

namespace sw::merge {

// The distinct values one merge may hold over all its groups; 54000 past `limit`.
struct DistinctBudget {
  size_t limit = SIZE_MAX;
  size_t held = 0;
};

class DistinctSet {
 public:
  // One shard's array_agg(DISTINCT x) (array_out text) of `element_type` elements (a type
  // value.h decodes). `budget` may be null (no limit).
  Status add_array(uint32_t element_type, std::string_view text, DateReading dates, DistinctBudget* budget);
  int64_t size() const { return static_cast<int64_t>(values_.size()); }
  // From now on keep each distinct value's text as first met (sum/avg(DISTINCT)).
  void keep_values() { keep_ = true; }
  // The kept values in the type's order (value.h compare(): NaN greatest, -0 = 0), the order
  // PostgreSQL's sorted DISTINCT input gives them to sum and avg.
  Result<std::vector<std::string>> sorted_values(uint32_t element_type, DateReading dates) const;

 private:
  std::unordered_map<std::string, std::string> values_;  // canonical() -> the text (keep_values)
  bool keep_ = false;
};

}  // namespace sw::merge
