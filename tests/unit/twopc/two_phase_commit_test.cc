// The two-phase commit coordinator, driven by tables of events: what each leg is sent after each
// event, and what the client gets at the end.
#include "twopc/two_phase_commit.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "twopc/gid.h"

using sw::Status;
using sw::twopc::Decision;
using sw::twopc::LegCommand;
using sw::twopc::Participant;
using sw::twopc::TwoPhaseCommit;
using sw::twopc::TwoPhaseOutcome;
using Step = TwoPhaseCommit::Step;

namespace {

constexpr const char* kGid = "shardwire_0123456789abcdef_0_7";

// s0 and s1 written, s2 read only.
std::vector<Participant> three_legs() { return {{0, "s0", true}, {1, "s1", true}, {2, "s2", false}}; }

enum class Kind { Ok, Error, Lost, Decide };

struct Event {
  Kind kind;
  int shard = -1;  // Ok/Error/Lost
  Decision decision = Decision::Commit;
  std::vector<LegCommand> sends;  // what the coordinator sends after it
};

struct Case {
  const char* name;
  std::vector<Event> events;
  Step step;  // at the end
  TwoPhaseOutcome outcome;
  std::string sqlstate;     // of the client's error; empty: COMMIT
  std::string message_has;  // a part of the client's error
  int prepared_at_end;      // written legs left prepared (recovery's)
};

// Written leg n is prepared under <gid>_<n>: s0 is leg 0, s1 leg 1.
std::string commit_prepared(int leg) {
  return std::string("COMMIT PREPARED '") + kGid + "_" + std::to_string(leg) + "'";
}
std::string rollback_prepared(int leg) {
  return std::string("ROLLBACK PREPARED '") + kGid + "_" + std::to_string(leg) + "'";
}

Event ok(int shard, std::vector<LegCommand> sends = {}) {
  return {Kind::Ok, shard, Decision::Commit, std::move(sends)};
}
Event error(int shard, std::vector<LegCommand> sends = {}) {
  return {Kind::Error, shard, Decision::Commit, std::move(sends)};
}
Event lost(int shard, std::vector<LegCommand> sends = {}) {
  return {Kind::Lost, shard, Decision::Commit, std::move(sends)};
}
Event decide(Decision d, std::vector<LegCommand> sends = {}) {
  return {Kind::Decide, -1, d, std::move(sends)};
}

}  // namespace

TEST_CASE("start: read-only legs COMMIT, written legs PREPARE TRANSACTION with the gid") {
  TwoPhaseCommit c(kGid, three_legs());
  const std::string prepare = std::string("PREPARE TRANSACTION '") + kGid;
  CHECK(c.start() == std::vector<LegCommand>{{0, prepare + "_0'"}, {1, prepare + "_1'"}, {2, "COMMIT"}});
  CHECK(c.step() == Step::Preparing);
  CHECK(c.written_names() == std::vector<std::string>{"s0", "s1"});
}

TEST_CASE("each sequence of leg answers and decisions ends as the failure table says") {
  const std::vector<Case> cases = {
      {"all prepared, commit decided, all committed",
       {ok(2), ok(0), ok(1), decide(Decision::Commit, {{0, commit_prepared(0)}, {1, commit_prepared(1)}}),
        ok(1), ok(0)},
       Step::Done,
       TwoPhaseOutcome::Committed,
       "",
       "",
       0},
      {"a PREPARE fails: the other prepared leg is rolled back, the client gets the leg's error",
       {ok(0), error(1), ok(2, {{0, rollback_prepared(0)}}), ok(0)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "23503",
       "PREPARE TRANSACTION on shard s1 failed",
       0},
      {"a PREPARE fails before the others answered: rollback waits for every answer",
       {error(0), ok(1, {}), ok(2, {{1, rollback_prepared(1)}}), ok(1)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "23503",
       "shard s0",
       0},
      {"both PREPAREs fail: nothing to roll back",
       {error(0), error(1), ok(2)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "23503",
       "shard s0",
       0},
      {"the read-only leg's COMMIT fails: the prepared legs are rolled back",
       {ok(0), ok(1), error(2, {{0, rollback_prepared(0)}, {1, rollback_prepared(1)}}), ok(0), ok(1)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "23503",
       "COMMIT on shard s2 failed",
       0},
      {"a written leg is lost before answering PREPARE: the other is rolled back",
       {ok(0), ok(2), lost(1, {{0, rollback_prepared(0)}}), ok(0)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "08006",
       "shard s1",
       0},
      {"a leg is lost while the decision runs: committed, the lost leg is recovery's",
       {ok(0), ok(1), ok(2), lost(1), decide(Decision::Commit, {{0, commit_prepared(0)}}), ok(0)},
       Step::Done,
       TwoPhaseOutcome::Committed,
       "",
       "",
       1},
      {"recovery decided abort first: every prepared leg is rolled back, 40001",
       {ok(0), ok(1), ok(2), decide(Decision::Abort, {{0, rollback_prepared(0)}, {1, rollback_prepared(1)}}),
        ok(0), ok(1)},
       Step::Done,
       TwoPhaseOutcome::RolledBack,
       "40001",
       kGid,
       0},
      {"the decision is unknown: legs stay prepared, 08007 names the gid",
       {ok(0), ok(1), ok(2), decide(Decision::Unknown)},
       Step::Done,
       TwoPhaseOutcome::Unknown,
       "08007",
       kGid,
       2},
      {"COMMIT PREPARED fails on one leg: the client still gets COMMIT, recovery has it",
       {ok(0), ok(1), ok(2), decide(Decision::Commit, {{0, commit_prepared(0)}, {1, commit_prepared(1)}}),
        error(0), ok(1)},
       Step::Done,
       TwoPhaseOutcome::Committed,
       "",
       "",
       1},
      {"a leg is lost after the decision: the client still gets COMMIT",
       {ok(0), ok(1), ok(2), decide(Decision::Commit, {{0, commit_prepared(0)}, {1, commit_prepared(1)}}),
        lost(1), ok(0)},
       Step::Done,
       TwoPhaseOutcome::Committed,
       "",
       "",
       1},
      {"answers of unknown legs and repeated answers change nothing",
       {ok(7), ok(0), ok(0), ok(1), ok(2),
        decide(Decision::Commit, {{0, commit_prepared(0)}, {1, commit_prepared(1)}}), ok(0), ok(1)},
       Step::Done,
       TwoPhaseOutcome::Committed,
       "",
       "",
       0},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    TwoPhaseCommit coordinator(kGid, three_legs());
    (void)coordinator.start();
    for (size_t i = 0; i < c.events.size(); ++i) {
      CAPTURE(i);
      const Event& e = c.events[i];
      std::vector<LegCommand> sent;
      switch (e.kind) {
        case Kind::Ok: sent = coordinator.on_answer(e.shard, Status::ok()); break;
        case Kind::Error:
          sent = coordinator.on_answer(e.shard, Status::client("23503", "violates foreign key constraint"));
          break;
        case Kind::Lost: sent = coordinator.on_lost(e.shard, "connection reset"); break;
        case Kind::Decide: sent = coordinator.on_decision(e.decision, "catalog unreachable"); break;
      }
      CHECK(sent == e.sends);
    }
    CHECK(coordinator.step() == c.step);
    if (c.step != Step::Done) continue;
    CHECK(coordinator.outcome() == c.outcome);
    CHECK(coordinator.prepared_count() == c.prepared_at_end);
    if (c.sqlstate.empty()) {
      CHECK(coordinator.client_error().is_ok());
    } else {
      CHECK(coordinator.client_error().sqlstate == c.sqlstate);
      CHECK(coordinator.client_error().message.find(c.message_has) != std::string::npos);
    }
  }
}

TEST_CASE("the fault points count prepared and committed legs") {
  TwoPhaseCommit c(kGid, three_legs());
  (void)c.start();
  CHECK(c.prepared_count() == 0);
  (void)c.on_answer(0, Status::ok());
  CHECK(c.prepared_count() == 1);
  (void)c.on_answer(1, Status::ok());
  (void)c.on_answer(2, Status::ok());
  CHECK(c.step() == Step::Deciding);
  (void)c.on_decision(Decision::Commit, "");
  CHECK(c.commit_prepared_count() == 0);
  (void)c.on_answer(1, Status::ok());
  CHECK(c.commit_prepared_count() == 1);
}

TEST_CASE("gid: prefix, 16 hex instance, worker, sequence") {
  CHECK(sw::twopc::two_phase_gid("00ff00ff00ff00ff", 3, 42) == "shardwire_00ff00ff00ff00ff_3_42");
}
