// The statement caches' map: second-chance (clock) eviction, and its open-addressed table checked
// against a plain model over many random operations (deletions shift entries back; a lookup must
// never stop at a hole they left).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "parser/statement_cache.h"

using sw::parser::detail::ClockMap;

namespace {

std::shared_ptr<const int> value(int v) { return std::make_shared<const int>(v); }

bool holds(ClockMap<int>& map, const std::string& key) {
  // find() marks the entry used; tests that must not disturb the bits use this only at the end.
  return map.find(key) != nullptr;
}

// The same policy over a plain vector: entries in slot order, a hand, a bit per entry.
struct ClockModel {
  size_t capacity;
  std::vector<std::pair<std::string, int>> entries;
  std::vector<bool> referenced;
  size_t hand = 0;

  const int* find(const std::string& key) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].first == key) {
        referenced[i] = true;
        return &entries[i].second;
      }
    }
    return nullptr;
  }
  void insert(const std::string& key, int v) {
    for (auto& e : entries) {
      if (e.first == key) {
        e.second = v;
        return;
      }
    }
    if (entries.size() < capacity) {
      entries.emplace_back(key, v);
      referenced.push_back(false);
      return;
    }
    for (;;) {
      const size_t i = hand;
      hand = (hand + 1) % entries.size();
      if (referenced[i]) {
        referenced[i] = false;
        continue;
      }
      entries[i] = {key, v};
      return;
    }
  }
};

}  // namespace

TEST_CASE("clock: an entry used since the hand last passed survives; the first unused one goes") {
  ClockMap<int> map(3);
  map.insert("a", value(1));
  map.insert("b", value(2));
  map.insert("c", value(3));
  REQUIRE(map.find("a") != nullptr);  // a used
  map.insert("d", value(4));          // the hand clears a's bit and evicts b
  CHECK(map.size() == 3);
  map.insert("e", value(5));  // the hand goes on from b's slot: c was not used, so c goes
  CHECK(holds(map, "a"));
  CHECK_FALSE(holds(map, "b"));
  CHECK_FALSE(holds(map, "c"));
  CHECK(holds(map, "d"));
  CHECK(holds(map, "e"));
}

TEST_CASE("clock: a hit hands out the cached pointer; insert replaces; capacity 0 caches nothing") {
  ClockMap<int> map(2);
  auto one = value(1);
  map.insert("k", one);
  CHECK(map.find("k").get() == one.get());
  map.insert("k", value(7));
  CHECK(map.size() == 1);
  CHECK(*map.find("k") == 7);
  CHECK(map.find("other") == nullptr);
  map.set_capacity(0);  // empties
  CHECK(map.size() == 0);
  map.insert("k", value(1));
  CHECK(map.find("k") == nullptr);
  map.set_capacity(2);
  map.insert("k", value(1));
  CHECK(*map.find("k") == 1);
}

TEST_CASE("clock: agrees with a plain model over 200 000 random finds and inserts") {
  for (size_t capacity : {1, 7, 64, 1000}) {
    CAPTURE(capacity);
    ClockMap<int> map(capacity);
    ClockModel model{capacity, {}, {}, 0};
    std::mt19937 rng(static_cast<unsigned>(capacity));
    // Keys from a space about three times the capacity, so evictions and re-inserts are common.
    std::uniform_int_distribution<int> key_of(0, static_cast<int>(capacity * 3));
    int mismatches = 0;
    for (int op = 0; op < 200000; ++op) {
      const std::string key = "SELECT * FROM t WHERE k = " + std::to_string(key_of(rng));
      if (rng() % 2 == 0) {
        const int* expected = model.find(key);
        auto got = map.find(key);
        if ((expected == nullptr) != (got == nullptr) || (got && *got != *expected)) ++mismatches;
      } else {
        map.insert(key, value(op));
        model.insert(key, op);
      }
    }
    CHECK(mismatches == 0);
    CHECK(map.size() == model.entries.size());
  }
}
