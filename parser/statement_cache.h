// A small LRU map from exact SQL text to its analyzed facts (internal to sw_parser).
//
// Not thread-safe by design: analyze() keeps one per thread (thread_local), so the data path
// takes no lock. Entries are immutable shared_ptrs, so a hit hands out the very same pointer and
// an evicted entry stays valid for whoever still holds it.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "parser/analyze.h"

namespace sw::parser::detail {

class StatementCache {
 public:
  explicit StatementCache(size_t capacity) : capacity_(capacity) {}
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // The facts cached for exactly `sql`, marked most recently used; nullptr on a miss.
  std::shared_ptr<const QueryFacts> find(std::string_view sql);
  // Caches `facts` for `sql`, evicting the least recently used entry when full. Replaces an
  // existing entry for the same text.
  void insert(std::string_view sql, std::shared_ptr<const QueryFacts> facts);

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void clear();

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const QueryFacts>>;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  // Keys view the strings owned by `entries_` (list nodes never move).
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;
};

}  // namespace sw::parser::detail
