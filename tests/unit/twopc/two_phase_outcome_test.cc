// The table of outcomes of the one two-phase-commit driver (docs/architecture.md §5.9): each
// outcome's row, what counting it records, and the driver run to each outcome over the real
// coordinator counting through the table (the session's hook does the same).
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "stats/traffic.h"
#include "twopc/two_phase_legs.h"

using sw::Status;
using sw::stats::CrossShardOutcome;
using sw::twopc::Decision;
using sw::twopc::TwoPhaseHooks;
using sw::twopc::TwoPhaseLegs;
using sw::twopc::TwoPhaseOutcome;

namespace {

struct Expected {
  TwoPhaseOutcome outcome;
  CrossShardOutcome counted;
  bool observes_latency;
  bool routine;
  std::string logged;
};

const std::vector<Expected> kTable = {
    {TwoPhaseOutcome::Committed, CrossShardOutcome::TwoPhaseCommitted, true, true, "committed"},
    {TwoPhaseOutcome::RolledBack, CrossShardOutcome::RolledBack, false, false, "rolled back"},
    {TwoPhaseOutcome::Unknown, CrossShardOutcome::Unknown, false, false, "left to recovery"},
};

size_t counter(CrossShardOutcome outcome) { return static_cast<size_t>(outcome); }

// Two written legs run to one outcome; the hook counts through the table into `traffic`.
struct Scenario {
  std::string name;
  TwoPhaseOutcome outcome;
  std::function<void(TwoPhaseLegs&, std::function<void(Decision, std::string)>&)> events;
};

const std::vector<Scenario> kScenarios = {
    {"both prepare, commit recorded", TwoPhaseOutcome::Committed,
     [](TwoPhaseLegs& legs, std::function<void(Decision, std::string)>& decide) {
       legs.on_ready(0);
       legs.on_ready(1);
       decide(Decision::Commit, "");
       legs.on_ready(0);
       legs.on_ready(1);
     }},
    {"a PREPARE fails", TwoPhaseOutcome::RolledBack,
     [](TwoPhaseLegs& legs, std::function<void(Decision, std::string)>&) {
       legs.on_ready(0);
       legs.on_error(1, Status::client("53100", "disk full"));
       legs.on_ready(1);
       legs.on_ready(0);  // its ROLLBACK PREPARED
     }},
    {"recovery decided abort", TwoPhaseOutcome::RolledBack,
     [](TwoPhaseLegs& legs, std::function<void(Decision, std::string)>& decide) {
       legs.on_ready(0);
       legs.on_ready(1);
       decide(Decision::Abort, "");
       legs.on_ready(0);
       legs.on_ready(1);
     }},
    {"the decision could not be recorded", TwoPhaseOutcome::Unknown,
     [](TwoPhaseLegs& legs, std::function<void(Decision, std::string)>& decide) {
       legs.on_ready(0);
       legs.on_ready(1);
       decide(Decision::Unknown, "catalog unreachable");
     }},
};

}  // namespace

TEST_CASE("every outcome has its row: counter, latency, log level and word") {
  for (const Expected& expected : kTable) {
    CAPTURE(expected.logged);
    const sw::twopc::TwoPhaseOutcomeRow& row = sw::twopc::two_phase_outcome_row(expected.outcome);
    CHECK(row.outcome == expected.outcome);
    CHECK(row.counted == expected.counted);
    CHECK(row.observes_latency == expected.observes_latency);
    CHECK(row.routine == expected.routine);
    CHECK(std::string(row.logged) == expected.logged);
  }
}

TEST_CASE("counting an outcome adds one to its counter only, and a commit's time to the latency") {
  for (const Expected& expected : kTable) {
    CAPTURE(expected.logged);
    sw::stats::WorkerTraffic traffic;
    sw::twopc::count_two_phase_outcome(traffic, expected.outcome, 1500);
    for (size_t i = 0; i < sw::stats::kCrossShardOutcomes; ++i)
      CHECK(traffic.cross_shard_commits[i] == (i == counter(expected.counted) ? 1U : 0U));
    CHECK(traffic.two_phase_commit_latency.count() == (expected.observes_latency ? 1U : 0U));
  }
}

TEST_CASE("the driver run to each outcome counts it once through the table") {
  for (const Scenario& scenario : kScenarios) {
    CAPTURE(scenario.name);
    sw::stats::WorkerTraffic traffic;
    std::function<void(Decision, std::string)> decide;
    TwoPhaseHooks hooks;
    hooks.next_gid = [] { return std::string("shardwire_0123456789abcdef_0_1"); };
    hooks.decide_commit = [&](const std::string&, const std::vector<std::string>&,
                              std::function<void(Decision, std::string)> decided) {
      decide = std::move(decided);
    };
    hooks.two_phase_done = [&](TwoPhaseOutcome outcome, int64_t) {
      sw::twopc::count_two_phase_outcome(traffic, outcome, 10);
    };
    int finished = 0;
    TwoPhaseOutcome outcome = TwoPhaseOutcome::Committed;
    TwoPhaseLegs legs(
        "COMMIT", hooks, [](size_t, const std::string&) {},
        [&](TwoPhaseOutcome o, const Status&) {
          ++finished;
          outcome = o;
        });
    legs.start({"s0", "s1"}, {0, 1});
    scenario.events(legs, decide);
    REQUIRE(finished == 1);
    CHECK(outcome == scenario.outcome);
    const CrossShardOutcome counted = sw::twopc::two_phase_outcome_row(outcome).counted;
    uint64_t total = 0;
    for (uint64_t each : traffic.cross_shard_commits) total += each;
    CHECK(total == 1);
    CHECK(traffic.cross_shard_commits[counter(counted)] == 1);
  }
}
