// The running proxy: workers, the cancel registry, and the main thread's signal loop
// (SIGHUP reload, SIGTERM graceful stop, SIGINT immediate stop).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "admin/console.h"
#include "app/cancel_registry.h"
#include "app/shard_login_check.h"
#include "app/worker.h"
#include "config/config.h"
#include "net/loop.h"
#include "net/timer.h"
#include "router/directory.h"

namespace sw::catalog {
class DirectoryWatcher;
class TwoPhaseRecovery;
}  // namespace sw::catalog
namespace sw::mover {
class MoverService;
}
namespace sw::metrics {
class Exposer;
struct Readings;
struct Readiness;
}  // namespace sw::metrics

namespace sw::app {

class Proxy {
 public:
  explicit Proxy(std::string config_path);
  ~Proxy();
  // Loads the config, binds, runs until stopped. Returns the process exit code.
  int run();

  // For the admin console and the metrics; thread-safe (proxy_control.cc). Callbacks run on
  // whichever thread finished the work.
  std::shared_ptr<const config::Config> config();
  void gather(bool lists, std::function<void(stats::Snapshot)> done);
  void count_busy(std::function<void(int)> done);
  void set_paused(bool paused);
  admin::ProxyState state();
  admin::DirectoryStatus directory_status();
  void request_reload(std::function<void(Status)> done);
  void request_shutdown(admin::ShutdownMode mode);
  void kill_client(uint64_t id, std::function<void(bool)> done);
  void reconnect();
  // A console command changed the migrations (no-op without a catalog).
  void wake_mover();
  // One scrape's worth of readings (proxy_metrics.cc); blocks up to a timeout for the workers.
  metrics::Readings read_metrics();
  // GET /ready (proxy_control.cc): ready while serving, not stopping, and routing with a
  // directory confirmed within its lease (always, without a catalog).
  metrics::Readiness readiness();

 private:
  Status reload();
  // Refuses a reload that removes a shard still in use (owning buckets, in a migration) or that
  // changes the shard list without a catalog.
  Status check_shard_change(const config::Config& next);
  void stop(admin::ShutdownMode mode);
  // After shutdown_timeout of a graceful stop: close every client left and exit (still 0).
  void shutdown_timed_out();
  Result<std::shared_ptr<net::TlsContext>> make_tls(const config::Config& config);
  // Starts the catalog watcher (or uses the static initial layout without a catalog) and
  // returns the directory to start with; null when the catalog has none yet.
  std::shared_ptr<const router::Directory> start_directory();
  void publish(std::shared_ptr<const router::Directory> directory);
  // The directory, the workers listening, the metrics endpoint, the worker threads and the
  // mover; a Status saying what could not start (the process then exits with EX_CONFIG).
  Status start_serving(const std::shared_ptr<net::TlsContext>& tls);
  // Serves until a signal or the console stops the proxy, then shuts everything down.
  void run_until_stopped();

  std::string config_path_;
  std::mutex config_mutex_;  // config_ is read by other threads
  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<const router::Directory> static_directory_;  // without a catalog
  std::atomic<bool> paused_{false};
  std::atomic<int> cutover_queued_{0};
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> serving_{false};  // the main loop runs: posted tasks get done
  std::atomic<uint64_t> reloads_ok_{0};
  std::atomic<uint64_t> reloads_failed_{0};
  int64_t started_at_us_ = 0;
  net::Loop main_loop_;
  CancelRegistry cancels_;
  pool::BudgetRegistry budgets_;
  std::atomic<int> client_count_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<catalog::DirectoryWatcher> watcher_;
  std::unique_ptr<mover::MoverService> mover_;           // with a catalog only
  std::unique_ptr<catalog::TwoPhaseRecovery> recovery_;  // with a catalog only
  std::unique_ptr<ShardLoginCheck> login_check_;
  std::unique_ptr<metrics::Exposer> exposer_;   // stopped before the workers go
  std::unique_ptr<net::Timer> shutdown_timer_;  // a graceful stop's deadline (main loop)
  int workers_stopped_ = 0;                     // main loop thread only
};

}  // namespace sw::app
