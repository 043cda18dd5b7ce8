// What one worker reports about itself, taken on its own thread; the proxy merges the workers'
// snapshots. The admin console renders them as tables and the metrics exposer as metrics.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stats/traffic.h"

namespace sw::stats {

enum class ClientState : uint8_t { Login, Idle, Active, Waiting };
constexpr size_t kClientStates = 4;
std::string_view client_state_name(ClientState state);

enum class ServerState : uint8_t { Login, Idle, Active };
constexpr size_t kServerStates = 3;
std::string_view server_state_name(ServerState state);

// Microseconds since the Unix epoch.
int64_t wall_clock_us();
// Microseconds on a clock that never jumps (for durations).
int64_t monotonic_us();

struct Endpoint {
  std::string addr;
  int port = 0;
};
// Splits "host:port" (as net::Connection reports addresses).
Endpoint parse_endpoint(const std::string& host_port);

struct ClientInfo {
  uint64_t id = 0;
  int worker = 0;
  std::string user;
  std::string database;
  ClientState state = ClientState::Login;
  Endpoint addr;
  Endpoint local;
  int64_t connect_time_us = 0;  // Unix time
  int64_t request_time_us = 0;  // last request
  uint64_t wait_us = 0;         // how long it has been waiting for a server
  bool tls = false;
  std::string application_name;
  uint64_t server = 0;  // linked server id, 0 = none
  std::string shard;    // of the linked server, or the pool it waits for / logged in with
  bool admin = false;
  std::string pinned;  // transaction pooling: what keeps the client on its servers, "" when nothing
};

struct ServerInfo {
  uint64_t id = 0;
  int worker = 0;
  std::string user;
  std::string shard;
  ServerState state = ServerState::Login;
  Endpoint addr;
  Endpoint local;
  int64_t connect_time_us = 0;
  int64_t request_time_us = 0;
  int remote_pid = 0;
  bool tls = false;
  uint64_t client = 0;  // linked client id, 0 = none
};

struct PoolInfo {
  std::string shard;
  std::string user;
  std::string mode;
  int cl_active = 0, cl_waiting = 0;
  int cl_pinned = 0;  // of cl_active: clients pinned to their servers (transaction pooling)
  int sv_active = 0, sv_idle = 0, sv_login = 0;
  uint64_t maxwait_us = 0;
  PoolTraffic traffic;
  void merge(const PoolInfo& other);
};

struct Snapshot {
  // Client and server lists are filled only when asked for (they are large at 10k clients).
  std::vector<ClientInfo> clients;
  std::vector<ServerInfo> servers;
  std::vector<PoolInfo> pools;  // one per (shard, user)
  std::array<int, kClientStates> client_states{};
  WorkerTraffic traffic;
  int workers = 0;

  // Folds another worker's snapshot in; pools with the same shard and user are summed.
  void merge(Snapshot other);
};

}  // namespace sw::stats
