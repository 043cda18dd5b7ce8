// Worker: what the admin console and the metrics ask of it. Every post_* runs on the worker's
// own thread, so the data path's plain counters are read without locks.
#include <algorithm>
#include <map>

#include "app/worker.h"
#include "common/log.h"
#include "parser/analyze.h"

namespace sw::app {

void Worker::set_console_host(std::unique_ptr<admin::ConsoleHost> host) {
  console_host_ = std::move(host);
  console_ = std::make_unique<admin::Console>(*console_host_);
}

void Worker::admin_command(std::string_view sql, std::function<void(std::string)> reply) {
  console_->execute(sql, reply);
}

bool Worker::hold_if_paused(session::Session* session) {
  if (!paused_.load()) return false;
  if (std::find(held_.begin(), held_.end(), session) == held_.end()) held_.push_back(session);
  return true;
}

bool Worker::queue_for_cutover(session::Session* session) {
  if (cutover_queued_.fetch_add(1) >= config_->cutover.queue_max) {
    cutover_queued_.fetch_sub(1);
    return false;
  }
  cutover_queue_.push_back(session);
  return true;
}

void Worker::dequeue_from_cutover(session::Session* session) {
  auto it = std::find(cutover_queue_.begin(), cutover_queue_.end(), session);
  if (it == cutover_queue_.end()) return;
  cutover_queue_.erase(it);
  cutover_queued_.fetch_sub(1);
}

void Worker::post_resume() {
  loop_.post([this] {
    std::vector<session::Session*> held;
    held.swap(held_);
    for (session::Session* s : held) {
      if (sessions_.count(s) != 0) s->resume_after_pause();
    }
  });
}

void Worker::post_count_busy(std::function<void(int)> done) {
  loop_.post([this, done = std::move(done)] {
    int busy = 0;
    for (const auto& [raw, owned] : sessions_) busy += raw->holds_server() ? 1 : 0;
    done(busy);
  });
}

void Worker::post_kill_client(uint64_t id, std::function<void(bool)> done) {
  loop_.post([this, id, done = std::move(done)] {
    for (const auto& [raw, owned] : sessions_) {
      if (raw->id() != id) continue;
      LOG_INFO("client=c%llu killed by the admin console", (unsigned long long)id);
      raw->terminate(
          Status::proxy("57P01", "terminating connection due to administrator command (KILL_CLIENT)"));
      done(true);
      return;
    }
    done(false);
  });
}

void Worker::post_reconnect() {
  loop_.post([this] {
    for (auto& [key, entry] : pools_) entry.pool->retire();
  });
}

void Worker::post_snapshot(bool lists, std::function<void(stats::Snapshot)> done) {
  loop_.post([this, lists, done = std::move(done)] { done(snapshot(lists)); });
}

stats::Snapshot Worker::snapshot(bool lists) {
  stats::Snapshot snap;
  snap.workers = 1;
  snap.traffic = traffic_;
  parser::CacheStats cache = parser::cache_stats();
  snap.traffic.parse_cache_hits = cache.exact_hits + cache.normalized_hits;
  snap.traffic.parse_cache_misses = cache.misses;
  std::map<const pool::Pool*, stats::PoolInfo> pools;
  for (const auto& [key, entry] : pools_) {
    pools[entry.pool.get()] = entry.pool->report();
    if (lists) entry.pool->report_servers(index_, snap.servers);
  }
  std::map<uint64_t, uint64_t> client_of_server;
  for (const auto& [raw, owned] : sessions_) {
    const pool::Pool* pool = nullptr;
    stats::ClientInfo client = raw->report(index_, &pool);
    ++snap.client_states[static_cast<size_t>(client.state)];
    snap.traffic.client_bytes_received += raw->client_bytes_read();
    snap.traffic.client_bytes_sent += raw->client_bytes_written();
    auto it = pool != nullptr ? pools.find(pool) : pools.end();
    if (it != pools.end() && client.state == stats::ClientState::Waiting)
      ++it->second.cl_waiting;
    else if (it != pools.end() && client.state != stats::ClientState::Login)
      ++it->second.cl_active;
    if (it != pools.end() && !client.pinned.empty()) ++it->second.cl_pinned;
    if (client.server != 0) client_of_server[client.server] = client.id;
    if (lists) snap.clients.push_back(std::move(client));
  }
  for (auto& server : snap.servers) {
    if (auto it = client_of_server.find(server.id); it != client_of_server.end()) server.client = it->second;
  }
  for (auto& [pool, info] : pools) snap.pools.push_back(std::move(info));
  // Several pools of one worker may serve the same shard and user (one retired by a reload).
  stats::Snapshot merged;
  merged.merge(std::move(snap));
  return merged;
}

}  // namespace sw::app
