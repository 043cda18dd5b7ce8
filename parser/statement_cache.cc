#include "parser/statement_cache.h"

namespace sw::parser::detail {

std::shared_ptr<const QueryFacts> StatementCache::find(std::string_view sql) {
  auto it = index_.find(sql);
  if (it == index_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, it->second);  // iterators stay valid
  return it->second->second;
}

void StatementCache::insert(std::string_view sql, std::shared_ptr<const QueryFacts> facts) {
  if (capacity_ == 0) return;
  if (auto it = index_.find(sql); it != index_.end()) {
    it->second->second = std::move(facts);
    entries_.splice(entries_.begin(), entries_, it->second);
    return;
  }
  if (entries_.size() >= capacity_) {
    index_.erase(std::string_view(entries_.back().first));
    entries_.pop_back();
  }
  entries_.emplace_front(std::string(sql), std::move(facts));
  index_.emplace(std::string_view(entries_.front().first), entries_.begin());
}

void StatementCache::clear() {
  index_.clear();
  entries_.clear();
}

}  // namespace sw::parser::detail
