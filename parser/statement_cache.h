// Small LRU maps from SQL text to analyzed facts (internal to sw_parser).
//
// Not thread-safe by design: analyze() keeps them per thread (thread_local), so the data path
// takes no lock. Values are immutable shared_ptrs, so a hit hands out the very same pointer and
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

template <typename Value>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(capacity) {}
  LruMap(const LruMap&) = delete;
  LruMap& operator=(const LruMap&) = delete;

  // The value cached for exactly `key`, marked most recently used; nullptr on a miss.
  std::shared_ptr<const Value> find(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);  // iterators stay valid
    return it->second->second;
  }

  // Caches `value` for `key`, evicting the least recently used entry when full. Replaces an
  // existing entry for the same key.
  void insert(std::string_view key, std::shared_ptr<const Value> value) {
    if (capacity_ == 0) return;
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      entries_.splice(entries_.begin(), entries_, it->second);
      return;
    }
    if (entries_.size() >= capacity_) {
      index_.erase(std::string_view(entries_.back().first));
      entries_.pop_back();
    }
    entries_.emplace_front(std::string(key), std::move(value));
    index_.emplace(std::string_view(entries_.front().first), entries_.begin());
  }

  // Evicts the least recently used entries down to `capacity` (0: caches nothing).
  void set_capacity(size_t capacity) {
    capacity_ = capacity;
    while (entries_.size() > capacity_) {
      index_.erase(std::string_view(entries_.back().first));
      entries_.pop_back();
    }
  }

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void clear() {
    index_.clear();
    entries_.clear();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Value>>;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  // Keys view the strings owned by `entries_` (list nodes never move).
  std::unordered_map<std::string_view, typename std::list<Entry>::iterator> index_;
};

// Exact statement text -> facts.
using StatementCache = LruMap<QueryFacts>;

}  // namespace sw::parser::detail
