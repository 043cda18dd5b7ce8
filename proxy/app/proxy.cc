#include "app/proxy.h"

#include "app/admin_host.h"
#include "metrics/exposer.h"
#include "metrics/readings.h"
#include "mover/mover_service.h"

#include <signal.h>
#include <uv.h>
#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <random>

#include "catalog/commit_decision_pool.h"
#include "catalog/directory_watcher.h"
#include "catalog/two_phase_recovery.h"
#include "common/log.h"
#include "mover/console_ops.h"
#include "net/listener.h"
#include "net/tls.h"

namespace sw::app {
namespace {

struct SignalWatch {
  uv_signal_t handle;
  std::function<void()> action;
};

// Counts the workers that installed a published directory; Proxy::publish waits for all of them.
class InstallLatch {
 public:
  void expect(size_t workers) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ += static_cast<int64_t>(workers) + 1;  // + 1: the -1 that stood for "not yet posted"
    if (pending_ == 0) cv_.notify_all();
  }
  void one_done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) cv_.notify_all();
  }
  void wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return pending_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t pending_ = -1;  // -1 until the main loop posted the directory to the workers
};

// This process's part of every two-phase commit gid: 16 lowercase hex characters, random per start
// (two instances, or one restarted, never share a gid).
std::string random_gid_instance() {
  std::random_device random;
  std::string out;
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) out += kHex[random() % 16];
  return out;
}

void apply_log_level(const config::Config& config) {
  log::Level level;
  if (log::parse_level(config.log_level.c_str(), &level)) log::set_level(level);
}

// Descriptors the config can use at once: every client, every server connection (pool.size per
// shard and user, across workers) plus as many short-lived cancel connections, and a fixed margin
// for listeners, loops, the catalog, the mover, metrics and the log.
uint64_t descriptors_needed(const config::Config& config) {
  uint64_t logins = std::max<uint64_t>(config.auth.users.size(), 1);
  uint64_t servers =
      static_cast<uint64_t>(config.pool.size) * std::max<uint64_t>(config.shards.size(), 1) * logins;
  return static_cast<uint64_t>(config.listen.max_client_connections) + 2 * servers + 256;
}

// Raises the open file limit for the config; returns how many clients fit in what was granted.
int raise_fd_limit(const config::Config& config) {
  uint64_t wanted = descriptors_needed(config);
  net::FdLimit limit = net::raise_open_file_limit(wanted);
  if (limit.enough) {
    if (limit.soft != limit.before)
      LOG_INFO("open file limit raised from %llu to %llu", (unsigned long long)limit.before,
               (unsigned long long)limit.soft);
    return config.listen.max_client_connections;
  }
  uint64_t others = wanted - static_cast<uint64_t>(config.listen.max_client_connections);
  int cap = limit.soft > others ? static_cast<int>(std::min<uint64_t>(limit.soft - others, INT_MAX)) : 1;
  LOG_WARN(
      "open file limit is %llu (hard %llu) but listen.max_client_connections=%d needs about %llu; "
      "clients beyond %d are refused with 53300",
      (unsigned long long)limit.soft, (unsigned long long)limit.hard, config.listen.max_client_connections,
      (unsigned long long)wanted, cap);
  return cap;
}

}  // namespace

Proxy::Proxy(std::string config_path) : config_path_(std::move(config_path)) {}

Proxy::~Proxy() {
  if (recovery_) recovery_->stop();
  if (watcher_) watcher_->stop();
}

std::shared_ptr<const router::Directory> Proxy::start_directory() {
  std::vector<std::string> shards;
  for (const auto& shard : config_->shards) shards.push_back(shard.name);
  if (config_->catalog.dsn.empty()) {
    LOG_INFO("no catalog configured: static directory, bucket i on shard i mod %zu", shards.size());
    static_directory_ = router::Directory::initial(static_cast<uint32_t>(config_->sharding.buckets), shards);
    return static_directory_;
  }
  watcher_ = std::make_unique<catalog::DirectoryWatcher>(
      *config_, [this](std::shared_ptr<const router::Directory> d) { publish(std::move(d)); });
  watcher_->start();
  auto directory = watcher_->wait_for_directory(std::chrono::seconds(10));
  if (!directory) LOG_ERROR("no directory loaded from the catalog yet; routed statements fail until it is");
  return directory;
}

// Called on the watcher thread; the workers list belongs to the main thread. The workers get the
// watcher's latest directory, not necessarily `directory`: a reload on the main thread in between
// rebuilt it over the new shard list, and that one must not be overtaken by the older snapshot.
// The watcher acknowledges the version in the catalog when this returns, so it returns once every
// worker routes with it and has no read routed with an older one still starting (docs/architecture.md §7.3):
// a cutover then knows no new transaction goes to the source for the buckets it holds, and no read through
// the owned-rows filter takes its snapshot after the fences change. A worker that has not installed it within
// kInstallWait only delays the acknowledgement; its writes meet the source's fence.
void Proxy::publish(std::shared_ptr<const router::Directory> directory) {
  constexpr auto kInstallWait = std::chrono::milliseconds(100);
  auto installed = std::make_shared<InstallLatch>();
  main_loop_.post([this, directory = std::move(directory), installed] {
    std::shared_ptr<const router::Directory> latest = watcher_ ? watcher_->current() : nullptr;
    if (!latest) latest = directory;
    LOG_INFO("directory version %llu loaded", (unsigned long long)latest->version());
    installed->expect(workers_.size());
    for (auto& worker : workers_) worker->post_directory(latest, [installed] { installed->one_done(); });
  });
  if (serving_) installed->wait(kInstallWait);  // before the main loop runs nobody routes yet
}

Result<std::shared_ptr<net::TlsContext>> Proxy::make_tls(const config::Config& config) {
  if (!config.listen.tls.enabled()) return std::shared_ptr<net::TlsContext>();
  return net::TlsContext::make_server(config.listen.tls.cert_file, config.listen.tls.key_file);
}

int Proxy::run() {
  started_at_us_ = stats::wall_clock_us();
  try {
    config_ = std::make_shared<const config::Config>(config::load_file(config_path_));
  } catch (const std::exception& e) {
    LOG_ERROR("config error: %s", e.what());
    return 78;  // EX_CONFIG
  }
  apply_log_level(*config_);
  auto tls = make_tls(*config_);
  if (!tls) {
    LOG_ERROR("config error: %s", tls.status().message.c_str());
    return 78;
  }
  signal(SIGPIPE, SIG_IGN);
  if (Status started = start_serving(*tls); !started) {
    LOG_ERROR("%s", started.message.c_str());
    return 78;
  }
  LOG_INFO("shardwire listening on %s:%d with %d worker(s), pool mode %s", config_->listen.host.c_str(),
           config_->listen.port, config_->workers,
           config_->pool.mode == config::PoolMode::Session ? "session" : "transaction");
  run_until_stopped();
  LOG_INFO("shardwire stopped");
  return 0;
}

Status Proxy::start_serving(const std::shared_ptr<net::TlsContext>& tls) {
  const int client_cap = raise_fd_limit(*config_);
  DirectoryAccess directory_access;
  directory_access.gid_instance = random_gid_instance();
  if (!config_->catalog.dsn.empty())
    directory_access.commit_decisions = std::make_shared<catalog::CommitDecisionPool>(config_->catalog.dsn);
  auto directory = start_directory();
  if (watcher_) {
    catalog::DirectoryWatcher* watcher = watcher_.get();
    directory_access.lease_valid = [watcher] {
      return watcher->lease_valid(catalog::DirectoryWatcher::Clock::now());
    };
    directory_access.read_lease_valid = [watcher] {
      return watcher->read_lease_valid(catalog::DirectoryWatcher::Clock::now());
    };
    directory_access.request_refresh = [watcher] { watcher->request_refresh(); };
  }
  if (!config_->listen.reuse_port) {
    if (Status unused = net::check_port_unused(config_->listen.host, config_->listen.port); !unused)
      return unused;
  }
  for (int i = 0; i < config_->workers; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, config_, cancels_, client_count_, tls, directory,
                                                directory_access, budgets_, paused_, cutover_queued_));
    workers_.back()->set_console_host(std::make_unique<AdminHost>(*this, *workers_.back()));
    workers_.back()->set_client_cap(client_cap);
    if (Status listening = workers_.back()->listen(); !listening) return listening;
  }
  if (!config_->metrics.listen.empty()) {
    auto exposer = metrics::Exposer::start(
        config_->metrics.listen, [this] { return read_metrics(); }, [this] { return readiness(); });
    if (!exposer) return exposer.status();
    exposer_ = std::move(*exposer);
    LOG_INFO("metrics on http://%s/metrics, probes on /live and /ready", config_->metrics.listen.c_str());
  }
  for (auto& worker : workers_) {
    worker->start_thread([this] {
      main_loop_.post([this] {
        if (++workers_stopped_ == static_cast<int>(workers_.size())) main_loop_.stop();
      });
    });
  }
  if (!config_->catalog.dsn.empty()) {
    mover_ = std::make_unique<mover::MoverService>(config_);
    mover_->start();
    // Two-phase transactions left prepared by any instance (docs/architecture.md §7.8).
    recovery_ = std::make_unique<catalog::TwoPhaseRecovery>(*config_);
    recovery_->start();
  }
  login_check_ = std::make_unique<ShardLoginCheck>(
      config_, [this] { main_loop_.post([this] { login_check_->join(); }); });
  return Status::ok();
}

void Proxy::run_until_stopped() {
  std::vector<std::unique_ptr<SignalWatch>> watches;
  auto watch = [&](int signum, std::function<void()> action) {
    auto w = std::make_unique<SignalWatch>();
    w->action = std::move(action);
    uv_signal_init(main_loop_.raw(), &w->handle);
    w->handle.data = w.get();
    uv_signal_start(
        &w->handle, [](uv_signal_t* h, int) { static_cast<SignalWatch*>(h->data)->action(); }, signum);
    watches.push_back(std::move(w));
  };
  watch(SIGHUP, [this] { static_cast<void>(reload()); });  // a refused reload is logged there
  watch(SIGTERM, [this] { stop(admin::ShutdownMode::WaitForServers); });
  watch(SIGINT, [this] { stop(admin::ShutdownMode::Immediate); });
  serving_ = true;
  main_loop_.run();
  serving_ = false;

  shutdown_timer_.reset();
  exposer_.reset();
  if (mover_) mover_->stop();
  if (recovery_) recovery_->stop();
  for (auto& worker : workers_) worker->join();
  for (auto& w : watches) uv_close(reinterpret_cast<uv_handle_t*>(&w->handle), nullptr);
  uv_run(main_loop_.raw(), UV_RUN_NOWAIT);
  workers_.clear();
  if (watcher_) watcher_->stop();
}

// A reload may add shards and remove shards that own no bucket: the directory must not put a
// bucket on a shard the new config lacks. Without a catalog the shard list is the static layout
// (bucket i on shard i mod N), which only a restart changes. Ok when `next` may be applied.
Status Proxy::check_shard_change(const config::Config& next) {
  std::vector<std::string> before = config_->shard_names(), after = next.shard_names();
  if (before == after) return Status::ok();
  if (!watcher_) {
    return Status::config(
        "the shard list changed, but without a catalog it fixes the static layout (bucket i on shard i mod "
        "N): restart to change it, or set catalog.dsn to add and remove shards by RELOAD");
  }
  std::vector<std::string> removed;
  for (const std::string& name : before)
    if (std::find(after.begin(), after.end(), name) == after.end()) removed.push_back(name);
  if (removed.empty()) return Status::ok();
  if (auto directory = watcher_->current()) {
    for (const std::string& name : removed) {
      const int index = directory->shard_index(name);
      const uint32_t owned = index < 0 ? 0 : directory->owned_by(static_cast<uint16_t>(index));
      if (owned == 0) continue;
      return Status::config("shard " + name + " still owns " + std::to_string(owned) +
                            " bucket(s) in the catalog directory (version " +
                            std::to_string(directory->version()) +
                            "); move them off first (REBALANCE TO the remaining shards, or MOVE BUCKETS), "
                            "then remove it from shards and RELOAD");
    }
  }
  return mover::check_no_migration_uses(*config_, removed);
}

Status Proxy::reload() {
  std::shared_ptr<const config::Config> loaded;
  try {
    loaded = std::make_shared<const config::Config>(config::load_file(config_path_));
  } catch (const std::exception& e) {
    LOG_ERROR("reload refused, keeping the running config: %s", e.what());
    ++reloads_failed_;
    return Status::config(std::string("reload refused, the running configuration stays: ") + e.what());
  }
  auto diff = config::diff(*config_, *loaded);
  for (const auto& key : diff.need_restart)
    LOG_WARN("reload: %s changed but needs a restart to take effect", key.c_str());
  auto tls = make_tls(*loaded);
  if (!tls) {
    LOG_ERROR("reload refused, keeping the running config: %s", tls.status().message.c_str());
    ++reloads_failed_;
    return Status::config("reload refused, the running configuration stays: " + tls.status().message);
  }
  if (Status shards = check_shard_change(*loaded); !shards) {
    LOG_ERROR("reload refused, keeping the running config: %s", shards.message.c_str());
    ++reloads_failed_;
    return Status::config("reload refused, the running configuration stays: " + shards.message);
  }
  {
    std::lock_guard<std::mutex> lock(config_mutex_);
    config_ = loaded;
  }
  apply_log_level(*loaded);
  for (auto& worker : workers_) worker->post_reload(loaded, *tls);
  // Routing takes the new shard list with the config (posted after it, so a worker never routes
  // to a shard its config lacks); the watcher builds later versions over it too.
  if (watcher_) {
    if (auto directory = watcher_->update_config(*loaded)) {
      for (auto& worker : workers_) worker->post_directory(directory);
    }
  }
  if (mover_) mover_->update_config(loaded);
  if (recovery_) recovery_->update_config(*loaded);
  ++reloads_ok_;
  LOG_INFO("config reloaded from %s (%zu setting(s) changed)", config_path_.c_str(), diff.changed.size());
  return Status::ok();
}

void Proxy::stop(admin::ShutdownMode mode) {
  bool again = shutting_down_.exchange(true);
  if (again && mode != admin::ShutdownMode::Immediate) return;
  switch (mode) {
    case admin::ShutdownMode::Immediate: LOG_INFO("stopping now"); break;
    case admin::ShutdownMode::WaitForServers:
      LOG_INFO("no new connections; waiting for transactions to finish");
      break;
    case admin::ShutdownMode::WaitForClients:
      LOG_INFO("no new connections; waiting for clients to leave");
      break;
  }
  // The main loop ends when every worker has (see run()).
  for (auto& worker : workers_) worker->post_shutdown(mode);
  if (mode != admin::ShutdownMode::Immediate) {  // the first graceful stop: it has a deadline
    const auto timeout = config()->shutdown_timeout;
    shutdown_timer_ = std::make_unique<net::Timer>(main_loop_);
    shutdown_timer_->start(static_cast<uint64_t>(timeout.count()), 0, [this] { shutdown_timed_out(); });
  }
}

void Proxy::shutdown_timed_out() {
  LOG_WARN("shutdown_timeout (%lld ms) passed: closing the clients still connected",
           static_cast<long long>(config()->shutdown_timeout.count()));
  for (auto& worker : workers_) worker->post_shutdown(admin::ShutdownMode::Immediate);
}

}  // namespace sw::app
