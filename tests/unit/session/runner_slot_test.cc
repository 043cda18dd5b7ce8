#include "session/runner_slot.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

// Two runner kinds that record their end (and whether the slot still showed them meanwhile).
struct Events {
  std::vector<std::string> log;
};
struct Read;
struct Write;
using Slot = sw::session::RunnerSlotOf<Read, Write>;

struct Read {
  Read(Events& log_to, const Slot& held_by) : events(log_to), slot(held_by) {}
  ~Read() {
    events.log.push_back(slot.get<Read>() == nullptr ? "read ended, slot clear"
                                                     : "read ended, slot shows it");
  }
  Events& events;
  const Slot& slot;
};
struct Write {
  explicit Write(Events& log_to) : events(log_to) {}
  ~Write() { events.log.push_back("write ended"); }
  Events& events;
};

}  // namespace

TEST_CASE("runner slot: one runner at a time, its type says which") {
  Events events;
  Slot slot;
  CHECK(slot.empty());
  CHECK(slot.get<Read>() == nullptr);
  Read& read = slot.emplace<Read>(events, slot);
  CHECK_FALSE(slot.empty());
  CHECK(slot.get<Read>() == &read);
  CHECK(slot.get<Write>() == nullptr);
  // Ending a runner of another type leaves this one running (as resetting another slot did).
  slot.reset<Write>();
  CHECK(slot.get<Read>() == &read);
  CHECK(events.log.empty());
  // Ending it: while it is destroyed the slot no longer shows it, as with std::unique_ptr::reset.
  slot.reset<Read>();
  CHECK(slot.empty());
  REQUIRE(events.log.size() == 1);
  CHECK(events.log[0] == "read ended, slot clear");
  slot.emplace<Write>(events);
  CHECK(slot.get<Write>() != nullptr);
  CHECK(slot.get<Read>() == nullptr);
}

TEST_CASE("runner slot: the runner still held ends with the slot") {
  Events events;
  {
    Slot slot;
    slot.emplace<Write>(events);
  }
  REQUIRE(events.log.size() == 1);
  CHECK(events.log[0] == "write ended");
}

namespace {
struct Policy {
  virtual ~Policy() = default;
  virtual const char* name() const = 0;
};
struct Merge : Policy {
  const char* name() const override { return "merge"; }
};
struct Copy : Policy {
  const char* name() const override { return "copy"; }
};
}  // namespace

TEST_CASE("runner slot: the runner, whatever its type, as the base every runner shares") {
  sw::session::RunnerSlotOf<Merge, Copy> slot;
  CHECK(slot.as<Policy>() == nullptr);
  slot.emplace<Copy>();
  REQUIRE(slot.as<Policy>() != nullptr);
  CHECK(std::string(slot.as<Policy>()->name()) == "copy");
  slot.reset<Copy>();
  slot.emplace<Merge>();
  CHECK(std::string(slot.as<Policy>()->name()) == "merge");
}
