// ServerWait, the one pool::Pool::Waiter of the session and the leg engine, against a real pool of
// servers that speak the real protocol (fake_server.h) on a real event loop: the pool's answer
// comes once, after the wait is over; cancel and the destructor stop it; the pool's timeout fails it.
#include "session/server_wait.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "fake_server.h"
#include "net/timer.h"

using sw::Status;
using sw::session::ServerWait;
using sw::test::FakeServer;

namespace {

FakeServer::Script any_answer() {
  return [](const std::string&) { return FakeServer::command("SELECT 1"); };
}

// A pool of one server on `server`, failing waits after `wait_timeout_ms`.
struct OnePool {
  OnePool(const FakeServer& server, uint64_t wait_timeout_ms) {
    sw::pool::BackendTarget target;
    target.shard = "s0";
    target.host = "127.0.0.1";
    target.port = server.port();
    target.dbname = "app";
    target.user = "app";
    sw::pool::PoolSettings settings;
    settings.size = 1;
    settings.query_wait_timeout_ms = wait_timeout_ms;
    pool = std::make_unique<sw::pool::Pool>(d.loop, target, settings, std::make_shared<sw::pool::Budget>(1));
  }
  sw::test::LoopWithPools d;  // its loop and watchdog
  std::unique_ptr<sw::pool::Pool> pool;
};

// Records the pool's answers ("ready", "failed <sqlstate> <message>"); stops the loop at each
// (a loop runs once).
struct Answers {
  explicit Answers(sw::net::Loop& on) : loop(on) {}
  sw::net::Loop& loop;
  std::vector<std::string> seen;
  sw::pool::Backend* backend = nullptr;
  bool waiting_in_callback = true;
  bool stop_on_ready = true;
  ServerWait wait{[this](sw::pool::Backend* b) {
                    seen.push_back("ready");
                    backend = b;
                    waiting_in_callback = wait.waiting();
                    if (stop_on_ready) loop.stop();
                  },
                  [this](const Status& why) {
                    seen.push_back("failed " + why.sqlstate + " " + why.message);
                    waiting_in_callback = wait.waiting();
                    loop.stop();
                  }};
};

}  // namespace

TEST_CASE("server wait: the pool's new server comes once, the wait over; an idle one comes at once") {
  FakeServer server(any_answer());
  OnePool p(server, 5000);
  Answers a(p.d.loop);
  CHECK(a.wait.acquire(*p.pool, 0) == nullptr);
  CHECK(a.wait.waiting());
  CHECK(a.wait.pool() == p.pool.get());
  REQUIRE(p.d.run());
  REQUIRE(a.seen == std::vector<std::string>{"ready"});
  CHECK_FALSE(a.waiting_in_callback);
  CHECK(a.wait.pool() == nullptr);
  p.pool->release(a.backend, true);
  CHECK(a.wait.acquire(*p.pool, 0) == a.backend);  // idle: no wait, no callback
  CHECK_FALSE(a.wait.waiting());
  CHECK(a.seen.size() == 1);
  p.pool->release(a.backend, true);
}

TEST_CASE("server wait: the pool's timeout fails the wait with 57014 naming the shard") {
  FakeServer server(any_answer());
  OnePool p(server, 150);
  Answers holder(p.d.loop);  // gets the pool's one server and keeps it
  holder.stop_on_ready = false;
  Answers a(p.d.loop);
  CHECK(holder.wait.acquire(*p.pool, 0) == nullptr);
  CHECK(a.wait.acquire(*p.pool, 0) == nullptr);
  REQUIRE(p.d.run());
  CHECK(holder.seen == std::vector<std::string>{"ready"});
  REQUIRE(a.seen.size() == 1);
  CHECK(a.seen[0].rfind("failed 57014 no server connection to shard s0", 0) == 0);
  CHECK_FALSE(a.waiting_in_callback);
  CHECK(p.pool->counts().waiting == 0);
  p.pool->release(holder.backend, true);
}

TEST_CASE("server wait: cancel and the destructor stop the wait; the server goes idle, nobody is called") {
  FakeServer server(any_answer());
  OnePool p(server, 5000);
  Answers a(p.d.loop);
  CHECK(a.wait.acquire(*p.pool, 0) == nullptr);
  a.wait.cancel();
  CHECK_FALSE(a.wait.waiting());
  CHECK(p.pool->counts().waiting == 0);
  {
    Answers gone(p.d.loop);
    CHECK(gone.wait.acquire(*p.pool, 0) == nullptr);
    CHECK(p.pool->counts().waiting == 1);
  }
  CHECK(p.pool->counts().waiting == 0);
  sw::net::Timer poll(p.d.loop);
  poll.start(10, 10, [&] {
    if (p.pool->counts().idle == 1) p.d.loop.stop();
  });
  REQUIRE(p.d.run());  // the server the waits asked for logged in and went idle
  CHECK(a.seen.empty());
}
