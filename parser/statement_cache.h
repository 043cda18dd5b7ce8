// Small maps from SQL text to analyzed facts (internal to sw_parser), with second-chance (clock)
// eviction.
//
// Not thread-safe by design: analyze() keeps them per thread (thread_local), so the data path
// takes no lock. Values are immutable shared_ptrs, so a hit hands out the very same pointer and
// an evicted entry stays valid for whoever still holds it.
//
// Why not a list-based LRU: a hit there walks a node-based hash bucket and splices list nodes,
// about five cache misses per lookup at 10 000 entries. Here a lookup probes a flat open-addressed
// table of (hash, entry) pairs (one cache line, usually), compares the key of the one entry whose
// hash matches, and a hit only sets that entry's `referenced` bit. Eviction: a hand sweeps the
// entries in slot order, clearing set bits, and evicts the first entry whose bit is clear, so an
// entry used since the hand last passed it survives one more sweep (an approximation of LRU that
// never evicts an entry hit since the previous sweep while an unused one remains).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parser/analyze.h"

namespace sw::parser::detail {

template <typename Value>
class ClockMap {
 public:
  explicit ClockMap(size_t capacity) { set_capacity(capacity); }
  ClockMap(const ClockMap&) = delete;
  ClockMap& operator=(const ClockMap&) = delete;

  // The value cached for exactly `key`, marked used; nullptr on a miss.
  std::shared_ptr<const Value> find(std::string_view key) {
    const size_t at = locate(key, hash_of(key));
    if (at == kNone) return nullptr;
    Entry& entry = entries_[slots_[at].entry - 1];
    entry.referenced = true;
    return entry.value;
  }

  // Caches `value` for `key` (not marked used), evicting by the clock when full. Replaces an
  // existing entry for the same key.
  void insert(std::string_view key, std::shared_ptr<const Value> value) {
    if (capacity_ == 0) return;
    const uint64_t hash = hash_of(key);
    if (const size_t at = locate(key, hash); at != kNone) {
      entries_[slots_[at].entry - 1].value = std::move(value);
      return;
    }
    uint32_t index = 0;
    if (entries_.size() < capacity_) {
      if ((entries_.size() + 1) * 2 > slots_.size()) grow();
      index = static_cast<uint32_t>(entries_.size());
      entries_.emplace_back();
    } else {
      index = evict_one();
    }
    Entry& entry = entries_[index];
    entry.key.assign(key);  // reuses the evicted key's buffer when it is large enough
    entry.value = std::move(value);
    entry.referenced = false;
    place(static_cast<uint32_t>(hash), index);
  }

  // Empties the map and sets how many entries it holds (0: caches nothing).
  void set_capacity(size_t capacity) {
    capacity_ = capacity;
    slots_.assign(kInitialSlots, Slot{});
    entries_.clear();
    hand_ = 0;
  }

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  void clear() { set_capacity(capacity_); }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const Value> value;
    bool referenced = false;
  };
  struct Slot {
    uint32_t hash = 0;   // the key hash's low 32 bits (they also pick the home slot)
    uint32_t entry = 0;  // index into entries_ + 1; 0: empty
  };
  static constexpr size_t kNone = SIZE_MAX;
  static constexpr size_t kInitialSlots = 16;

  static uint64_t hash_of(std::string_view key) { return std::hash<std::string_view>{}(key); }
  size_t mask() const { return slots_.size() - 1; }

  // The slot holding `key`, or kNone.
  size_t locate(std::string_view key, uint64_t hash) const {
    const auto low = static_cast<uint32_t>(hash);
    for (size_t i = low & mask();; i = (i + 1) & mask()) {
      const Slot& slot = slots_[i];
      if (slot.entry == 0) return kNone;
      if (slot.hash == low && entries_[slot.entry - 1].key == key) return i;
    }
  }

  // Doubles the table (the load factor stays at most 1/2; memory follows the entries in use).
  void grow() {
    slots_.assign(slots_.size() * 2, Slot{});
    for (size_t i = 0; i < entries_.size(); ++i)
      place(static_cast<uint32_t>(hash_of(entries_[i].key)), static_cast<uint32_t>(i));
  }

  void place(uint32_t hash, uint32_t index) {
    size_t i = hash & mask();
    while (slots_[i].entry != 0) i = (i + 1) & mask();
    slots_[i] = Slot{hash, index + 1};
  }

  // The clock: the first entry from the hand on whose bit is clear (clearing set bits on the
  // way) leaves the table; its index is returned for reuse.
  uint32_t evict_one() {
    for (;;) {
      Entry& entry = entries_[hand_];
      const auto index = static_cast<uint32_t>(hand_);
      hand_ = hand_ + 1 == entries_.size() ? 0 : hand_ + 1;
      if (entry.referenced) {
        entry.referenced = false;
        continue;
      }
      erase_slot(locate(entry.key, hash_of(entry.key)));
      entry.value.reset();
      return index;
    }
  }

  // Linear probing's backward-shift deletion: later entries of the same run move up, so a
  // lookup never stops early at the hole.
  void erase_slot(size_t hole) {
    for (size_t j = (hole + 1) & mask(); slots_[j].entry != 0; j = (j + 1) & mask()) {
      const size_t home = slots_[j].hash & mask();
      // Move slot j into the hole unless its home lies cyclically in (hole, j].
      const bool home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (home_after_hole) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    slots_[hole] = Slot{};
  }

  size_t capacity_ = 0;
  std::vector<Slot> slots_;     // a power of two, at least twice the entries
  std::vector<Entry> entries_;  // grows to capacity_; indices are stable
  size_t hand_ = 0;             // the clock hand: next entry to consider for eviction
};

// Exact statement text -> facts.
using StatementCache = ClockMap<QueryFacts>;

}  // namespace sw::parser::detail
