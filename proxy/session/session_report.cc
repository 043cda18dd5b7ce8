// Session: what it counts (queries, transactions, latency) and how it looks in SHOW CLIENTS.
#include "session/session.h"

namespace sw::session {

void Session::note_request_start() {
  request_started_us_ = stats::monotonic_us();
  request_wall_us_ = stats::wall_clock_us();
}

// A ReadyForQuery for the client arrived from backend_: one request done, maybe a transaction.
void Session::count_request_done() {
  int64_t now = stats::monotonic_us();
  stats::PoolTraffic& traffic = backend_->pool().traffic();
  auto label = static_cast<size_t>(route_label_);
  if (request_started_us_ != 0) {
    auto took = static_cast<uint64_t>(now - request_started_us_);
    ++traffic.queries[label];
    traffic.query_time_us += took;
    host_.traffic().latency[label].observe_us(took);
    request_started_us_ = 0;
  }
  if (server_status_ == 'I' && !outside_transaction_) {
    ++traffic.transactions[label];
    traffic.xact_time_us += static_cast<uint64_t>(now - xact_started_us_);
    xact_started_us_ = now;
  }
}

// A fan-out ran one autocommit statement on each of `pools`.
void Session::count_fanout(const std::vector<pool::Pool*>& pools, stats::RouteLabel label,
                           int64_t started_us) {
  auto took = static_cast<uint64_t>(stats::monotonic_us() - started_us);
  auto index = static_cast<size_t>(label);
  for (pool::Pool* pool : pools) {
    stats::PoolTraffic& traffic = pool->traffic();
    ++traffic.queries[index];
    ++traffic.transactions[index];
    traffic.query_time_us += took;
    traffic.xact_time_us += took;
  }
  host_.traffic().latency[index].observe_us(took);
}

stats::ClientInfo Session::report(int worker, const pool::Pool** pool) const {
  stats::ClientInfo info;
  info.id = id();
  info.worker = worker;
  info.user = user_;
  info.database = database_;
  info.admin = admin_;
  info.addr = stats::parse_endpoint(client_->peer());
  info.local = stats::parse_endpoint(client_->local());
  info.connect_time_us = connected_at_us_;
  info.request_time_us = request_wall_us_ != 0 ? request_wall_us_ : connected_at_us_;
  info.tls = client_->tls_active();
  if (auto it = client_parameters_.find("application_name"); it != client_parameters_.end())
    info.application_name = it->second;
  *pool = pool_;
  if (phase_ != Phase::Ready) {
    info.state = stats::ClientState::Login;
  } else if (backend_ != nullptr || fanout_ != nullptr) {
    info.state = stats::ClientState::Active;
    if (backend_ != nullptr) {
      info.server = backend_->id();
      *pool = &backend_->pool();
    }
  } else if (waiting_for_backend_ || held_by_pause_) {
    info.state = stats::ClientState::Waiting;
    if (waiting_pool_ != nullptr && waiting_for_backend_) *pool = waiting_pool_;
  } else {
    info.state = stats::ClientState::Idle;
  }
  if (*pool != nullptr) info.shard = (*pool)->target().shard;
  return info;
}

}  // namespace sw::session
