#include "merge/distinct_set.h"

#include "merge/binary_array.h"
#include "merge/value.h"

namespace sw::merge {

Status DistinctSet::add_array(uint32_t element_type, std::string_view text, DateReading dates,
                              DistinctBudget* budget) {
  auto elements = array_elements(text);
  if (!elements) return elements.status();
  for (const auto& element : *elements) {
    if (!element) continue;  // count(DISTINCT x) ignores NULLs
    auto decoded = decode_text(element_type, *element, dates);
    if (!decoded) return decoded.status();
    if (!values_.insert(decoded->canonical()).second) continue;
    if (budget == nullptr) continue;
    if (++budget->held > budget->limit)
      return Status::client("54000", "count(DISTINCT) across shards holds more than " +
                                         std::to_string(budget->limit) +
                                         " distinct values (fanout.max_distinct_values); raise "
                                         "fanout.max_distinct_values, add a shard key value or narrow "
                                         "the query");
  }
  return Status::ok();
}

}  // namespace sw::merge
