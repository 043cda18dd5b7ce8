// DirectoryWatcher pieces that need no catalog: the heartbeat period, the router id, the lease
// before any load, and a clean stop while the catalog is unreachable.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "catalog/directory_watcher.h"

using namespace sw::catalog;
using namespace std::chrono_literals;

namespace {

// A loopback port nothing listens on (bound, read back, closed).
int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("heartbeat period: configured, else min(1 s, lease / 4), at least 10 ms") {
  CHECK(heartbeat_interval_for(250ms, 30s) == 250ms);
  CHECK(heartbeat_interval_for(0ms, 30s) == 1000ms);
  CHECK(heartbeat_interval_for(0ms, 2s) == 500ms);
  CHECK(heartbeat_interval_for(0ms, 20ms) == 10ms);
}

TEST_CASE("read lease: max(2 heartbeat intervals, 4 s), at most the directory lease") {
  CHECK(read_lease_for(30s) == 4000ms);
  CHECK(read_lease_for(2s) == 2000ms);
  CHECK(read_lease_for(10s) == 4000ms);
}

TEST_CASE("default router id is host:port:pid") {
  CHECK(default_router_id("db1", 6432, 4242) == "db1:6432:4242");
}

TEST_CASE("unreachable catalog: no directory, lease invalid, stop returns promptly") {
  sw::config::Config cfg;
  cfg.catalog.dsn =
      "host=127.0.0.1 port=" + std::to_string(closed_port()) + " dbname=x user=x connect_timeout=2";
  cfg.shards.push_back({"s0", "dbname=s0", {}});
  cfg.sharding.directory_lease = 200ms;
  int published = 0;
  WatcherOptions opts;
  opts.router_id = "unit-test";
  opts.reconnect_initial = 10ms;
  opts.reconnect_max = 50ms;
  DirectoryWatcher w(
      cfg, [&](std::shared_ptr<const sw::router::Directory>) { ++published; }, opts);
  CHECK(w.router_id() == "unit-test");
  CHECK_FALSE(w.lease_valid(DirectoryWatcher::Clock::now()));
  w.start();
  CHECK(w.wait_for_directory(300ms) == nullptr);
  w.request_refresh();
  CHECK_FALSE(w.connected());
  CHECK_FALSE(w.lease_valid(DirectoryWatcher::Clock::now()));
  auto t0 = std::chrono::steady_clock::now();
  w.stop();
  CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  CHECK(published == 0);
  CHECK(w.current() == nullptr);
  w.stop();  // idempotent
}
