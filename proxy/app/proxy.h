// The running proxy: workers, the cancel registry, and the main thread's signal loop
// (SIGHUP reload, SIGTERM graceful stop, SIGINT immediate stop).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/cancel_registry.h"
#include "app/worker.h"
#include "config/config.h"
#include "net/loop.h"
#include "router/directory.h"

namespace sw::catalog {
class DirectoryWatcher;
}

namespace sw::app {

class Proxy {
 public:
  explicit Proxy(std::string config_path);
  ~Proxy();
  // Loads the config, binds, runs until stopped. Returns the process exit code.
  int run();

 private:
  void reload();
  void stop(bool graceful);
  Result<std::shared_ptr<net::TlsContext>> make_tls(const config::Config& config);
  // Starts the catalog watcher (or uses the static initial layout without a catalog) and
  // returns the directory to start with; null when the catalog has none yet.
  std::shared_ptr<const router::Directory> start_directory();
  void publish(std::shared_ptr<const router::Directory> directory);

  std::string config_path_;
  std::shared_ptr<const config::Config> config_;
  net::Loop main_loop_;
  CancelRegistry cancels_;
  pool::BudgetRegistry budgets_;
  std::atomic<int> client_count_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<catalog::DirectoryWatcher> watcher_;
  bool stopping_ = false;
  int workers_stopped_ = 0;  // main loop thread only
};

}  // namespace sw::app
