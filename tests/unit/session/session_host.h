// A test seam for the whole Session (docs/architecture.md §13): what the worker gives a session
// (FakeSessionHost), over a real event loop on its own thread, a config built in code whose
// shards are FakeServers (fake_server.h), the worker's pools and the static directory a proxy
// without a catalog routes with, and a loopback listener whose connections become Sessions. A
// test drives a session with a blocking client (script_client.h) by message scripts on both
// sides, without the proxy process.
#pragma once

#include <sys/socket.h>

#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "fake_server.h"
#include "net/connection.h"
#include "net/listener.h"
#include "net/loop.h"
#include "pool/budget.h"
#include "pool/pool.h"
#include "router/bucket_hash.h"
#include "router/directory.h"
#include "router/router.h"
#include "session/session.h"
#include "session/starting_reads.h"
#include "stats/traffic.h"

namespace sw::test {

// A worker as a session sees it (app::Worker), without what needs a catalog or other workers:
// pools by shard as the worker makes them (pool.* and max_message_size from the config), a
// directory whose lease never lapses, cancels for this host's sessions only, PAUSE and cutover
// queues that never hold, two-phase commit decisions as `decision` says (Unknown unless a test
// sets it), no console. Loop thread only.
class FakeSessionHost : public session::SessionHost {
 public:
  FakeSessionHost(net::Loop& loop, std::shared_ptr<const config::Config> config)
      : loop_(loop),
        config_(std::move(config)),
        directory_(router::Directory::initial(static_cast<uint32_t>(config_->sharding.buckets),
                                              config_->shard_names())) {
    if (auto rules = router::RoutingRules::from_config(config_->sharding, config_->file, false))
      rules_ = std::move(*rules);
  }
  ~FakeSessionHost() override {
    sessions_.clear();  // they give their servers back to the pools, which go next
    pools_.clear();
  }

  void accept(std::unique_ptr<net::Connection> connection) {
    auto session = std::make_unique<session::Session>(*this, std::move(connection));
    session::Session* raw = session.get();
    sessions_.emplace(raw, std::move(session));
  }
  size_t session_count() const { return sessions_.size(); }
  // The pool of shard `name`, nullptr before a session asked for it.
  pool::Pool* pool(const std::string& name) {
    auto it = pools_.find(name);
    return it == pools_.end() ? nullptr : it->second.get();
  }

  net::Loop& loop() override { return loop_; }
  const config::Config& config() override { return *config_; }
  pool::Pool* pool_for(const std::string& user, int shard, Status* error) override {
    const std::string name = shard >= 0 && shard < static_cast<int>(directory_->shards().size())
                                 ? directory_->shard_name(static_cast<uint16_t>(shard))
                                 : config_->sharding.default_shard;
    const config::Shard* configured = config_->find_shard(name);
    if (configured == nullptr) {
      *error = Status::proxy("58000", "shard " + name + " is not in the configuration");
      return nullptr;
    }
    std::unique_ptr<pool::Pool>& pool = pools_[name];
    if (pool == nullptr) {
      pool::BackendTarget target;
      target.shard = name;
      target.host = configured->conn.host;
      target.port = configured->conn.port;
      target.dbname = configured->conn.dbname;
      target.user = user;
      pool::PoolSettings settings;
      settings.size = config_->pool.size;
      settings.query_wait_timeout_ms = static_cast<uint64_t>(config_->pool.query_wait_timeout.count());
      settings.max_message_size = config_->max_message_size;
      pool = std::make_unique<pool::Pool>(loop_, target, settings,
                                          std::make_shared<pool::Budget>(config_->pool.size));
    }
    return pool.get();
  }
  const std::shared_ptr<const router::Directory>& directory() override { return directory_; }
  bool directory_lease_valid() override { return true; }
  bool directory_read_lease_valid() override { return true; }
  void request_directory_refresh() override {}
  const router::RoutingRules& routing_rules() override { return rules_; }
  std::shared_ptr<net::TlsContext> server_tls() override { return nullptr; }
  session::StatementRegistry& statements() override { return statements_; }
  wire::CancelKey register_cancel(session::Session* session) override {
    wire::CancelKey key{next_pid_++, 4242};
    by_pid_[key.pid] = session;
    return key;
  }
  void unregister_cancel(wire::CancelKey key) override { by_pid_.erase(key.pid); }
  void forward_cancel(wire::CancelKey key, std::function<void()> delivered) override {
    auto it = by_pid_.find(key.pid);
    if (it == by_pid_.end() || key.secret != 4242) {
      delivered();
      return;
    }
    it->second->cancel_running_query(std::move(delivered));
  }
  bool shutting_down() override { return false; }
  void session_closed(session::Session* session) override {
    loop_.post([this, session] { sessions_.erase(session); });  // not inside its own callback
  }
  stats::WorkerTraffic& traffic() override { return traffic_; }
  bool hold_if_paused(session::Session*) override { return false; }
  bool queue_for_cutover(session::Session*) override { return false; }
  void dequeue_from_cutover(session::Session*) override {}
  session::StartingReads& starting_reads() override { return starting_reads_; }
  void admin_command(std::string_view, std::function<void(std::string)> reply) override {
    std::string out;
    wire::encode_error(out, "ERROR", "0A000", "the test host has no console");
    reply(out);
  }
  std::string next_two_phase_gid() override { return "shardwire_test_" + std::to_string(++gids_); }
  void decide_commit(const std::string&, const std::vector<std::string>&,
                     std::function<void(twopc::Decision, std::string)> done) override {
    ++decisions;
    done(decision, decision == twopc::Decision::Unknown ? "the test host has no catalog" : "");
  }
  twopc::Decision decision = twopc::Decision::Unknown;  // what every decide_commit answers
  int decisions = 0;                                    // decide_commit calls

 private:
  net::Loop& loop_;
  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const router::Directory> directory_;
  router::RoutingRules rules_;
  std::map<std::string, std::unique_ptr<pool::Pool>> pools_;  // by shard name
  std::unordered_map<session::Session*, std::unique_ptr<session::Session>> sessions_;
  std::unordered_map<uint32_t, session::Session*> by_pid_;
  session::StatementRegistry statements_;
  session::StartingReads starting_reads_;
  stats::WorkerTraffic traffic_;
  uint32_t next_pid_ = 1;
  uint64_t gids_ = 0;
};

// The host, its loop running on a thread of its own, and a listener on a free loopback port().
// Shards s0, s1, ... are `servers`; users: app (trust); sharding: `orders` by tenant_id in 8
// buckets (bucket b on shard b mod n). `extra_yaml` adds top-level keys (pool, max_message_size).
class SessionDeployment {
 public:
  SessionDeployment(const std::vector<FakeServer*>& servers, const std::string& extra_yaml = "") {
    std::string yaml = "auth: { method: trust, users: [ { name: app } ] }\nshards:\n";
    for (size_t i = 0; i < servers.size(); ++i)
      yaml += "  - { name: s" + std::to_string(i) +
              ", dsn: 'host=127.0.0.1 port=" + std::to_string(servers[i]->port()) + " dbname=app' }\n";
    yaml += "sharding: { buckets: 8, tables: [ { name: orders, key: tenant_id } ] }\n" + extra_yaml;
    host_ = std::make_unique<FakeSessionHost>(
        loop_, std::make_shared<const config::Config>(config::load_string(yaml, "session_test.yaml")));
    listener_ = std::make_unique<net::Listener>(
        loop_, [this](std::unique_ptr<net::Connection> c) { host_->accept(std::move(c)); });
    for (int attempt = 0; attempt < 20 && port_ == 0; ++attempt) {
      const int port = free_port();
      if (port != 0 && listener_->listen("127.0.0.1", port, false)) port_ = port;
    }
    thread_ = std::thread([this] { loop_.run(); });
  }
  SessionDeployment(const SessionDeployment&) = delete;
  SessionDeployment& operator=(const SessionDeployment&) = delete;

  int port() const { return port_; }
  // Runs `task` on the loop thread and returns what it returned (the host and pools live there).
  template <typename Task>
  auto on_loop(Task task) {
    std::packaged_task<decltype(task())()> packaged(std::move(task));
    auto result = packaged.get_future();
    loop_.post([&packaged] { packaged(); });
    return result.get();
  }
  // As app::Worker ends: the loop stops first, then the sessions and pools go on this thread;
  // tasks still posted (a session_closed) are dropped with the loop, never run on a host gone.
  ~SessionDeployment() {
    loop_.stop();
    thread_.join();
    listener_.reset();
    host_.reset();
  }
  // Shard `name`'s pool counts (all zero before a session asked for the pool).
  pool::Pool::Counts counts(const std::string& name) {
    return on_loop([this, name] {
      pool::Pool* pool = host_->pool(name);
      return pool == nullptr ? pool::Pool::Counts{} : pool->counts();
    });
  }
  size_t sessions() {
    return on_loop([this] { return host_->session_count(); });
  }
  // Every two-phase commit's decision is `decision` from now on.
  void decide_commits(twopc::Decision decision) {
    on_loop([this, decision] { host_->decision = decision; });
  }
  int decisions() {
    return on_loop([this] { return host_->decisions; });
  }

 private:
  // A port nobody listens on now (bound and released; listen() above retries if taken since), or
  // 0 when none could be had.
  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    ::close(fd);
    return bound ? ntohs(addr.sin_port) : 0;
  }

  net::Loop loop_;
  std::unique_ptr<FakeSessionHost> host_;
  std::unique_ptr<net::Listener> listener_;
  int port_ = 0;
  std::thread thread_;
};

// A catalog DSN lets the session run two-phase commit; the test host never connects to it.
inline constexpr const char* kCatalog = "catalog: { dsn: 'host=127.0.0.1 port=1 dbname=catalog' }\n";

// The first tenant_id whose bucket is on shard `shard` of 2 (bucket b on shard b mod 2).
inline std::string key_on(int shard) {
  int key = 1;
  while (static_cast<int>(*router::bucket_of_text_value(router::KeyType::Int8, std::to_string(key), 8) % 2) !=
         shard)
    ++key;
  return std::to_string(key);
}

}  // namespace sw::test
