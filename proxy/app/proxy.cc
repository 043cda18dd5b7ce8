#include "app/proxy.h"

#include <signal.h>
#include <uv.h>

#include "catalog/directory_watcher.h"
#include "common/log.h"
#include "net/tls.h"

namespace sw::app {
namespace {

struct SignalWatch {
  uv_signal_t handle;
  std::function<void()> action;
};

void apply_log_level(const config::Config& config) {
  log::Level level;
  if (log::parse_level(config.log_level.c_str(), &level)) log::set_level(level);
}

}  // namespace

Proxy::Proxy(std::string config_path) : config_path_(std::move(config_path)) {}

Proxy::~Proxy() {
  if (watcher_) watcher_->stop();
}

std::shared_ptr<const router::Directory> Proxy::start_directory() {
  std::vector<std::string> shards;
  for (const auto& shard : config_->shards) shards.push_back(shard.name);
  if (config_->catalog.dsn.empty()) {
    LOG_INFO("no catalog configured: static directory, bucket i on shard i mod %zu", shards.size());
    return router::Directory::initial(static_cast<uint32_t>(config_->sharding.buckets), shards);
  }
  watcher_ = std::make_unique<catalog::DirectoryWatcher>(
      *config_, [this](std::shared_ptr<const router::Directory> d) { publish(std::move(d)); });
  watcher_->start();
  auto directory = watcher_->wait_for_directory(std::chrono::seconds(10));
  if (!directory) LOG_ERROR("no directory loaded from the catalog yet; routed statements fail until it is");
  return directory;
}

// Called on the watcher thread; the workers list belongs to the main thread.
void Proxy::publish(std::shared_ptr<const router::Directory> directory) {
  main_loop_.post([this, directory] {
    LOG_INFO("directory version %llu loaded", (unsigned long long)directory->version());
    for (auto& worker : workers_) worker->post_directory(directory);
  });
}

Result<std::shared_ptr<net::TlsContext>> Proxy::make_tls(const config::Config& config) {
  if (!config.listen.tls.enabled()) return std::shared_ptr<net::TlsContext>();
  return net::TlsContext::make_server(config.listen.tls.cert_file, config.listen.tls.key_file);
}

int Proxy::run() {
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

  DirectoryAccess directory_access;
  auto directory = start_directory();
  if (watcher_) {
    catalog::DirectoryWatcher* watcher = watcher_.get();
    directory_access.lease_valid = [watcher] {
      return watcher->lease_valid(catalog::DirectoryWatcher::Clock::now());
    };
    directory_access.request_refresh = [watcher] { watcher->request_refresh(); };
  }
  for (int i = 0; i < config_->workers; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, config_, cancels_, client_count_, *tls, directory,
                                                directory_access, budgets_));
    Status listening = workers_.back()->listen();
    if (!listening) {
      LOG_ERROR("%s", listening.message.c_str());
      return 78;
    }
  }
  for (auto& worker : workers_) {
    worker->start_thread([this] {
      main_loop_.post([this] {
        if (++workers_stopped_ == static_cast<int>(workers_.size())) main_loop_.stop();
      });
    });
  }
  LOG_INFO("shardwire listening on %s:%d with %d worker(s), pool mode %s", config_->listen.host.c_str(),
           config_->listen.port, config_->workers,
           config_->pool.mode == config::PoolMode::Session ? "session" : "transaction");

  std::vector<std::unique_ptr<SignalWatch>> watches;
  auto watch = [&](int signum, std::function<void()> action) {
    auto w = std::make_unique<SignalWatch>();
    w->action = std::move(action);
    uv_signal_init(main_loop_.raw(), &w->handle);
    w->handle.data = w.get();
    uv_signal_start(&w->handle, [](uv_signal_t* h, int) { static_cast<SignalWatch*>(h->data)->action(); }, signum);
    watches.push_back(std::move(w));
  };
  watch(SIGHUP, [this] { reload(); });
  watch(SIGTERM, [this] { stop(true); });
  watch(SIGINT, [this] { stop(false); });
  main_loop_.run();

  for (auto& worker : workers_) worker->join();
  for (auto& w : watches) uv_close(reinterpret_cast<uv_handle_t*>(&w->handle), nullptr);
  uv_run(main_loop_.raw(), UV_RUN_NOWAIT);
  workers_.clear();
  if (watcher_) watcher_->stop();
  LOG_INFO("shardwire stopped");
  return 0;
}

void Proxy::reload() {
  std::shared_ptr<const config::Config> loaded;
  try {
    loaded = std::make_shared<const config::Config>(config::load_file(config_path_));
  } catch (const std::exception& e) {
    LOG_ERROR("reload refused, keeping the running config: %s", e.what());
    return;
  }
  auto diff = config::diff(*config_, *loaded);
  for (const auto& key : diff.need_restart)
    LOG_WARN("reload: %s changed but needs a restart to take effect", key.c_str());
  auto tls = make_tls(*loaded);
  if (!tls) {
    LOG_ERROR("reload refused, keeping the running config: %s", tls.status().message.c_str());
    return;
  }
  config_ = loaded;
  apply_log_level(*config_);
  for (auto& worker : workers_) worker->post_reload(config_, *tls);
  LOG_INFO("config reloaded from %s (%zu setting(s) changed)", config_path_.c_str(), diff.changed.size());
}

void Proxy::stop(bool graceful) {
  if (stopping_ && graceful) return;
  stopping_ = true;
  LOG_INFO("%s", graceful ? "SIGTERM: no new connections; waiting for transactions to finish"
                          : "SIGINT: stopping now");
  // The main loop ends when every worker has (see run()).
  for (auto& worker : workers_) worker->post_shutdown(graceful);
}

}  // namespace sw::app
