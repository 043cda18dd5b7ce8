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

  std::string config_path_;
  std::shared_ptr<const config::Config> config_;
  net::Loop main_loop_;
  CancelRegistry cancels_;
  std::atomic<int> client_count_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  bool stopping_ = false;
  int workers_stopped_ = 0;  // main loop thread only
};

}  // namespace sw::app
