// The leg engine against servers that speak the real protocol from message scripts
// (fake_server.h): the configured limit, what reaches the runner, hold and resume, the prologue,
// cancel and release. Real pools and a real event loop.
#include "session/leg_engine.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fake_server.h"
#include "session/cancel_join.h"
#include "session/session_state.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

using sw::Status;
using sw::session::LegEngine;
using sw::test::FakeServer;
using Deployment = sw::test::LoopWithPools;

namespace {

// Records what the engine tells it ("message 0 T", "ready 0", "violation 0 <message>"); sends
// `sql` on each leg after the prologue; releases a leg at its ReadyForQuery and stops the loop
// once every leg is released.
class Recorder : public LegEngine::Runner {
 public:
  Recorder(sw::net::Loop& loop, std::string sql) : loop_(loop), sql_(std::move(sql)) {}
  LegEngine* engine = nullptr;
  std::vector<std::string> events;
  std::vector<int> prologue_owed;
  size_t hold_until_ready = SIZE_MAX;  // this leg is held until leg 0 is ready
  bool cancel_before_release = false;
  // At the first ReadyForQuery, before that leg is released, or once every leg has its server
  // if one still waited then: the client's cancel through cancel_client_statement, with every
  // leg but `not_cancellable` cancellable.
  bool cancel_client_at_first_ready = false;
  size_t not_cancellable = SIZE_MAX;
  size_t client_cancels_sent = 0;
  bool stop_at_no_server = true;
  bool client_cancel_delivered = false;
  char refuse_type = 0;          // a message of this type is refused (Runner::refuse)
  bool refusal_handled = false;  // on_leg_refused's answer: the runner deals with it

  void on_leg_server(size_t leg, std::string prologue) override {
    prologue_owed.push_back(engine->ready_owed(leg));
    owed_.resize(engine->size());
    owed_[leg] = engine->ready_owed(leg) + 1;
    sw::wire::encode_query(prologue, sql_);
    engine->write(leg, prologue);
    if (cancel_pending_ && every_leg_has_server()) cancel_client();
  }
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override {
    if (leg == hold_until_ready && !zero_ready_) {
      events.push_back("held " + std::to_string(leg) + " " + message.type);
      engine->hold(leg);
      return true;
    }
    std::string event = "message " + std::to_string(leg) + " " + message.type;
    if (message.type == 'D') event += " " + std::to_string(message.frame.size());  // whole
    events.push_back(event);
    if (message.type == refuse_type) return refuse(leg, Status::client("22000", "not this one"));
    return true;
  }
  bool on_leg_refused(size_t leg, const Status& why) override {
    events.push_back("refused " + std::to_string(leg) + " " + why.sqlstate + " " + why.message);
    if (!refusal_handled) return false;
    engine->release(leg, false);
    end_if_released();
    return true;
  }
  void on_leg_ready(size_t leg) override {
    if (--owed_[leg] > 0) return;
    events.push_back("ready " + std::to_string(leg));
    if (leg == 0) zero_ready_ = true;
    if (cancel_before_release) engine->cancel(leg);
    if (std::exchange(cancel_client_at_first_ready, false)) {
      if (every_leg_has_server()) {
        cancel_client();
      } else {
        cancel_pending_ = true;  // a leg still waits for its server: nothing to cancel there yet
      }
    }
    engine->release(leg, engine->status(leg) == 'I');
    if (leg == 0 && hold_until_ready < engine->size()) engine->resume(hold_until_ready);
    end_if_released();
  }
  void on_leg_violation(size_t leg, const Status& why) override {
    events.push_back("violation " + std::to_string(leg) + " " + why.sqlstate + " " + why.message);
    engine->release(leg, false);
    end_if_released();
  }
  void on_leg_lost(size_t leg, const Status& why) override {
    events.push_back("lost " + std::to_string(leg) + " " + why.message);
    end_if_released();
  }
  bool cancellable(size_t leg) const override { return leg != not_cancellable; }
  void on_no_server(const Status& why) override {
    events.push_back("no server " + why.message);
    if (stop_at_no_server) loop_.stop();
  }

 private:
  bool every_leg_has_server() const {
    for (size_t i = 0; i < engine->size(); ++i) {
      if (engine->waiting(i)) return false;
    }
    return true;
  }
  void cancel_client() {
    cancel_pending_ = false;
    sw::session::CancelJoin join([this] { client_cancel_delivered = true; });
    client_cancels_sent = engine->cancel_client_statement(join);
    join.seal();
  }
  void end_if_released() {
    for (size_t i = 0; i < engine->size(); ++i) {
      if (engine->backend(i) != nullptr || engine->waiting(i)) return;
    }
    loop_.stop();
  }
  sw::net::Loop& loop_;
  std::string sql_;
  std::vector<int> owed_;
  bool zero_ready_ = false;
  bool cancel_pending_ = false;
};

bool has(const std::vector<std::string>& events, const std::string& prefix) {
  for (const std::string& e : events)
    if (e.rfind(prefix, 0) == 0) return true;
  return false;
}

FakeServer::Script big_row(size_t bytes) {
  return [bytes](const std::string& sql) {
    return sql.rfind("SELECT", 0) == 0 ? FakeServer::rows({std::string(bytes, 'x')})
                                       : FakeServer::command("SET");
  };
}

}  // namespace

TEST_CASE(
    "leg engine: a server message over the pool's max_message_size is a violation, never the runner's") {
  FakeServer server(big_row(2000));
  Deployment d;
  Recorder runner(d.loop, "SELECT big");
  LegEngine engine(d.targets({&server}, 1000), {}, "a test read", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  CHECK(has(runner.events, "message 0 T"));
  CHECK_FALSE(has(runner.events, "message 0 D"));
  REQUIRE(has(runner.events, "violation 0 08P01 shard s0 sent an invalid message: invalid message length"));
  CHECK(has(runner.events,
            "violation 0 08P01 shard s0 sent an invalid message: invalid message length 2010 "
            "for message type 'D' (limit 1000)"));
  CHECK(d.pools[0]->counts().idle == 0);  // a hostile server is closed, never pooled
}

TEST_CASE("leg engine: under the limit the row reaches the runner, and the server goes back idle") {
  FakeServer server(big_row(2000));
  Deployment d;
  Recorder runner(d.loop, "SELECT big");
  LegEngine engine(d.targets({&server}, 4000), {}, "a test read", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  CHECK(runner.events ==
        std::vector<std::string>{"message 0 T", "message 0 D 2011", "message 0 C", "message 0 Z", "ready 0"});
  CHECK(d.pools[0]->counts().idle == 1);
}

TEST_CASE("leg engine: a refused message is consumed, then the runner's error or a violation") {
  for (const bool handled : {false, true}) {
    CAPTURE(handled);
    FakeServer server(big_row(10));
    Deployment d;
    Recorder runner(d.loop, "SELECT big");
    runner.refuse_type = 'D';
    runner.refusal_handled = handled;
    LegEngine engine(d.targets({&server}, 4000), {}, "a test read", runner);
    runner.engine = &engine;
    engine.start();
    REQUIRE(d.run());
    std::vector<std::string> expected{"message 0 T", "message 0 D 21", "refused 0 22000 not this one"};
    if (!handled) expected.emplace_back("violation 0 08P01 shard s0 sent an invalid message: not this one");
    CHECK(runner.events == expected);  // read no further: the rest never reaches the runner
  }
}

TEST_CASE("leg engine: ParameterStatus and NotificationResponse are kept from the runner") {
  FakeServer server([](const std::string&) {
    std::string out;
    sw::wire::encode_parameter_status(out, "TimeZone", "UTC");
    sw::wire::MessageWriter(out).begin('A').int32(9).cstr("channel").cstr("payload").end();
    return out + FakeServer::command("UPDATE 1");
  });
  Deployment d;
  Recorder runner(d.loop, "UPDATE t SET a = 1");
  LegEngine engine(d.targets({&server}, 1 << 20), {}, "a test write", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  CHECK(runner.events == std::vector<std::string>{"message 0 C", "message 0 Z", "ready 0"});
}

TEST_CASE("leg engine: a held leg is not read until resume presents the same message again") {
  FakeServer first([](const std::string& sql) {  // slow: leg 1 answers first
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return big_row(10)(sql);
  });
  FakeServer second(big_row(20));
  Deployment d;
  Recorder runner(d.loop, "SELECT v");
  runner.hold_until_ready = 1;
  LegEngine engine(d.targets({&first, &second}, 1 << 20), {}, "a test read", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  // Leg 1's first message was held (before leg 0 answered at all), then taken after leg 0
  // ended, followed by the rest in order.
  std::vector<std::string> after_ready;
  bool seen_ready = false;
  for (const std::string& e : runner.events) {
    if (e == "ready 0") seen_ready = true;
    if (seen_ready && e.rfind("held", 0) != 0) after_ready.push_back(e);
  }
  CHECK(has(runner.events, "held 1 T"));
  CHECK(after_ready == std::vector<std::string>{"ready 0", "message 1 T", "message 1 D 31", "message 1 C",
                                                "message 1 Z", "ready 1"});
}

TEST_CASE("leg engine: the prologue brings a server to the session's settings, then the target's begin") {
  FakeServer server(big_row(1));
  Deployment d;
  Recorder runner(d.loop, "SELECT 1");
  LegEngine engine(d.targets({&server}, 1 << 20, "BEGIN ISOLATION LEVEL REPEATABLE READ"),
                   {"SET a = '1';", 7}, "a test read", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  CHECK(runner.prologue_owed == std::vector<int>{2});
  CHECK(server.queries() ==
        std::vector<std::string>{std::string(sw::session::SessionState::kResetSql) + "SET a = '1';",
                                 "BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT 1"});
}

TEST_CASE("leg engine: a cancelled server gets the CancelRequest and is closed, not pooled") {
  FakeServer server(big_row(1));
  Deployment d;
  Recorder runner(d.loop, "SELECT 1");
  runner.cancel_before_release = true;
  LegEngine engine(d.targets({&server}, 1 << 20), {}, "a test read", runner);
  runner.engine = &engine;
  engine.start();
  REQUIRE(d.run());
  CHECK(engine.cancelled(0));
  CHECK(d.pools[0]->counts().idle == 0);
  for (int i = 0; i < 200 && server.cancels() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(server.cancels() == 1);
}

TEST_CASE("leg engine: the client's cancel goes to every leg the runner calls cancellable, joined") {
  FakeServer quick(big_row(1));
  FakeServer slow([](const std::string& sql) {  // still running when leg 0 is ready
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return big_row(1)(sql);
  });
  Deployment d;
  Recorder runner(d.loop, "SELECT 1");
  runner.cancel_client_at_first_ready = true;
  runner.not_cancellable = 0;
  LegEngine engine(d.targets({&quick, &slow}, 1 << 20), {}, "a test read", runner);
  runner.engine = &engine;
  CHECK(static_cast<const LegEngine::Runner&>(runner).engine() == &engine);  // how the session finds the legs
  engine.start();
  REQUIRE(d.run());
  CHECK(runner.client_cancels_sent == 1);
  CHECK_FALSE(engine.cancelled(0));
  CHECK(engine.cancelled(1));
  CHECK(d.pools[0]->counts().idle == 1);  // not cancelled: pooled
  CHECK(d.pools[1]->counts().idle == 0);  // cancelled: closed
  for (int i = 0; i < 200 && slow.cancels() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(slow.cancels() == 1);
  CHECK(quick.cancels() == 0);
}

TEST_CASE(
    "leg engine: the client's cancel while a leg waits for its server fails it with 57014, never started") {
  FakeServer first(big_row(1));
  FakeServer second(big_row(1));
  Deployment d;
  Recorder runner(d.loop, "SELECT 1");
  runner.stop_at_no_server = false;  // run on: the servers logging in must not start the legs
  LegEngine engine(d.targets({&first, &second}, 1 << 20), {}, "a test read", runner);
  runner.engine = &engine;
  engine.start();  // new pools: both legs wait while their servers log in
  REQUIRE(engine.waiting(0));
  REQUIRE(engine.waiting(1));
  sw::session::CancelJoin join([] {});
  const size_t sent = engine.cancel_client_statement(join);
  join.seal();
  CHECK(sent == 0);  // no server to send a CancelRequest to
  CHECK(runner.events == std::vector<std::string>{"no server canceling statement due to user request"});
  CHECK_FALSE(engine.waiting(0));
  CHECK_FALSE(engine.waiting(1));
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    d.loop.stop();
  });
  d.loop.run();
  stopper.join();
  // The servers that were logging in went to their pools unused.
  CHECK(runner.events.size() == 1);
  CHECK(engine.backend(0) == nullptr);
  CHECK(engine.backend(1) == nullptr);
  CHECK(first.queries().empty());
  CHECK(second.queries().empty());
  CHECK(d.pools[0]->counts().idle == 1);
  CHECK(d.pools[1]->counts().idle == 1);
}
