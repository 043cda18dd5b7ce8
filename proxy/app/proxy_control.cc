// Proxy: the operations the admin console and the metrics exposer run across workers.
#include <chrono>

#include "app/proxy.h"
#include "catalog/directory_watcher.h"
#include "common/log.h"
#include "mover/mover_service.h"

namespace sw::app {
namespace {

// Collects one answer per worker; `done` gets the combination once the last one arrived, on the
// thread that delivered it.
template <typename T>
struct FanIn {
  std::mutex mutex;
  int pending = 0;
  T value{};
  std::function<void(T)> done;
};

}  // namespace

std::shared_ptr<const config::Config> Proxy::config() {
  std::lock_guard<std::mutex> lock(config_mutex_);
  return config_;
}

void Proxy::gather(bool lists, std::function<void(stats::Snapshot)> done) {
  auto fan = std::make_shared<FanIn<stats::Snapshot>>();
  fan->pending = static_cast<int>(workers_.size());
  fan->done = std::move(done);
  for (auto& worker : workers_) {
    worker->post_snapshot(lists, [fan](stats::Snapshot snapshot) {
      std::unique_lock<std::mutex> lock(fan->mutex);
      fan->value.merge(std::move(snapshot));
      if (--fan->pending != 0) return;
      lock.unlock();
      fan->done(std::move(fan->value));
    });
  }
}

void Proxy::count_busy(std::function<void(int)> done) {
  auto fan = std::make_shared<FanIn<int>>();
  fan->pending = static_cast<int>(workers_.size());
  fan->done = std::move(done);
  for (auto& worker : workers_) {
    worker->post_count_busy([fan](int busy) {
      std::unique_lock<std::mutex> lock(fan->mutex);
      fan->value += busy;
      if (--fan->pending != 0) return;
      lock.unlock();
      fan->done(fan->value);
    });
  }
}

void Proxy::kill_client(uint64_t id, std::function<void(bool)> done) {
  auto fan = std::make_shared<FanIn<bool>>();
  fan->pending = static_cast<int>(workers_.size());
  fan->done = std::move(done);
  for (auto& worker : workers_) {
    worker->post_kill_client(id, [fan](bool found) {
      std::unique_lock<std::mutex> lock(fan->mutex);
      fan->value = fan->value || found;
      if (--fan->pending != 0) return;
      lock.unlock();
      fan->done(fan->value);
    });
  }
}

void Proxy::set_paused(bool paused) {
  bool was = paused_.exchange(paused);
  if (was == paused) return;
  LOG_INFO("%s", paused ? "PAUSE: new transactions are held" : "RESUME: held transactions go on");
  if (!paused) {
    for (auto& worker : workers_) worker->post_resume();
  }
}

admin::ProxyState Proxy::state() {
  admin::ProxyState state;
  state.paused = paused_.load();
  state.shutting_down = shutting_down_.load();
  state.started_at_us = started_at_us_;
  return state;
}

admin::DirectoryStatus Proxy::directory_status() {
  admin::DirectoryStatus status;
  if (!watcher_) {
    status.directory = static_directory_;
    status.source = "static";
    status.loaded_at_us = started_at_us_;
    return status;
  }
  using Clock = catalog::DirectoryWatcher::Clock;
  status.directory = watcher_->current();
  status.source = "catalog";
  Clock::time_point now = Clock::now();
  status.lease_valid = watcher_->lease_valid(now);
  if (status.directory) {
    auto since = std::chrono::duration_cast<std::chrono::microseconds>(now - watcher_->confirmed_at()).count();
    status.loaded_at_us = stats::wall_clock_us() - since;
  }
  return status;
}

void Proxy::request_reload(std::function<void(Status)> done) {
  main_loop_.post([this, done = std::move(done)] { done(reload()); });
}

void Proxy::request_shutdown(admin::ShutdownMode mode) {
  main_loop_.post([this, mode] { stop(mode); });
}

void Proxy::wake_mover() {
  if (mover_) mover_->wake();
}

void Proxy::reconnect() {
  LOG_INFO("RECONNECT: every server connection closes once it is released");
  for (auto& worker : workers_) worker->post_reconnect();
}

}  // namespace sw::app
