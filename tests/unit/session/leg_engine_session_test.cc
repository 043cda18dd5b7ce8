// The session's own legs on a leg engine (leg_engine_session.h) against servers that speak the
// real protocol from message scripts (fake_server.h): servers adopted and detached, every message
// to a runner that takes them all, the session's wait for a server as a leg's. Real pools and a
// real event loop.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fake_server.h"
#include "session/leg_engine.h"
#include "session/server_wait.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

using sw::Status;
using sw::session::LegEngine;
using sw::test::FakeServer;
using Deployment = sw::test::LoopWithPools;

namespace {

// The session's way of using an engine: servers it took itself are adopted as legs, every
// message reaches it (ParameterStatus and notifications too), it consumes each itself and then
// may let go of the server (detach) and give it back.
class Adopter : public LegEngine::Runner {
 public:
  explicit Adopter(sw::net::Loop& loop) : loop_(loop) {}
  LegEngine* engine = nullptr;
  std::vector<std::string> events;

  // A server the session waited for (wait_for): it arrives with no prologue.
  void on_leg_server(size_t leg, std::string prologue) override {
    events.push_back("server " + std::to_string(leg) + " prologue " + std::to_string(prologue.size()));
    engine->send_query(leg, "UPDATE t SET a = 1");
  }
  // Consumes each message itself (as the session does), then lets go of the server after a
  // ReadyForQuery.
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override {
    events.push_back("message " + std::to_string(leg) + " " + message.type);
    const char type = message.type;
    engine->consume(leg);
    events.push_back("consumed " + std::to_string(leg) + " " + type);
    if (type != 'Z') return true;
    sw::pool::Backend* backend = engine->backend(leg);
    engine->detach(*backend);
    backend->pool().release(backend, true);
    loop_.stop();
    return true;
  }
  void on_leg_ready(size_t leg) override { events.push_back("ready " + std::to_string(leg)); }
  bool takes_async_messages() const override { return true; }
  void on_leg_violation(size_t leg, const Status&) override {
    events.push_back("violation " + std::to_string(leg));
  }
  void on_leg_lost(size_t leg, const Status&) override { events.push_back("lost " + std::to_string(leg)); }
  void on_no_server(const Status&) override { events.push_back("no server"); }

 private:
  sw::net::Loop& loop_;
};

}  // namespace

TEST_CASE("leg engine: an adopted server is read by the same loop, every message to a runner taking them") {
  FakeServer server([](const std::string&) {
    std::string out;
    sw::wire::encode_parameter_status(out, "TimeZone", "UTC");
    sw::wire::MessageWriter(out).begin('A').int32(9).cstr("channel").cstr("payload").end();
    return out + FakeServer::command("UPDATE 1");
  });
  Deployment d;
  sw::pool::Pool& pool = *d.add_pool(server, 1 << 20);
  Adopter runner(d.loop);
  LegEngine engine({}, {}, "a test transaction", runner);
  runner.engine = &engine;
  size_t leg = SIZE_MAX;
  auto adopt = [&](sw::pool::Backend* backend) {
    leg = engine.adopt(*backend, 3);
    engine.send_query(leg, "UPDATE t SET a = 1");
  };
  sw::session::ServerWait wait(adopt, [&](const Status&) { d.loop.stop(); });
  if (sw::pool::Backend* backend = wait.acquire(pool, 1)) adopt(backend);
  REQUIRE(d.run());
  CHECK(leg == 0);
  CHECK(engine.target(0).index == 3);
  CHECK(engine.shard(0) == "s0");
  // A message the runner consumed itself goes to no other call (no on_leg_ready).
  CHECK(runner.events == std::vector<std::string>{"message 0 S", "consumed 0 S", "message 0 A",
                                                  "consumed 0 A", "message 0 C", "consumed 0 C",
                                                  "message 0 Z", "consumed 0 Z"});
  // Detached: the engine holds nothing, the server went back; the next one adopted takes leg 0.
  CHECK(engine.backend(0) == nullptr);
  CHECK(pool.counts().idle == 1);
  sw::pool::Backend* again = wait.acquire(pool, 1);
  REQUIRE(again != nullptr);
  CHECK(engine.adopt(*again, 1) == 0);
  CHECK(engine.size() == 1);
  CHECK(engine.backend(0) == again);
  engine.detach(*again);
  CHECK(engine.backend(0) == nullptr);
  pool.release(again, true);
}

TEST_CASE("leg engine: the session's wait for a server is a leg's, the server arriving bare") {
  FakeServer server([](const std::string&) { return FakeServer::command("UPDATE 1"); });
  Deployment d;
  sw::pool::Pool& pool = *d.add_pool(server, 1 << 20);
  Adopter runner(d.loop);
  LegEngine engine({}, {"SET a = '1';", 7}, "a test transaction", runner);
  runner.engine = &engine;
  REQUIRE(engine.wait_for(pool, 2, 7) == nullptr);  // a new pool: the server logs in first
  CHECK(engine.waiting(0));
  CHECK(engine.waiting_pool() == &pool);
  REQUIRE(d.run());
  CHECK(runner.events.front() == "server 0 prologue 0");
  CHECK(runner.events.back() == "consumed 0 Z");
  CHECK(engine.target(0).index == 2);
  CHECK(server.queries() ==
        std::vector<std::string>{"UPDATE t SET a = 1"});  // no settings: the session's job
  CHECK(engine.waiting_pool() == nullptr);
  // Now one is idle: returned at once, held by the shard's leg already (adopt finds it there).
  sw::pool::Backend* idle = engine.wait_for(pool, 2, 7);
  REQUIRE(idle != nullptr);
  CHECK(engine.backend(0) == idle);
  CHECK(engine.adopt(*idle, 2) == 0);
  CHECK(engine.size() == 1);
  engine.detach(*idle);
  CHECK(engine.backend(0) == nullptr);
  pool.release(idle, true);
}
