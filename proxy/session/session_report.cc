// Session: what it counts (queries, transactions, latency) and how it looks in SHOW CLIENTS.
#include "session/session.h"

namespace sw::session {

void Session::note_request_start() {
  clock_.request_started_us = stats::monotonic_us();
  clock_.request_wall_us = stats::wall_clock_us();
}

// A ReadyForQuery for the client arrived from the leg's server: one request done, maybe a
// transaction.
void Session::count_request_done() {
  int64_t now = stats::monotonic_us();
  const LegAnswers& leg = txn_.leg;
  stats::PoolTraffic& traffic = active_server().pool().traffic();
  auto label = static_cast<size_t>(clock_.route_label);
  if (clock_.request_started_us != 0) {
    auto took = static_cast<uint64_t>(now - clock_.request_started_us);
    ++traffic.queries[label];
    traffic.query_time_us += took;
    host_.traffic().latency[label].observe_us(took);
    clock_.request_started_us = 0;
  }
  if (leg.server_status == 'I' && !leg.outside_transaction) {
    ++traffic.transactions[label];
    traffic.xact_time_us += static_cast<uint64_t>(now - clock_.xact_started_us);
    clock_.xact_started_us = now;
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
  info.user = profile_.user;
  info.database = profile_.database;
  info.admin = mode_.admin;
  info.addr = stats::parse_endpoint(client_->peer());
  info.local = stats::parse_endpoint(client_->local());
  info.connect_time_us = clock_.connected_at_us;
  info.request_time_us = clock_.request_wall_us != 0 ? clock_.request_wall_us : clock_.connected_at_us;
  info.tls = client_->tls_active();
  info.pinned = describe(pools_.pinned);
  if (auto it = profile_.parameters.find("application_name"); it != profile_.parameters.end())
    info.application_name = it->second;
  *pool = pools_.login;
  if (phase_ != Phase::Ready) {
    info.state = stats::ClientState::Login;
  } else if (txn_.holds_server()) {
    info.state = stats::ClientState::Active;
    if (pool::Backend* server = server_of(txn_.leg)) {  // none: its leg lost it in a run
      info.server = server->id();
      *pool = &server->pool();
    }
  } else if (request_.state == RequestState::WaitingForServer) {
    info.state = stats::ClientState::Waiting;
    if (pool::Pool* waited = legs_.waiting_pool()) *pool = waited;
  } else {
    info.state = stats::ClientState::Idle;
  }
  if (*pool != nullptr) info.shard = (*pool)->target().shard;
  return info;
}

}  // namespace sw::session
