#include "stats/snapshot.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace sw::stats {

std::string_view client_state_name(ClientState state) {
  switch (state) {
    case ClientState::Login: return "login";
    case ClientState::Idle: return "idle";
    case ClientState::Active: return "active";
    case ClientState::Waiting: return "waiting";
  }
  return "?";
}

std::string_view server_state_name(ServerState state) {
  switch (state) {
    case ServerState::Login: return "login";
    case ServerState::Idle: return "idle";
    case ServerState::Active: return "active";
  }
  return "?";
}

int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t monotonic_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Endpoint parse_endpoint(const std::string& host_port) {
  size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return {host_port, 0};
  return {host_port.substr(0, colon), std::atoi(host_port.c_str() + colon + 1)};
}

void PoolInfo::merge(const PoolInfo& other) {
  cl_active += other.cl_active;
  cl_waiting += other.cl_waiting;
  cl_pinned += other.cl_pinned;
  sv_active += other.sv_active;
  sv_idle += other.sv_idle;
  sv_login += other.sv_login;
  maxwait_us = std::max(maxwait_us, other.maxwait_us);
  traffic.merge(other.traffic);
}

void Snapshot::merge(Snapshot other) {
  for (auto& client : other.clients) clients.push_back(std::move(client));
  for (auto& server : other.servers) servers.push_back(std::move(server));
  for (auto& pool : other.pools) {
    auto same = std::find_if(pools.begin(), pools.end(), [&](const PoolInfo& mine) {
      return mine.shard == pool.shard && mine.user == pool.user;
    });
    if (same == pools.end())
      pools.push_back(std::move(pool));
    else
      same->merge(pool);
  }
  for (size_t i = 0; i < kClientStates; ++i) client_states[i] += other.client_states[i];
  traffic.merge(other.traffic);
  workers += other.workers;
}

}  // namespace sw::stats
