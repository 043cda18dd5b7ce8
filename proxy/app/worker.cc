#include "app/worker.h"

#include <algorithm>

#include "app/cancel_registry.h"
#include "common/log.h"
#include "net/connection.h"
#include "parser/analyze.h"
#include "wire/messages.h"

namespace sw::app {
namespace {

uint64_t pack(wire::CancelKey key) { return (uint64_t{key.pid} << 32) | key.secret; }

uint64_t to_ms(config::Duration d) { return static_cast<uint64_t>(d.count()); }

bool same_login(const pool::BackendTarget& a, const pool::BackendTarget& b) {
  return a.key() == b.key() && a.password == b.password && a.sslrootcert == b.sslrootcert;
}

}  // namespace

Worker::Worker(int index, std::shared_ptr<const config::Config> config, CancelRegistry& cancels,
               std::atomic<int>& client_count, std::shared_ptr<net::TlsContext> tls,
               std::shared_ptr<const router::Directory> directory, DirectoryAccess directory_access,
               pool::BudgetRegistry& budgets, const std::atomic<bool>& paused,
               std::atomic<int>& cutover_queued)
    : index_(index),
      config_(std::move(config)),
      cancels_(cancels),
      client_count_(client_count),
      tls_(std::move(tls)),
      directory_(std::move(directory)),
      directory_access_(std::move(directory_access)),
      budgets_(budgets),
      paused_(paused),
      cutover_queued_(cutover_queued) {
  // The config was validated at load; a rule it cannot express is reported there.
  if (auto rules =
          router::RoutingRules::from_config(config_->sharding, config_->file, !config_->catalog.dsn.empty()))
    rules_ = std::move(*rules);
}

Worker::~Worker() {
  join();
  sessions_.clear();
  pools_.clear();
  listener_.reset();
}

Status Worker::listen() {
  listener_ = std::make_unique<net::Listener>(
      loop_, [this](std::unique_ptr<net::Connection> c) { accept(std::move(c)); });
  return listener_->listen(config_->listen.host, config_->listen.port, /*reuse_port=*/true);
}

void Worker::start_thread(std::function<void()> on_exit) {
  thread_ = std::thread([this, on_exit = std::move(on_exit)] {
    parser::set_cache_capacity(static_cast<size_t>(config_->statement_cache));
    loop_.run();
    parser::CacheStats stats = parser::cache_stats();  // this thread's statement caches
    uint64_t lookups = stats.exact_hits + stats.normalized_hits + stats.misses;
    LOG_INFO("worker=%d parse cache: %llu exact hits, %llu normalized hits, %llu misses (hit rate %.1f%%)",
             index_, (unsigned long long)stats.exact_hits, (unsigned long long)stats.normalized_hits,
             (unsigned long long)stats.misses,
             lookups ? 100.0 * static_cast<double>(stats.exact_hits + stats.normalized_hits) / lookups : 0.0);
    on_exit();
  });
}

void Worker::join() {
  if (thread_.joinable()) thread_.join();
}

void Worker::accept(std::unique_ptr<net::Connection> connection) {
  if (shutting_down_) return;
  if (client_count_.fetch_add(1) >= std::min(config_->listen.max_client_connections, client_cap_)) {
    client_count_.fetch_sub(1);
    std::string out;
    wire::encode_error(out, "FATAL", "53300",
                       "sorry, too many clients already (listen.max_client_connections)");
    LOG_WARN("client=c%llu refused: max_client_connections reached", (unsigned long long)connection->id());
    connection->write(out);
    connection->close_after_flush();  // a few bytes: written at once, then closed
    return;
  }
  auto session = std::make_unique<session::Session>(*this, std::move(connection));
  session::Session* raw = session.get();
  sessions_.emplace(raw, std::move(session));
}

void Worker::session_closed(session::Session* session) {
  // Deleting now would destroy the session inside its own callback.
  loop_.post([this, session] {
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    traffic_.client_bytes_received += session->client_bytes_read();
    traffic_.client_bytes_sent += session->client_bytes_written();
    held_.erase(std::remove(held_.begin(), held_.end(), session), held_.end());
    sessions_.erase(it);
    client_count_.fetch_sub(1);
    stop_when_idle();
  });
}

Result<pool::BackendTarget> Worker::target_for(const config::Config& config, const std::string& user,
                                               const std::string& shard_name) const {
  const config::Shard* shard = config.find_shard(shard_name);
  if (shard == nullptr) return Status::proxy("58000", "shard " + shard_name + " is not in the configuration");
  pool::BackendTarget target;
  target.shard = shard->name;
  target.host = shard->conn.host;
  target.port = shard->conn.port;
  target.dbname = shard->conn.dbname;
  target.sslmode = shard->conn.sslmode;
  target.sslrootcert = shard->conn.sslrootcert;
  if (!shard->conn.user.empty()) {
    // The DSN names the login: every client shares it.
    target.user = shard->conn.user;
    target.password = shard->conn.password;
  } else {
    const config::User* u = config.auth.find(user);
    target.user = user;
    target.password = u ? u->password : std::string();
  }
  return target;
}

pool::PoolSettings Worker::pool_settings() const {
  const config::Pool& p = config_->pool;
  pool::PoolSettings s;
  s.size = p.size;
  s.idle_timeout_ms = to_ms(p.idle_timeout);
  s.query_wait_timeout_ms = to_ms(p.query_wait_timeout);
  s.server_lifetime_ms = to_ms(p.server_lifetime);
  s.connect_timeout_ms = to_ms(p.server_connect_timeout);
  s.max_message_size = config_->max_message_size;
  return s;
}

pool::Pool* Worker::pool_for(const std::string& user, int shard, Status* error) {
  const std::string& name = shard >= 0 && directory_ && shard < static_cast<int>(directory_->shards().size())
                                ? directory_->shard_name(static_cast<uint16_t>(shard))
                                : config_->sharding.default_shard;
  auto target = target_for(*config_, user, name);
  if (!target) {
    *error = target.status();
    return nullptr;
  }
  std::string key = target->key();
  auto it = pools_.find(key);
  if (it != pools_.end() && !it->second.pool->retired()) return it->second.pool.get();
  if (it != pools_.end()) {
    // A retired pool with the same key still drains; park it under a unique name.
    pools_.emplace(key + "#retired" + std::to_string(reinterpret_cast<uintptr_t>(it->second.pool.get())),
                   std::move(it->second));
    pools_.erase(it);
  }
  auto pool =
      std::make_unique<pool::Pool>(loop_, *target, pool_settings(), budgets_.get(key, config_->pool.size));
  pool::Pool* raw = pool.get();
  pools_[key] = PoolEntry{std::move(pool), user};
  return raw;
}

wire::CancelKey Worker::register_cancel(session::Session* session) {
  wire::CancelKey key = cancels_.add(this);
  by_cancel_key_[pack(key)] = session;
  return key;
}

void Worker::unregister_cancel(wire::CancelKey key) {
  by_cancel_key_.erase(pack(key));
  cancels_.remove(key);
}

void Worker::forward_cancel(wire::CancelKey key, std::function<void()> delivered) {
  Worker* owner = cancels_.find(key);
  if (owner == nullptr) {
    LOG_INFO("cancel request with an unknown key ignored");
    delivered();
    return;
  }
  // Runs on the owner's loop; `delivered` is this worker's to run.
  net::Loop* here = &loop_;
  owner->post_cancel(
      key, [here, delivered = std::move(delivered)]() mutable { here->post(std::move(delivered)); });
}

void Worker::post_cancel(wire::CancelKey key, std::function<void()> delivered) {
  loop_.post([this, key, delivered = std::move(delivered)]() mutable {
    auto it = by_cancel_key_.find(pack(key));
    if (it != by_cancel_key_.end())
      it->second->cancel_running_query(std::move(delivered));
    else
      delivered();
  });
}

void Worker::post_directory(std::shared_ptr<const router::Directory> directory,
                            std::function<void()> installed) {
  loop_.post([this, directory = std::move(directory), installed = std::move(installed)] {
    directory_ = directory;
    acknowledge_after_older_reads(directory->version(), installed);
    std::vector<session::Session*> waiting = cutover_queue_;
    for (session::Session* s : waiting) {
      if (sessions_.count(s) != 0) s->resume_after_directory_change();
    }
  });
}

// The worker routes with `version` now; `installed` (the acknowledgement) waits until no read
// routed with an older directory still has a leg to start (session::StartingReads,
// docs/architecture.md §7.3). Reads with a leg still waiting for a server after kReadPatienceMs fail.
void Worker::acknowledge_after_older_reads(uint64_t version, std::function<void()> installed) {
  constexpr uint64_t kReadPatienceMs = 50;
  if (installed) starting_reads_.after_older(version, std::move(installed));
  if (starting_reads_.waiting() == 0) return;
  if (!read_patience_) read_patience_ = std::make_unique<net::Timer>(loop_);
  read_patience_->start(kReadPatienceMs, 0, [this, version] {
    starting_reads_.expire_older(
        version, Status::proxy("40001",
                               "a bucket move began its cutover while this read waited for a server "
                               "on one of its shards; retry the read"));
  });
}

bool Worker::directory_lease_valid() {
  return !directory_access_.lease_valid || directory_access_.lease_valid();
}

bool Worker::directory_read_lease_valid() {
  return !directory_access_.read_lease_valid || directory_access_.read_lease_valid();
}

void Worker::request_directory_refresh() {
  if (directory_access_.request_refresh) directory_access_.request_refresh();
}

void Worker::post_reload(std::shared_ptr<const config::Config> config, std::shared_ptr<net::TlsContext> tls) {
  loop_.post([this, config = std::move(config), tls = std::move(tls)] { apply_reload(config, tls); });
}

void Worker::apply_reload(std::shared_ptr<const config::Config> config,
                          std::shared_ptr<net::TlsContext> tls) {
  config_ = std::move(config);
  tls_ = std::move(tls);
  if (auto rules =
          router::RoutingRules::from_config(config_->sharding, config_->file, !config_->catalog.dsn.empty()))
    rules_ = std::move(*rules);
  for (auto& [key, entry] : pools_) {
    if (entry.pool->retired()) continue;
    auto target = target_for(*config_, entry.user, entry.pool->target().shard);
    if (!target || !same_login(*target, entry.pool->target())) {
      LOG_INFO("worker=%d pool for shard %s retired by reload", index_, entry.pool->target().shard.c_str());
      entry.pool->retire();
    } else {
      entry.pool->update_settings(pool_settings());
    }
  }
}

void Worker::post_shutdown(admin::ShutdownMode mode) {
  loop_.post([this, mode] { shutdown(mode); });
}

// Immediate: every client closed now. WaitForServers (SIGTERM): transactions in progress finish,
// then each client is closed. WaitForClients: no new clients; the loop ends when the last leaves.
void Worker::shutdown(admin::ShutdownMode mode) {
  shutting_down_ = true;
  if (listener_) listener_->close();
  if (mode != admin::ShutdownMode::WaitForClients) {
    std::vector<session::Session*> sessions;
    for (auto& [raw, owned] : sessions_) sessions.push_back(raw);
    for (session::Session* s : sessions) {
      if (mode == admin::ShutdownMode::WaitForServers)
        s->begin_shutdown();
      else
        s->terminate(Status::proxy("57P01", "terminating connection due to immediate shutdown"));
    }
    for (auto& [key, entry] : pools_) entry.pool->retire();
  }
  if (mode == admin::ShutdownMode::Immediate) loop_.stop();
  stop_when_idle();
}

void Worker::stop_when_idle() {
  if (shutting_down_ && sessions_.empty()) loop_.stop();
}

}  // namespace sw::app
