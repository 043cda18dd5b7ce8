// The runners' two-phase commit (CopyIn, ReferenceWrite) over the real coordinator: what each leg
// is sent, when the decision is asked for, what `finished` and the counters' hook get. The hooks
// are plain functions standing for the session's (gid, catalog decision, counters).
#include "twopc/two_phase_legs.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

using sw::Status;
using sw::twopc::Decision;
using sw::twopc::TwoPhaseHooks;
using sw::twopc::TwoPhaseLegs;
using sw::twopc::TwoPhaseOutcome;

namespace {

struct Run {
  std::vector<std::string> sent;   // "<leg>:<sql>"
  std::vector<std::string> asked;  // the decisions asked for: gid and shards
  std::function<void(Decision, std::string)> decide;
  int finished = 0;
  int counted = 0;
  TwoPhaseOutcome outcome = TwoPhaseOutcome::Unknown;
  Status error;
  TwoPhaseLegs legs{
      "write of reference table plans", hooks(),
      [this](size_t leg, const std::string& sql) { sent.push_back(std::to_string(leg) + ":" + sql); },
      [this](TwoPhaseOutcome o, const Status& e) {
        ++finished;
        outcome = o;
        error = e;
      }};

  TwoPhaseHooks hooks() {
    TwoPhaseHooks h;
    h.next_gid = [] { return std::string("shardwire_0123456789abcdef_0_1"); };
    h.decide_commit = [this](const std::string& gid, const std::vector<std::string>& shards,
                             std::function<void(Decision, std::string)> decided) {
      std::string row = gid;
      for (const std::string& shard : shards) row += " " + shard;
      asked.push_back(row);
      decide = std::move(decided);
    };
    h.two_phase_done = [this](TwoPhaseOutcome, int64_t) { ++counted; };
    return h;
  }
  std::vector<std::string> take() { return std::exchange(sent, {}); }
};

const std::string kGid = "shardwire_0123456789abcdef_0_1";

}  // namespace

TEST_CASE("two written legs and a read-only one commit: PREPARE, decision, COMMIT PREPARED") {
  Run run;
  run.legs.start({"s0", "s1", "s2"}, {0, 2});
  CHECK(run.legs.gid() == kGid);
  CHECK(run.take() == std::vector<std::string>{"0:PREPARE TRANSACTION '" + kGid + "_0'", "1:COMMIT",
                                               "2:PREPARE TRANSACTION '" + kGid + "_1'"});
  run.legs.on_ready(0);
  run.legs.on_ready(1);
  CHECK(run.asked.empty());
  run.legs.on_ready(2);
  REQUIRE(run.asked == std::vector<std::string>{kGid + " s0 s2"});
  run.decide(Decision::Commit, "");
  CHECK(run.take() ==
        std::vector<std::string>{"0:COMMIT PREPARED '" + kGid + "_0'", "2:COMMIT PREPARED '" + kGid + "_1'"});
  CHECK(run.finished == 0);
  run.legs.on_ready(0);
  run.legs.on_ready(2);
  CHECK(run.finished == 1);
  CHECK(run.counted == 1);
  CHECK(run.outcome == TwoPhaseOutcome::Committed);
  run.legs.on_ready(2);  // nothing after the end
  CHECK(run.finished == 1);
}

TEST_CASE("a failed PREPARE rolls the prepared legs back and finishes with that error") {
  Run run;
  run.legs.start({"s0", "s1"}, {0, 1});
  run.take();
  run.legs.on_ready(0);
  run.legs.on_error(1, Status::client("53100", "disk full"));
  run.legs.on_error(1, Status::client("XX000", "a later error does not count"));
  run.legs.on_ready(1);
  CHECK(run.asked.empty());
  CHECK(run.take() == std::vector<std::string>{"0:ROLLBACK PREPARED '" + kGid + "_0'"});
  run.legs.on_ready(0);
  CHECK(run.finished == 1);
  CHECK(run.outcome == TwoPhaseOutcome::RolledBack);
  CHECK(run.error.sqlstate == "53100");
  CHECK(run.error.message.find("disk full") != std::string::npos);
}

TEST_CASE("an unknown decision leaves the legs prepared; a decision after the end is ignored") {
  Run run;
  run.legs.start({"s0", "s1"}, {0, 1});
  run.take();
  run.legs.on_ready(0);
  run.legs.on_lost(1, "server closed the connection");
  CHECK(run.take() == std::vector<std::string>{"0:ROLLBACK PREPARED '" + kGid + "_0'"});
  run.legs.on_ready(0);
  CHECK(run.outcome == TwoPhaseOutcome::RolledBack);
  CHECK(run.error.sqlstate == "08006");

  Run unknown;
  unknown.legs.start({"s0", "s1"}, {0, 1});
  unknown.legs.on_ready(0);
  unknown.legs.on_ready(1);
  unknown.take();
  unknown.decide(Decision::Unknown, "catalog unreachable");
  CHECK(unknown.take().empty());
  CHECK(unknown.finished == 1);
  CHECK(unknown.outcome == TwoPhaseOutcome::Unknown);
  CHECK(unknown.error.sqlstate == "08007");
  CHECK(unknown.error.message.find(kGid) != std::string::npos);
}
