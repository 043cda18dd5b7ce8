#include "session/held_servers.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::Status;
using sw::session::EveryShardTransaction;
using sw::session::HeldServers;

namespace {
// The fields HeldServers reads and writes of a runner's leg.
struct Leg {
  int shard_index = -1;
  sw::pool::Backend* lent = nullptr;
  std::string begin;
  sw::pool::Backend* backend = nullptr;
  bool done = false;
  int owed = 0;
};

EveryShardTransaction::Target target(int index, std::string begin) {
  EveryShardTransaction::Target t;
  t.index = index;
  t.begin = std::move(begin);
  return t;
}
}  // namespace

TEST_CASE("held servers: keep gives each leg its target's shard, lent server and begin") {
  std::vector<Leg> legs(3);
  HeldServers held;
  CHECK_FALSE(held.active());
  std::vector<EveryShardTransaction::Target> targets = {target(2, "BEGIN ISOLATION LEVEL REPEATABLE READ"),
                                                        target(0, "")};
  held.keep(legs, std::move(targets), true, nullptr);
  CHECK(held.active());
  CHECK(held.in_transaction());
  CHECK(legs[0].shard_index == 2);
  CHECK(legs[0].begin == "BEGIN ISOLATION LEVEL REPEATABLE READ");
  CHECK(legs[1].shard_index == 0);
  CHECK(legs[1].begin.empty());
  CHECK(legs[2].shard_index == -1);  // more legs than targets: the rest keep none
  CHECK(legs[2].lent == nullptr);
}

TEST_CASE("held servers: hand_back gives the session every leg, with what it owes and the run's error") {
  std::vector<Leg> legs(2);
  legs[0].owed = 2;
  legs[1].owed = -1;
  HeldServers held;
  std::vector<EveryShardTransaction::Handed> got;
  Status got_error = Status::ok();
  int calls = 0;
  held.keep(legs, {target(1, "BEGIN"), target(3, "BEGIN")}, false,
            [&](std::vector<EveryShardTransaction::Handed> servers, const Status& error) {
              ++calls;
              got = std::move(servers);
              got_error = error;
              return Status::client("25P02", "refused");  // a read ignores the session's answer
            });
  CHECK_FALSE(held.in_transaction());
  held.hand_back(legs, Status::server("XX000", "shard s1 reported an error"),
                 [](const Leg& leg) { return leg.owed > 0 ? leg.owed : 0; });
  CHECK(calls == 1);
  REQUIRE(got.size() == 2);
  CHECK(got[0].shard == 1);
  CHECK(got[0].ready_owed == 2);
  CHECK(got[0].backend == nullptr);  // never arrived: handed back as none
  CHECK_FALSE(got[0].lent);
  CHECK(got[1].shard == 3);
  CHECK(got[1].ready_owed == 0);
  CHECK(got_error.sqlstate == "XX000");
  CHECK(legs[0].done);
  CHECK(legs[1].done);
}
