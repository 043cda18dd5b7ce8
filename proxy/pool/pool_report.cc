// Pool: what the admin console and the metrics see of it.
#include "net/loop.h"
#include "pool/pool.h"

namespace sw::pool {

stats::PoolInfo Pool::report() const {
  stats::PoolInfo info;
  info.shard = target_.shard;
  info.user = target_.user;
  Counts c = counts();
  info.sv_active = c.active;
  info.sv_idle = c.idle;
  info.sv_login = c.connecting;
  info.maxwait_us = c.max_wait_ms * 1000;
  info.traffic = traffic_;
  info.traffic.bytes_received = closed_bytes_received_;
  info.traffic.bytes_sent = closed_bytes_sent_;
  for (const auto& [raw, backend] : backends_) {
    if (!backend->connection_) continue;
    info.traffic.bytes_received += backend->connection_->bytes_written();
    info.traffic.bytes_sent += backend->connection_->bytes_read();
  }
  return info;
}

void Pool::report_servers(int worker, std::vector<stats::ServerInfo>& out) const {
  for (const auto& [raw, backend] : backends_) {
    stats::ServerInfo server;
    server.id = backend->id();
    server.worker = worker;
    server.user = target_.user;
    server.shard = target_.shard;
    switch (backend->state()) {
      case Backend::State::Idle: server.state = stats::ServerState::Idle; break;
      case Backend::State::Active: server.state = stats::ServerState::Active; break;
      case Backend::State::Closed: continue;
      default: server.state = stats::ServerState::Login; break;
    }
    server.addr = {target_.host, target_.port};
    if (backend->connection_) {
      server.local = stats::parse_endpoint(backend->connection_->local());
      server.tls = backend->connection_->tls_active();
    }
    server.connect_time_us = backend->connected_at_us;
    server.request_time_us = backend->attached_at_us;
    server.remote_pid = static_cast<int>(backend->server_key().pid);
    out.push_back(std::move(server));
  }
}

}  // namespace sw::pool
