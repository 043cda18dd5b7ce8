#include "merge/distinct_set.h"

#include <algorithm>

#include "merge/binary_array.h"
#include "merge/value.h"

namespace sw::merge {

Status DistinctSet::add_array(uint32_t element_type, std::string_view text, DateReading dates,
                              DistinctBudget* budget) {
  auto elements = array_elements(text);
  if (!elements) return elements.status();
  for (const auto& element : *elements) {
    if (!element) continue;  // count/sum/avg(DISTINCT x) ignore NULLs
    auto decoded = decode_text(element_type, *element, dates);
    if (!decoded) return decoded.status();
    if (!values_.try_emplace(decoded->canonical(), keep_ ? *element : std::string()).second) continue;
    if (budget == nullptr) continue;
    if (++budget->held > budget->limit)
      return Status::client("54000", "count/sum/avg(DISTINCT) across shards holds more than " +
                                         std::to_string(budget->limit) +
                                         " distinct values (fanout.max_distinct_values); raise "
                                         "fanout.max_distinct_values, add a shard key value or narrow "
                                         "the query");
  }
  return Status::ok();
}

Result<std::vector<std::string>> DistinctSet::sorted_values(uint32_t element_type, DateReading dates) const {
  std::vector<std::pair<Value, const std::string*>> decoded;
  decoded.reserve(values_.size());
  for (const auto& [canonical, text] : values_) {
    auto value = decode_text(element_type, text, dates);
    if (!value) return value.status();
    decoded.emplace_back(std::move(value.value()), &text);
  }
  std::sort(decoded.begin(), decoded.end(),
            [](const auto& a, const auto& b) { return a.first.compare(b.first) < 0; });
  std::vector<std::string> out;
  out.reserve(decoded.size());
  for (const auto& [value, text] : decoded) out.push_back(*text);
  return out;
}

}  // namespace sw::merge
