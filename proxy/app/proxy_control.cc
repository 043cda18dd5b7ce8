// Proxy: the operations the admin console and the metrics exposer run across workers.
#include <chrono>

#include "app/proxy.h"
#include "catalog/directory_watcher.h"
#include "common/log.h"
#include "metrics/health.h"
#include "mover/mover_service.h"

namespace sw::app {
namespace {

// Asks every worker (`ask(worker, reply)`) and folds the answers with `fold`; `done` gets the
// result once the last worker answered, on the thread that delivered that answer.
template <typename T>
void fan_in(std::vector<std::unique_ptr<Worker>>& workers,
            std::function<void(Worker&, std::function<void(T)>)> ask, std::function<void(T&, T)> fold,
            std::function<void(T)> done) {
  struct State {
    std::mutex mutex;
    size_t pending;
    T value{};
    std::function<void(T&, T)> fold;
    std::function<void(T)> done;
  };
  auto state = std::make_shared<State>();
  state->pending = workers.size();
  state->fold = std::move(fold);
  state->done = std::move(done);
  for (auto& worker : workers) {
    ask(*worker, [state](T answer) {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->fold(state->value, std::move(answer));
      if (--state->pending != 0) return;
      lock.unlock();
      state->done(std::move(state->value));
    });
  }
}

}  // namespace

std::shared_ptr<const config::Config> Proxy::config() {
  std::lock_guard<std::mutex> lock(config_mutex_);
  return config_;
}

void Proxy::gather(bool lists, std::function<void(stats::Snapshot)> done) {
  fan_in<stats::Snapshot>(
      workers_,
      [lists](Worker& w, std::function<void(stats::Snapshot)> reply) {
        w.post_snapshot(lists, std::move(reply));
      },
      [](stats::Snapshot& all, stats::Snapshot one) { all.merge(std::move(one)); }, std::move(done));
}

void Proxy::count_busy(std::function<void(int)> done) {
  fan_in<int>(
      workers_, [](Worker& w, std::function<void(int)> reply) { w.post_count_busy(std::move(reply)); },
      [](int& all, int one) { all += one; }, std::move(done));
}

void Proxy::kill_client(uint64_t id, std::function<void(bool)> done) {
  fan_in<bool>(
      workers_,
      [id](Worker& w, std::function<void(bool)> reply) { w.post_kill_client(id, std::move(reply)); },
      [](bool& any, bool one) { any = any || one; }, std::move(done));
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
  if (login_check_) state.shard_superuser = login_check_->superuser();
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
    auto since =
        std::chrono::duration_cast<std::chrono::microseconds>(now - watcher_->confirmed_at()).count();
    status.loaded_at_us = stats::wall_clock_us() - since;
  }
  return status;
}

metrics::Readiness Proxy::readiness() {
  if (shutting_down_.load()) return {false, "shutting down"};
  if (!serving_.load()) return {false, "starting"};
  if (!watcher_) return {true, ""};  // static directory: always routable
  if (!watcher_->current()) return {false, "no directory loaded from the catalog yet"};
  if (!watcher_->lease_valid(catalog::DirectoryWatcher::Clock::now()))
    return {false, "the directory was not confirmed in the catalog within sharding.directory_lease"};
  return {true, ""};
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
