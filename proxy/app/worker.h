// One event loop with its own listener (SO_REUSEPORT), client sessions and server pools, so the
// data path takes no lock. Everything here runs on the worker's thread; other threads talk to
// it only through post_* methods.
#pragma once

#include <atomic>
#include <climits>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "admin/console.h"
#include "config/config.h"
#include "net/listener.h"
#include "net/loop.h"
#include "pool/pool.h"
#include "session/session.h"
#include "stats/snapshot.h"

namespace sw::catalog {
class CommitDecisionPool;
}

namespace sw::app {

class CancelRegistry;

// How a worker reaches the catalog watcher (empty functions: no catalog, static directory).
struct DirectoryAccess {
  std::function<bool()> lease_valid;
  std::function<bool()> read_lease_valid;
  std::function<void()> request_refresh;
  // Two-phase commit: records decisions in the catalog (null without a catalog), and this
  // process's instance id in every gid (16 lowercase hex characters, random per start).
  std::shared_ptr<catalog::CommitDecisionPool> commit_decisions;
  std::string gid_instance;
};

class Worker : public session::SessionHost {
 public:
  Worker(int index, std::shared_ptr<const config::Config> config, CancelRegistry& cancels,
         std::atomic<int>& client_count, std::shared_ptr<net::TlsContext> tls,
         std::shared_ptr<const router::Directory> directory, DirectoryAccess directory_access,
         pool::BudgetRegistry& budgets, const std::atomic<bool>& paused, std::atomic<int>& cutover_queued);
  ~Worker() override;

  // Binds the listener (called before the thread starts; errors are fatal at startup).
  Status listen();
  // Runs the loop on a new thread; `on_exit` is called on that thread when the loop ends.
  void start_thread(std::function<void()> on_exit);
  void join();

  // The admin console this worker's admin clients talk to (set before the thread starts).
  void set_console_host(std::unique_ptr<admin::ConsoleHost> host);
  // At most `cap` clients across workers, below listen.max_client_connections when the open file
  // limit cannot hold that many (set before the thread starts): the excess gets 53300, not a
  // failed accept.
  void set_client_cap(int cap) { client_cap_ = cap; }

  // Thread-safe requests.
  void post_reload(std::shared_ptr<const config::Config> config, std::shared_ptr<net::TlsContext> tls);
  void post_shutdown(admin::ShutdownMode mode);
  void post_cancel(wire::CancelKey key, std::function<void()> delivered);
  // `installed` (optional) runs on this worker's thread once it routes with `directory`.
  void post_directory(std::shared_ptr<const router::Directory> directory,
                      std::function<void()> installed = {});
  // Each runs on this worker's thread and calls `done` there (worker_control.cc).
  void post_snapshot(bool lists, std::function<void(stats::Snapshot)> done);
  void post_count_busy(std::function<void(int)> done);  // sessions holding servers
  void post_resume();                                   // wake sessions PAUSE held
  void post_kill_client(uint64_t id, std::function<void(bool)> done);
  void post_reconnect();  // servers close once released

  // SessionHost
  net::Loop& loop() override { return loop_; }
  const config::Config& config() override { return *config_; }
  pool::Pool* pool_for(const std::string& user, int shard, Status* error) override;
  const std::shared_ptr<const router::Directory>& directory() override { return directory_; }
  bool directory_lease_valid() override;
  bool directory_read_lease_valid() override;
  void request_directory_refresh() override;
  const router::RoutingRules& routing_rules() override { return rules_; }
  std::shared_ptr<net::TlsContext> server_tls() override { return tls_; }
  session::StatementRegistry& statements() override { return statements_; }
  wire::CancelKey register_cancel(session::Session* session) override;
  void unregister_cancel(wire::CancelKey key) override;
  void forward_cancel(wire::CancelKey key, std::function<void()> delivered) override;
  bool shutting_down() override { return shutting_down_; }
  void session_closed(session::Session* session) override;
  stats::WorkerTraffic& traffic() override { return traffic_; }
  bool hold_if_paused(session::Session* session) override;
  bool queue_for_cutover(session::Session* session) override;
  void dequeue_from_cutover(session::Session* session) override;
  session::StartingReads& starting_reads() override { return starting_reads_; }
  void admin_command(std::string_view sql, std::function<void(std::string)> reply) override;
  std::string next_two_phase_gid() override;
  void decide_commit(const std::string& gid, const std::vector<std::string>& shards,
                     std::function<void(twopc::Decision, std::string)> done) override;

 private:
  void accept(std::unique_ptr<net::Connection> connection);
  void apply_reload(std::shared_ptr<const config::Config> config, std::shared_ptr<net::TlsContext> tls);
  void shutdown(admin::ShutdownMode mode);
  stats::Snapshot snapshot(bool lists);
  pool::PoolSettings pool_settings() const;
  Result<pool::BackendTarget> target_for(const config::Config& config, const std::string& user,
                                         const std::string& shard) const;
  void stop_when_idle();
  void acknowledge_after_older_reads(uint64_t version, std::function<void()> installed);

  int index_;
  net::Loop loop_;
  std::shared_ptr<const config::Config> config_;
  CancelRegistry& cancels_;
  std::atomic<int>& client_count_;
  int client_cap_ = INT_MAX;
  std::shared_ptr<net::TlsContext> tls_;
  std::shared_ptr<const router::Directory> directory_;
  DirectoryAccess directory_access_;
  router::RoutingRules rules_;
  pool::BudgetRegistry& budgets_;
  const std::atomic<bool>& paused_;
  std::atomic<int>& cutover_queued_;  // writes waiting for a cutover, all workers
  std::vector<session::Session*> cutover_queue_;
  session::StartingReads starting_reads_;
  std::unique_ptr<net::Timer> read_patience_;  // fails reads still starting under an older directory
  std::unique_ptr<net::Listener> listener_;
  std::unordered_map<session::Session*, std::unique_ptr<session::Session>> sessions_;
  std::unordered_map<uint64_t, session::Session*> by_cancel_key_;
  struct PoolEntry {
    std::unique_ptr<pool::Pool> pool;
    std::string user;  // the client user whose login created it
  };
  std::map<std::string, PoolEntry> pools_;  // by BackendTarget::key()
  session::StatementRegistry statements_;
  stats::WorkerTraffic traffic_;         // includes the byte counts of closed client connections
  std::vector<session::Session*> held_;  // sessions PAUSE holds
  std::unique_ptr<admin::ConsoleHost> console_host_;
  std::unique_ptr<admin::Console> console_;
  bool shutting_down_ = false;
  uint64_t two_phase_seq_ = 0;  // of this worker's gids
  std::thread thread_;
};

}  // namespace sw::app
