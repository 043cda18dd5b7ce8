// A run on an owner engine's legs (LegEngine's constructor with `on`) against servers that speak
// the real protocol from message scripts (fake_server.h): what the owner's runner and the run's
// are told, and what the run leaves on the owner's legs. Real pools and a real event loop.
#include <doctest/doctest.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fake_server.h"
#include "session/leg_engine.h"
#include "wire/messages.h"

using sw::Status;
using sw::session::LegEngine;
using sw::test::FakeServer;
using Deployment = sw::test::LoopWithPools;

namespace {

// Runs the loop until `done` (false after 5 s): the run tests go step by step in one loop, which
// net::Loop::run cannot (a loop stopped once stays stopped).
template <class Done>
bool run_until(sw::net::Loop& loop, Done done) {
  for (int i = 0; i < 5000 && !done(); ++i) {
    uv_run(loop.raw(), UV_RUN_NOWAIT);
    if (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done();
}

bool has(const std::vector<std::string>& events, const std::string& event) {
  return std::find(events.begin(), events.end(), event) != events.end();
}

// The owner's runner (the session's part): keeps its servers, consumes what they send.
class Owner : public LegEngine::Runner {
 public:
  explicit Owner(std::vector<std::string>& log) : log_(log) {}
  void on_leg_server(size_t leg, std::string prologue) override {
    log_.push_back("owner server " + std::to_string(leg) + " prologue " + std::to_string(prologue.size()));
  }
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override {
    log_.push_back("owner message " + std::to_string(leg) + " " + message.type);
    return true;
  }
  void on_leg_ready(size_t) override {}
  void on_leg_violation(size_t leg, const Status&) override {
    log_.push_back("owner violation " + std::to_string(leg));
  }
  void on_leg_lost(size_t leg, const Status&) override {
    log_.push_back("owner lost " + std::to_string(leg));
  }
  void on_no_server(const Status&) override { log_.push_back("owner no server"); }

 private:
  std::vector<std::string>& log_;
};

// A run's runner: `sql` after the prologue on every leg; what it is told goes to the shared log.
class Run : public LegEngine::Runner {
 public:
  Run(std::vector<std::string>& log, std::string sql) : log_(log), sql_(std::move(sql)) {}
  LegEngine* engine = nullptr;
  bool hold_first = false;                 // hold the first message of leg 0
  bool release_at_ready = false;           // release a leg at its ReadyForQuery (clean)
  bool release_at_violation = false;       // release a violating leg (closed), as a two-phase commit does
  std::function<void()> at_first_message;  // e.g. destroys the run
  void on_leg_server(size_t leg, std::string prologue) override {
    log_.push_back("run server " + std::to_string(leg) + " prologue " + std::to_string(prologue.size()));
    sw::wire::encode_query(prologue, sql_);
    engine->expect_ready(leg, 1);
    engine->write(leg, prologue);
  }
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override {
    if (std::exchange(hold_first, false)) {
      log_.push_back("run held " + std::to_string(leg));
      engine->hold(leg);
      return true;
    }
    log_.push_back("run message " + std::to_string(leg) + " " + message.type);
    if (at_first_message) std::exchange(at_first_message, nullptr)();
    return true;
  }
  void on_leg_ready(size_t leg) override {
    if (engine->ready_owed(leg) > 0) return;
    log_.push_back("run ready " + std::to_string(leg));
    if (release_at_ready) engine->release(leg, engine->status(leg) == 'I');
  }
  void on_leg_violation(size_t leg, const Status&) override {
    log_.push_back("run violation " + std::to_string(leg));
    if (release_at_violation) engine->release(leg, false);
  }
  void on_leg_lost(size_t leg, const Status&) override { log_.push_back("run lost " + std::to_string(leg)); }
  void on_no_server(const Status&) override { log_.push_back("run no server"); }

 private:
  std::vector<std::string>& log_;
  std::string sql_;
};

// Answers "SELECT 1"; "SLOW" after `slow_ms`; "HANG UP" by closing the connection.
FakeServer::Script select_one(int slow_ms = 200) {
  return [slow_ms](const std::string& sql) {
    if (sql == "HANG UP") return std::string(FakeServer::kHangUp);
    if (sql == "SLOW") std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
    return FakeServer::command("SELECT 1");
  };
}

// A row of `bytes` bytes for a SELECT (over a small max_message_size: a violation).
FakeServer::Script big_row(size_t bytes) {
  return [bytes](const std::string& sql) {
    return sql.rfind("SELECT", 0) == 0 ? FakeServer::rows({std::string(bytes, 'x')})
                                       : FakeServer::command("SET");
  };
}

LegEngine::Target target_on(sw::pool::Pool& pool, int index, std::string begin = "") {
  LegEngine::Target target;
  target.pool = &pool;
  target.shard = pool.target().shard;
  target.index = index;
  target.begin = std::move(begin);
  return target;
}

// The owner's server on directory shard `shard` (a session's wait_for).
sw::pool::Backend* owner_server(Deployment& d, LegEngine& owner, sw::pool::Pool& pool, int shard) {
  const size_t before = owner.size();
  if (sw::pool::Backend* idle = owner.wait_for(pool, shard, 1)) return idle;
  const size_t leg = before < owner.size() ? before : 0;
  REQUIRE(run_until(d.loop, [&] { return owner.backend(leg) != nullptr; }));
  return owner.backend(leg);
}

// One server, one pool, and an owner engine with no legs yet: what most cases start from.
struct OneShard {
  explicit OneShard(sw::session::ServerState state = {})
      : owner({}, std::move(state), "a test transaction", owner_runner) {}
  FakeServer server{select_one()};
  Deployment d;
  sw::pool::Pool& pool = *d.add_pool(server, 1 << 20);
  std::vector<std::string> log;
  Owner owner_runner{log};
  LegEngine owner;
};
// The same, the owner's session state carrying settings (a prologue for a non-bare target).
struct OneShardWithSettings : OneShard {
  OneShardWithSettings() : OneShard({"SET b = '2';", 7}) {}
};

}  // namespace

TEST_CASE_FIXTURE(
    OneShard,
    "leg engine: a run on the owner's legs reads the owner's server, then the owner reads it again") {
  sw::pool::Backend* held = owner_server(d, owner, pool, 4);
  {
    Run runner(log, "SELECT 1");
    LegEngine run(&owner, {target_on(pool, 4)}, {}, "a test read", runner);
    runner.engine = &run;
    CHECK(owner.in_run(0));
    CHECK(owner.busy(0));
    run.start();
    REQUIRE(run_until(d.loop, [&] { return has(log, "run ready 0"); }));
    CHECK(run.backend(0) == held);
    CHECK(log == std::vector<std::string>{"owner server 0 prologue 0", "run server 0 prologue 0",
                                          "run message 0 C", "run message 0 Z", "run ready 0"});
    const std::vector<LegEngine::Handed> handed = run.hand_over();
    REQUIRE(handed.size() == 1);
    CHECK(handed[0].backend == held);
    CHECK(handed[0].leg == 0);
    CHECK(handed[0].shard == 4);
    CHECK(handed[0].borrowed);
  }
  CHECK_FALSE(owner.in_run(0));
  CHECK(owner.backend(0) == held);
  CHECK(owner.size() == 1);
  log.clear();
  owner.send_query(0, "SELECT 1");
  REQUIRE(run_until(d.loop, [&] { return has(log, "owner message 0 Z"); }));
  CHECK(log == std::vector<std::string>{"owner message 0 C", "owner message 0 Z"});
  owner.detach(*held);
  pool.release(held, true);
}

TEST_CASE_FIXTURE(OneShard,
                  "leg engine: a run's new leg is the owner's: released to its pool, or kept by hand_over") {
  {
    Run runner(log, "SELECT 1");
    runner.release_at_ready = true;
    LegEngine run(&owner, {target_on(pool, 2)}, {}, "a test read", runner);
    runner.engine = &run;
    REQUIRE(owner.size() == 1);  // a new leg of the owner
    run.start();
    CHECK(owner.waiting_pool() == nullptr);  // the run's wait, not the owner's
    REQUIRE(run_until(d.loop, [&] { return pool.counts().idle == 1; }));
    CHECK(owner.backend(0) == nullptr);
    CHECK(run.hand_over()[0].backend == nullptr);
  }
  CHECK_FALSE(owner.in_run(0));
  // Kept: the owner's leg holds the server after the run; the run's counts leave with the Handed.
  log.clear();
  Run runner(log, "SELECT 1");
  LegEngine run(&owner, {target_on(pool, 2)}, {}, "a test read", runner);
  runner.engine = &run;
  REQUIRE(owner.size() == 1);  // the free leg again
  run.start();
  REQUIRE(run_until(d.loop, [&] { return has(log, "run ready 0") && run.backend(0) != nullptr; }));
  run.expect_ready(0, 2);
  run.inject_ready(0, 1);
  const std::vector<LegEngine::Handed> handed = run.hand_over();
  CHECK(handed[0].backend != nullptr);
  CHECK_FALSE(handed[0].borrowed);
  CHECK(handed[0].ready_owed == 2);
  CHECK(owner.backend(0) == handed[0].backend);
  CHECK(owner.ready_owed(0) == 0);
  CHECK_FALSE(owner.injected(0));
  CHECK_FALSE(owner.in_run(0));
  // A second run borrows it owing nothing.
  Run second_runner(log, "SELECT 1");
  LegEngine second(&owner, {target_on(pool, 2)}, {}, "a test read", second_runner);
  CHECK(second.ready_owed(0) == 0);
  CHECK(second.backend(0) == handed[0].backend);
}

TEST_CASE_FIXTURE(OneShard,
                  "leg engine: a borrowed leg's loss goes to the run's runner; the run hands it over lost") {
  owner_server(d, owner, pool, 0);
  Run runner(log, "HANG UP");
  LegEngine run(&owner, {target_on(pool, 0)}, {}, "a test read", runner);
  runner.engine = &run;
  run.start();
  REQUIRE(run_until(d.loop, [&] { return has(log, "run lost 0"); }));
  CHECK(log ==
        std::vector<std::string>{"owner server 0 prologue 0", "run server 0 prologue 0", "run lost 0"});
  CHECK(owner.backend(0) == nullptr);
  const std::vector<LegEngine::Handed> handed = run.hand_over();
  REQUIRE(handed.size() == 1);
  CHECK(handed[0].borrowed);
  CHECK(handed[0].leg == 0);
  CHECK(handed[0].backend == nullptr);  // the session finds it lost
}

TEST_CASE_FIXTURE(OneShard,
                  "leg engine: a run ended inside on_leg_message leaves that message and the rest unread") {
  sw::pool::Backend* held = owner_server(d, owner, pool, 0);
  Run runner(log, "SELECT 1");
  LegEngine run(&owner, {target_on(pool, 0)}, {}, "a test write", runner);
  runner.engine = &run;
  std::vector<LegEngine::Handed> handed;
  runner.at_first_message = [&] { handed = run.hand_over(); };  // as a write that failed ends
  run.start();
  REQUIRE(run_until(d.loop, [&] { return has(log, "run message 0 C"); }));
  REQUIRE(handed.size() == 1);
  CHECK(handed[0].ready_owed == 1);
  CHECK_FALSE(has(log, "run message 0 Z"));  // the run reads no further
  owner.read_pending(0);                     // the session reads what the leg still owes
  REQUIRE(run_until(d.loop, [&] { return has(log, "owner message 0 Z"); }));
  CHECK(log == std::vector<std::string>{"owner server 0 prologue 0", "run server 0 prologue 0",
                                        "run message 0 C", "owner message 0 C", "owner message 0 Z"});
  owner.detach(*held);
  pool.release(held, true);
}

TEST_CASE_FIXTURE(OneShard,
                  "leg engine: the owner's resume leaves a run's held leg held; the run's resumes it") {
  sw::pool::Backend* held = owner_server(d, owner, pool, 0);
  Run runner(log, "SELECT 1");
  runner.hold_first = true;
  LegEngine run(&owner, {target_on(pool, 0)}, {}, "a test read", runner);
  runner.engine = &run;
  run.start();
  REQUIRE(run_until(d.loop, [&] { return has(log, "run held 0"); }));
  owner.resume(0);
  CHECK(run.held(0));
  CHECK_FALSE(has(log, "run message 0 C"));
  run.resume(0);
  REQUIRE(run_until(d.loop, [&] { return has(log, "run ready 0"); }));
  CHECK(log.back() == "run ready 0");
  CHECK_FALSE(has(log, "owner message 0 C"));
  run.hand_over();
  owner.detach(*held);
  pool.release(held, true);
}

TEST_CASE_FIXTURE(
    OneShardWithSettings,
    "leg engine: a free leg a run used is bare again: the owner's next server comes with no prologue") {
  {
    Run runner(log, "SELECT 1");
    LegEngine run(&owner, {target_on(pool, 1, "BEGIN")}, {"SET a = '1';", 7}, "a test read", runner);
    runner.engine = &run;
    run.start();
    REQUIRE(run_until(d.loop, [&] { return has(log, "run ready 0"); }));
    CHECK(log.front() != "run server 0 prologue 0");  // the run's settings and BEGIN
    run.release(0, false);                            // closed: the owner's next server logs in
    run.hand_over();
  }
  REQUIRE(owner.size() == 1);
  CHECK(owner.target(0).bare);
  CHECK(owner.target(0).begin.empty());
  log.clear();
  sw::pool::Backend* next = owner_server(d, owner, pool, 1);
  CHECK(owner.size() == 1);
  CHECK(log == std::vector<std::string>{"owner server 0 prologue 0"});
  CHECK(server.queries().back() == "SELECT 1");  // nothing sent to the owner's server
  owner.detach(*next);
  pool.release(next, true);
}

TEST_CASE("leg engine: a run destroyed mid-read stops; borrowed legs stay the owner's, new ones close") {
  FakeServer first(select_one(200));
  FakeServer second(select_one(1000));  // still running when the run is destroyed
  Deployment d;
  sw::pool::Pool& pool0 = *d.add_pool(first, 1 << 20);
  sw::pool::Pool& pool1 = *d.add_pool(second, 1 << 20);
  std::vector<std::string> log;
  Owner owner_runner(log);
  LegEngine owner({}, {}, "a test transaction", owner_runner);
  sw::pool::Backend* held = owner_server(d, owner, pool0, 0);
  Run runner(log, "SLOW");  // both legs have their servers before leg 0 answers
  auto run = std::make_unique<LegEngine>(
      &owner, std::vector<LegEngine::Target>{target_on(pool0, 0), target_on(pool1, 1)},
      sw::session::ServerState{}, "a test read", runner);
  runner.engine = run.get();
  runner.at_first_message = [&] { run.reset(); };
  run->start();
  REQUIRE(run_until(d.loop, [&] { return run == nullptr; }));
  CHECK(has(log, "run message 0 C"));
  CHECK_FALSE(has(log, "run message 0 Z"));  // the read stopped with the run
  CHECK(owner.size() == 2);
  CHECK_FALSE(owner.in_run(0));
  CHECK_FALSE(owner.in_run(1));
  CHECK(owner.backend(0) == held);
  CHECK(owner.backend(1) == nullptr);
  CHECK(pool1.counts().idle == 0);  // closed, never pooled
  owner.detach(*held);
  pool0.release(held, false);
}

TEST_CASE("leg engine: a borrowed leg that broke the protocol is closed at release, never handed back") {
  FakeServer server(big_row(2000));
  Deployment d;
  sw::pool::Pool& pool = *d.add_pool(server, 1000);
  std::vector<std::string> log;
  Owner owner_runner(log);
  LegEngine owner({}, {}, "a test transaction", owner_runner);
  owner_server(d, owner, pool, 0);
  // The runner drops the violating leg with release(leg, false), as a runner does during its
  // two-phase commit.
  Run runner(log, "SELECT big");
  runner.release_at_violation = true;
  LegEngine run(&owner, {target_on(pool, 0)}, {}, "a test write", runner);
  runner.engine = &run;
  run.start();
  REQUIRE(run_until(d.loop, [&] { return has(log, "run violation 0"); }));
  CHECK_FALSE(has(log, "owner lost 0"));  // the owner finds it lost at the run's end
  CHECK(run.backend(0) == nullptr);
  const std::vector<LegEngine::Handed> handed = run.hand_over();
  REQUIRE(handed.size() == 1);
  CHECK(handed[0].borrowed);
  CHECK(handed[0].backend == nullptr);  // the session finds it lost
  CHECK(owner.backend(0) == nullptr);
  CHECK(pool.counts().idle == 0);
  CHECK(pool.counts().active == 0);
}
