// twopc/two_phase_plan.h: one recovery round's actions from what it read, table by table.
#include "twopc/two_phase_plan.h"

#include <doctest/doctest.h>

#include "twopc/gid.h"

using namespace sw::twopc;

namespace {

constexpr TwoPhaseDecision kCommit = TwoPhaseDecision::Commit;
constexpr TwoPhaseDecision kAbort = TwoPhaseDecision::Abort;

ShardPrepared shard(const std::string& name, std::vector<PreparedXact> prepared) {
  return {name, true, std::move(prepared)};
}
ShardPrepared down(const std::string& name) { return {name, false, {}}; }
PreparedXact xact(const std::string& gid, double age_s) { return {gid, "2026-12-02 13:00:00+00", age_s}; }
DecisionRow row(TwoPhaseDecision d, double age_s = 30) { return {d, {"s0", "s1"}, "", age_s}; }

const std::string kA = "shardwire_00000000000000aa_0_1";
const std::string kB = "shardwire_00000000000000aa_0_2";
const std::string kC = "shardwire_00000000000000bb_1_9";

}  // namespace

TEST_CASE("decided gids are resolved on every shard that holds them") {
  Decisions decisions = {{kA, row(kCommit)}, {kB, row(kAbort)}};
  RecoveryPlan plan =
      plan_recovery({shard("s0", {xact(kA, 0.1), xact(kB, 30)}), shard("s1", {xact(kA, 0.2)})}, decisions);
  CHECK(plan.resolve ==
        std::vector<Resolution>{{"s0", kA, kCommit}, {"s0", kB, kAbort}, {"s1", kA, kCommit}});
  CHECK(plan.presume.empty());
  CHECK(plan.forget.empty());
  CHECK(plan.waiting == 0);
}

TEST_CASE("a decision younger than the grace period is left to its coordinator") {
  Decisions decisions = {{kA, row(kCommit, 4.9)}, {kB, row(kAbort, 5.0)}};
  RecoveryPlan plan = plan_recovery({shard("s0", {xact(kA, 30), xact(kB, 30)})}, decisions);
  CHECK(plan.resolve == std::vector<Resolution>{{"s0", kB, kAbort}});
  CHECK(plan.waiting == 1);
  CHECK(plan.presume.empty());
}

TEST_CASE("an undecided gid waits for the grace period, then is presumed aborted wherever it is held") {
  struct Row {
    double age_on_s0, age_on_s1;
    bool presumed;
  };
  const Row rows[] = {
      {0.0, 0.0, false}, {4.9, 4.9, false}, {5.0, 4.0, true}, {1.0, 6.0, true}, {100, 100, true},
  };
  for (const Row& r : rows) {
    CAPTURE(r.age_on_s0);
    CAPTURE(r.age_on_s1);
    RecoveryPlan plan =
        plan_recovery({shard("s0", {xact(kC, r.age_on_s0)}), shard("s1", {xact(kC, r.age_on_s1)})}, {});
    CHECK(plan.resolve.empty());
    if (r.presumed) {
      CHECK(plan.presume == std::vector<PresumedAbort>{{kC, {{"s0", kC, kAbort}, {"s1", kC, kAbort}}}});
      CHECK(plan.waiting == 0);
    } else {
      CHECK(plan.presume.empty());
      CHECK(plan.waiting == 2);
    }
  }
}

TEST_CASE("legs prepared under leg gids are matched to their transaction's decision") {
  const std::string a0 = leg_gid(kA, 0), a1 = leg_gid(kA, 1), c0 = leg_gid(kC, 0), c1 = leg_gid(kC, 1);
  Decisions decisions = {{kA, row(kCommit)}};
  RecoveryPlan plan = plan_recovery(
      {shard("s0", {xact(a0, 1), xact(c0, 9)}), shard("s1", {xact(a1, 1), xact(c1, 1)})}, decisions);
  CHECK(plan.resolve == std::vector<Resolution>{{"s0", a0, kCommit}, {"s1", a1, kCommit}});
  // c0 is past the grace: the whole transaction kC is presumed aborted, both legs with it.
  CHECK(plan.presume == std::vector<PresumedAbort>{{kC, {{"s0", c0, kAbort}, {"s1", c1, kAbort}}}});
  CHECK(plan.forget.empty());  // kA is still held (by its legs)
}

TEST_CASE("gids without the shardwire prefix are never touched") {
  Decisions decisions = {{"app_tx_1", row(kCommit)}};
  RecoveryPlan plan = plan_recovery(
      {shard("s0", {xact("app_tx_1", 100), xact("shardwire", 100), xact("Shardwire_x_0_1", 100)})},
      decisions);
  CHECK(plan.resolve.empty());
  CHECK(plan.presume.empty());
  CHECK(plan.waiting == 0);
}

TEST_CASE("decision rows are forgotten only when every shard was read and none holds the gid") {
  Decisions decisions = {{kA, row(kCommit)}, {kB, row(kCommit)}};
  SUBCASE("all shards read, kA still held") {
    RecoveryPlan plan = plan_recovery({shard("s0", {xact(kA, 1)}), shard("s1", {})}, decisions);
    CHECK(plan.forget == std::vector<std::string>{kB});
  }
  SUBCASE("a shard unreachable: nothing is forgotten, the reachable shard is still resolved") {
    RecoveryPlan plan = plan_recovery({shard("s0", {xact(kA, 1)}), down("s1")}, decisions);
    CHECK(plan.forget.empty());
    CHECK(plan.resolve == std::vector<Resolution>{{"s0", kA, kCommit}});
  }
  SUBCASE("no shards held anything") {
    RecoveryPlan plan = plan_recovery({shard("s0", {}), shard("s1", {})}, decisions);
    CHECK(plan.forget == std::vector<std::string>{kA, kB});
  }
}

TEST_CASE("abort rows outlive their prepared transactions for the retention") {
  const std::chrono::seconds retention{600};
  Decisions decisions = {{kA, row(kAbort, 599)}, {kB, row(kAbort, 601)}, {kC, row(kCommit, 0)}};
  RecoveryPlan plan =
      plan_recovery({shard("s0", {}), shard("s1", {})}, decisions, kPresumedAbortGrace, retention);
  CHECK(plan.forget == std::vector<std::string>{kB, kC});
}
