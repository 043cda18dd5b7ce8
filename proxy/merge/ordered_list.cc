#include "merge/ordered_list.h"

#include <algorithm>

#include "merge/binary_array.h"

namespace sw::merge {
namespace {

bool needs_quotes(const std::string& element) {
  if (element.empty()) return true;
  if (element.size() == 4) {
    std::string lower;
    for (char c : element) lower += static_cast<char>(c | 0x20);
    if (lower == "null") return true;
  }
  return std::any_of(element.begin(), element.end(), [](char c) {
    return c == '{' || c == '}' || c == '"' || c == '\\' || c == ',' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r' || c == '\v' || c == '\f';
  });
}

Status bad_arrays() {
  return Status::server(
      "XX000", "a shard's ordered aggregate arrays differ in length (the values and their sort keys)");
}

}  // namespace

std::string array_element_text(const std::string& element) {
  if (!needs_quotes(element)) return element;
  std::string out = "\"";
  for (char c : element) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

void OrderedList::configure(std::vector<SortKey> keys, std::vector<uint32_t> key_types, bool distinct) {
  keys_ = std::move(keys);
  key_types_ = std::move(key_types);
  distinct_ = distinct;
}

// ORDER BY order of two values by the call's sort keys (NULLs where each key puts them).
int OrderedList::compare(const Entry& a, const Entry& b) const {
  for (size_t i = 0; i < keys_.size(); ++i) {
    const auto& x = a.keys[i];
    const auto& y = b.keys[i];
    if (!x || !y) {
      if (!x && !y) continue;
      const bool x_first = !x == keys_[i].nulls_first;
      return x_first ? -1 : 1;
    }
    const int c = x->compare(*y);
    if (c != 0) return keys_[i].descending ? -c : c;
  }
  return 0;
}

Status OrderedList::add(std::span<const std::optional<std::string>> arrays, DateReading dates,
                        DistinctBudget* budget) {
  if (arrays.size() != keys_.size() + 1) return bad_arrays();
  if (!arrays[0]) return Status::ok();  // the shard aggregated no row of this group
  if (arrays[0]->rfind("{{", 0) == 0)
    return Status::client(
        "0A000", "array_agg / string_agg of arrays cannot be merged across shards; add a shard key value");
  auto values = array_elements(*arrays[0]);
  if (!values) return values.status();
  std::vector<std::vector<std::optional<std::string>>> keys;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (!arrays[k + 1]) return bad_arrays();
    auto elements = array_elements(*arrays[k + 1]);
    if (!elements) return elements.status();
    if (elements->size() != values->size()) return bad_arrays();
    keys.push_back(std::move(elements.value()));
  }
  const size_t before = entries_.size();
  for (size_t i = 0; i < values->size(); ++i) {
    Entry entry{std::move((*values)[i]), {}};
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (!keys[k][i]) {
        entry.keys.emplace_back(std::nullopt);
        continue;
      }
      auto decoded = decode_text(key_types_[k], *keys[k][i], dates);
      if (!decoded) return decoded.status();
      entry.keys.emplace_back(std::move(decoded.value()));
    }
    entries_.push_back(std::move(entry));
    if (budget != nullptr && ++budget->held > budget->limit)
      return Status::client("54000", "array_agg / string_agg across shards holds more than " +
                                         std::to_string(budget->limit) +
                                         " values (fanout.max_distinct_values); raise "
                                         "fanout.max_distinct_values, add a shard key value or narrow "
                                         "the query");
  }
  // Each shard's run is in the call's order already: merge it into the earlier shards' (stable:
  // on equal keys the earlier shard's values come first).
  std::inplace_merge(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(before), entries_.end(),
                     [this](const Entry& a, const Entry& b) { return compare(a, b) < 0; });
  return Status::ok();
}

std::vector<const OrderedList::Entry*> OrderedList::kept() const {
  std::vector<const Entry*> out;
  for (const Entry& entry : entries_) {
    if (distinct_ && !out.empty() && compare(*out.back(), entry) == 0) continue;
    out.push_back(&entry);
  }
  return out;
}

std::optional<std::string> OrderedList::array_text() const {
  if (entries_.empty()) return std::nullopt;
  std::string out = "{";
  for (const Entry* entry : kept()) {
    if (out.size() > 1) out += ',';
    out += entry->value ? array_element_text(*entry->value) : "NULL";
  }
  return out + '}';
}

std::optional<std::string> OrderedList::joined(const std::string& separator) const {
  std::optional<std::string> out;
  for (const Entry* entry : kept()) {
    if (!entry->value) continue;  // string_agg skips NULL values
    if (out) {
      *out += separator;
      *out += *entry->value;
    } else {
      out = *entry->value;
    }
  }
  return out;
}

}  // namespace sw::merge
