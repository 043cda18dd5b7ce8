// Snapshot: endpoint parsing, state names, clocks and the merge of workers' snapshots.
#include "stats/snapshot.h"

#include <doctest/doctest.h>

#include <string>

using namespace sw::stats;

namespace {

PoolInfo pool(std::string shard, std::string user, int base, uint64_t maxwait_us) {
  PoolInfo p;
  p.shard = std::move(shard);
  p.user = std::move(user);
  p.mode = "transaction";
  p.cl_active = base;
  p.cl_waiting = base + 1;
  p.sv_active = base + 2;
  p.sv_idle = base + 3;
  p.sv_login = base + 4;
  p.maxwait_us = maxwait_us;
  p.traffic.queries[0] = static_cast<uint64_t>(base);
  p.traffic.bytes_sent = static_cast<uint64_t>(base) * 10;
  return p;
}

const PoolInfo* find(const Snapshot& s, const std::string& shard, const std::string& user) {
  for (const auto& p : s.pools) {
    if (p.shard == shard && p.user == user) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("parse_endpoint splits at the last colon") {
  Endpoint v4 = parse_endpoint("127.0.0.1:5432");
  CHECK(v4.addr == "127.0.0.1");
  CHECK(v4.port == 5432);

  // As uv_ip6_name + ":" + port gives it (no brackets).
  Endpoint v6 = parse_endpoint("::1:5432");
  CHECK(v6.addr == "::1");
  CHECK(v6.port == 5432);
  Endpoint v6_full = parse_endpoint("fe80::1ff:fe23:4567:890a:65535");
  CHECK(v6_full.addr == "fe80::1ff:fe23:4567:890a");
  CHECK(v6_full.port == 65535);

  Endpoint no_port = parse_endpoint("localhost");
  CHECK(no_port.addr == "localhost");
  CHECK(no_port.port == 0);
  Endpoint unknown = parse_endpoint("?");  // what net::Connection reports when getpeername fails
  CHECK(unknown.addr == "?");
  CHECK(unknown.port == 0);
  Endpoint empty = parse_endpoint("");
  CHECK(empty.addr.empty());
  CHECK(empty.port == 0);
  Endpoint trailing = parse_endpoint("10.0.0.1:");
  CHECK(trailing.addr == "10.0.0.1");
  CHECK(trailing.port == 0);
}

TEST_CASE("state names") {
  CHECK(client_state_name(ClientState::Login) == "login");
  CHECK(client_state_name(ClientState::Idle) == "idle");
  CHECK(client_state_name(ClientState::Active) == "active");
  CHECK(client_state_name(ClientState::Waiting) == "waiting");
  CHECK(server_state_name(ServerState::Login) == "login");
  CHECK(server_state_name(ServerState::Idle) == "idle");
  CHECK(server_state_name(ServerState::Active) == "active");
}

TEST_CASE("clocks") {
  int64_t wall = wall_clock_us();
  CHECK(wall > 1600000000ll * 1000000);  // after 2020
  int64_t a = monotonic_us();
  int64_t b = monotonic_us();
  CHECK(b >= a);
}

TEST_CASE("PoolInfo::merge sums counts and traffic, maxwait is the max") {
  PoolInfo a = pool("s0", "app", 1, 700);
  a.merge(pool("s0", "app", 10, 300));
  CHECK(a.cl_active == 11);
  CHECK(a.cl_waiting == 13);
  CHECK(a.sv_active == 15);
  CHECK(a.sv_idle == 17);
  CHECK(a.sv_login == 19);
  CHECK(a.maxwait_us == 700);
  CHECK(a.traffic.queries[0] == 11);
  CHECK(a.traffic.bytes_sent == 110);
  a.merge(pool("s0", "app", 0, 2500000));
  CHECK(a.maxwait_us == 2500000);
}

TEST_CASE("Snapshot::merge folds workers together") {
  Snapshot one;
  one.workers = 1;
  one.pools = {pool("s0", "app", 1, 100), pool("s1", "app", 2, 0)};
  one.client_states = {1, 2, 3, 4};
  ClientInfo c1;
  c1.id = 1;
  one.clients.push_back(c1);
  ServerInfo s1;
  s1.id = 11;
  one.servers.push_back(s1);
  one.traffic.count_login(LoginResult::Ok);
  one.traffic.count_backend_error("22012");

  Snapshot two;
  two.workers = 1;
  // same shard + user as one's first pool; same shard, other user; same user, other shard
  two.pools = {pool("s0", "app", 10, 50), pool("s0", "report", 20, 9), pool("s2", "app", 30, 0)};
  two.client_states = {10, 20, 30, 40};
  ClientInfo c2;
  c2.id = 2;
  two.clients.push_back(c2);
  ServerInfo s2;
  s2.id = 12;
  two.servers.push_back(s2);
  two.traffic.count_login(LoginResult::Ok);
  two.traffic.count_backend_error("22003");

  one.merge(two);
  CHECK(one.workers == 2);
  REQUIRE(one.pools.size() == 4);
  const PoolInfo* s0_app = find(one, "s0", "app");
  REQUIRE(s0_app != nullptr);
  CHECK(s0_app->cl_active == 11);
  CHECK(s0_app->sv_login == 19);
  CHECK(s0_app->maxwait_us == 100);
  CHECK(s0_app->traffic.queries[0] == 11);
  const PoolInfo* s0_report = find(one, "s0", "report");
  REQUIRE(s0_report != nullptr);
  CHECK(s0_report->cl_active == 20);
  CHECK(s0_report->maxwait_us == 9);
  const PoolInfo* s1_app = find(one, "s1", "app");
  REQUIRE(s1_app != nullptr);
  CHECK(s1_app->cl_active == 2);
  const PoolInfo* s2_app = find(one, "s2", "app");
  REQUIRE(s2_app != nullptr);
  CHECK(s2_app->cl_active == 30);

  CHECK(one.client_states == std::array<int, kClientStates>{11, 22, 33, 44});
  REQUIRE(one.clients.size() == 2);
  CHECK(one.clients[0].id == 1);
  CHECK(one.clients[1].id == 2);
  REQUIRE(one.servers.size() == 2);
  CHECK(one.servers[1].id == 12);
  CHECK(one.traffic.logins[static_cast<size_t>(LoginResult::Ok)] == 2);
  CHECK(one.traffic.backend_errors.at("22") == 2);
}

TEST_CASE("merging into an empty snapshot copies; merging an empty one changes nothing") {
  Snapshot worker;
  worker.workers = 1;
  worker.pools = {pool("s0", "app", 3, 42)};
  worker.client_states = {0, 1, 0, 2};

  Snapshot total;
  total.merge(worker);
  CHECK(total.workers == 1);
  REQUIRE(total.pools.size() == 1);
  CHECK(total.pools[0].cl_active == 3);
  CHECK(total.pools[0].maxwait_us == 42);
  CHECK(total.client_states == worker.client_states);

  total.merge(Snapshot{});
  CHECK(total.workers == 1);
  REQUIRE(total.pools.size() == 1);
  CHECK(total.pools[0].cl_active == 3);
  CHECK(total.client_states == worker.client_states);
}
