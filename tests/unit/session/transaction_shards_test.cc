// Which shards a transaction read and wrote, the refusal of a second written shard, and the
// commit order, driven by tables of statement sequences.
#include "session/transaction_shards.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::CommitPlan;
using sw::session::CrossShardWrites;
using sw::session::TransactionShards;

namespace {

struct Statement {
  int shard;
  bool writes;
  bool allowed;
};

struct Case {
  const char* name;
  std::vector<Statement> statements;
  int writer;              // after all of them
  std::vector<int> legs;   // the legs COMMIT runs on
  std::vector<int> first;  // committed first
  int last;                // committed last
};

std::string name_of(int shard) { return std::string("s").append(std::to_string(shard)); }

}  // namespace

TEST_CASE("reads on any number of shards, writes on one; the written shard commits last") {
  const std::vector<Case> cases = {
      {"reads only, one shard", {{0, false, true}}, -1, {0}, {}, 0},
      {"reads on two shards", {{0, false, true}, {1, false, true}}, -1, {0, 1}, {0}, 1},
      {"write on s0, read on s1", {{0, true, true}, {1, false, true}}, 0, {0, 1}, {1}, 0},
      {"read on s0, write on s1, read on s2",
       {{0, false, true}, {1, true, true}, {2, false, true}},
       1,
       {0, 1, 2},
       {0, 2},
       1},
      {"writes on s1 twice", {{1, true, true}, {1, true, true}, {0, false, true}}, 1, {1, 0}, {0}, 1},
      {"a second written shard is refused",
       {{0, true, true}, {1, false, true}, {1, true, false}},
       0,
       {0, 1},
       {1},
       0},
      {"the refusal does not move the writer",
       {{2, true, true}, {0, true, false}, {2, true, true}},
       2,
       {2, 0},
       {0},
       2},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TransactionShards shards;
    shards.begin("BEGIN ISOLATION LEVEL REPEATABLE READ");
    for (const Statement& s : c.statements) {
      auto status = shards.on_statement(s.shard, s.writes, name_of(s.shard));
      CHECK(status.is_ok() == s.allowed);
    }
    CHECK(shards.writer() == c.writer);
    CommitPlan plan = shards.commit_plan(c.legs);
    CHECK(plan.kind == CommitPlan::Kind::OnePhase);
    CHECK(plan.first == c.first);
    CHECK(plan.last == c.last);
  }
}

TEST_CASE("the refusal of a second written shard names both shards and two-phase commit") {
  TransactionShards shards;
  shards.begin("BEGIN");
  REQUIRE(shards.on_statement(0, true, "s0").is_ok());
  auto refused = shards.on_statement(1, true, "s1");
  CHECK(refused.sqlstate == "0A000");
  CHECK(refused.message.find("shard s0") != std::string::npos);
  CHECK(refused.message.find("shard s1") != std::string::npos);
  CHECK(refused.message.find("two-phase commit") != std::string::npos);
}

TEST_CASE("each refusal says why two-phase commit did not run") {
  TransactionShards shards;
  shards.set_cross_shard_writes(CrossShardWrites::RefuseNoCatalog);
  shards.begin("BEGIN");
  REQUIRE(shards.on_statement(0, true, "s0").is_ok());
  CHECK_FALSE(shards.may_write(1));
  auto refused = shards.on_statement(1, true, "s1");
  CHECK(refused.sqlstate == "0A000");
  CHECK(refused.message.find("catalog.dsn") != std::string::npos);
  shards.set_cross_shard_writes(CrossShardWrites::Refuse);
  refused = shards.on_statement(1, true, "s1");
  CHECK(refused.message.find("sharding.cross_shard_transactions is refuse") != std::string::npos);
  CHECK(shards.writers() == std::vector<int>{0});
}

namespace {

struct TwoPhaseCase {
  const char* name;
  std::vector<std::pair<int, bool>> statements;  // shard, writes
  std::vector<int> legs;
  CommitPlan::Kind kind;
  std::vector<int> first;
  std::vector<int> written;
  int last;
};

}  // namespace

TEST_CASE("with two-phase commit allowed, two written legs make the plan TwoPhase") {
  using Kind = CommitPlan::Kind;
  const std::vector<TwoPhaseCase> cases = {
      {"one written shard keeps the one-phase plan",
       {{0, true}, {1, false}},
       {0, 1},
       Kind::OnePhase,
       {1},
       {},
       0},
      {"two written shards", {{0, true}, {1, true}}, {1, 0}, Kind::TwoPhase, {}, {1, 0}, -1},
      {"two written, one read",
       {{0, true}, {2, false}, {1, true}},
       {1, 2, 0},
       Kind::TwoPhase,
       {2},
       {1, 0},
       -1},
      {"three written, written twice",
       {{2, true}, {0, true}, {2, true}, {1, true}},
       {0, 1, 2},
       Kind::TwoPhase,
       {},
       {0, 1, 2},
       -1},
      {"a written shard without a leg left (lost) does not count",
       {{0, true}, {1, true}},
       {1},
       Kind::OnePhase,
       {},
       {},
       1},
  };
  for (const TwoPhaseCase& c : cases) {
    CAPTURE(c.name);
    TransactionShards shards;
    shards.set_cross_shard_writes(CrossShardWrites::TwoPhase);
    shards.begin("BEGIN");
    for (auto [shard, writes] : c.statements)
      CHECK(shards.on_statement(shard, writes, name_of(shard)).is_ok());
    CommitPlan plan = shards.commit_plan(c.legs);
    CHECK(plan.kind == c.kind);
    CHECK(plan.first == c.first);
    CHECK(plan.written == c.written);
    CHECK(plan.last == c.last);
  }
}

TEST_CASE("outside a transaction nothing is tracked; a new transaction forgets the last one") {
  TransactionShards shards;
  CHECK(shards.on_statement(0, true, "s0").is_ok());
  CHECK(shards.on_statement(1, true, "s1").is_ok());  // autocommit: each write commits alone
  CHECK(shards.writer() == -1);
  shards.begin("BEGIN");
  CHECK(shards.on_statement(1, true, "s1").is_ok());
  shards.end();
  CHECK_FALSE(shards.open());
  shards.begin("BEGIN");
  CHECK(shards.on_statement(0, true, "s0").is_ok());
  CHECK(shards.writer() == 0);
}

TEST_CASE("a joining shard replays the BEGIN, its riders, and later settings and savepoints") {
  TransactionShards shards;
  CHECK(shards.replay().empty());
  shards.note_replayed("SAVEPOINT a");  // not in a transaction: nothing to replay
  CHECK(shards.replay().empty());
  shards.begin("BEGIN READ ONLY;SET LOCAL statement_timeout = '5s'");
  shards.note_replayed("SAVEPOINT a");
  shards.note_replayed("ROLLBACK TO SAVEPOINT a");
  CHECK(shards.replay() ==
        "BEGIN READ ONLY;SET LOCAL statement_timeout = '5s';SAVEPOINT a;ROLLBACK TO SAVEPOINT a");
}

TEST_CASE("a transaction begun by the server's word replays a plain BEGIN") {
  TransactionShards shards;
  shards.on_server_status('I');
  CHECK_FALSE(shards.open());
  shards.on_server_status('T');
  CHECK(shards.open());
  CHECK(shards.replay() == "BEGIN");
  shards.note_replayed("SAVEPOINT s");
  shards.on_server_status('T');  // already open: the replay is kept
  CHECK(shards.replay() == "BEGIN;SAVEPOINT s");
}
