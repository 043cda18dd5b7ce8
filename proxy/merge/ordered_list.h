// array_agg / string_agg merged across shards (docs/architecture.md §6.3, "Ordered
// aggregates"): each shard answers per group array_agg of the value and of each sort key, all in
// the call's order; the list merges every shard's run by those keys (ties: the run that came
// first) and prints the result as PostgreSQL does. Every list of one merge draws on one budget
// (fanout.max_distinct_values). Pure, never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "merge/distinct_set.h"
#include "merge/plan.h"
#include "merge/value.h"

namespace sw::merge {

class OrderedList {
 public:
  // `keys`: the call's sort keys (directions), `key_types` their element types (types value.h
  // decodes); `distinct`: DISTINCT inside (its keys are its argument: equal keys, one value).
  void configure(std::vector<SortKey> keys, std::vector<uint32_t> key_types, bool distinct);
  // One shard's arrays (array_out text, NULL when it aggregated no row): the values' first, then
  // one per sort key. 0A000 for values that are arrays themselves, 54000 past the budget.
  Status add(std::span<const std::optional<std::string>> arrays, DateReading dates, DistinctBudget* budget);
  // array_agg's result in array_out's text; nullopt (NULL) when no shard had a row.
  std::optional<std::string> array_text() const;
  // string_agg's result: the non-NULL values joined by `separator`; nullopt when there are none.
  std::optional<std::string> joined(const std::string& separator) const;

 private:
  struct Entry {
    std::optional<std::string> value;
    std::vector<std::optional<Value>> keys;
  };
  int compare(const Entry& a, const Entry& b) const;
  std::vector<const Entry*> kept() const;  // in order, DISTINCT's repeats dropped

  std::vector<SortKey> keys_;
  std::vector<uint32_t> key_types_;
  bool distinct_ = false;
  std::vector<Entry> entries_;
};

// array_out's text of one element: quoted (with \ before " and \) when it is empty, NULL in any
// case, or holds a brace, quote, backslash, comma or white space.
std::string array_element_text(const std::string& element);

}  // namespace sw::merge
