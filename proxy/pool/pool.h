// Server connections to one target (shard + login) on one worker loop. Hands idle connections
// to waiters LIFO, opens new ones up to `size`, times out waiters after query_wait_timeout,
// closes connections idle past idle_timeout or older than server_lifetime.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "net/timer.h"
#include "pool/backend.h"
#include "pool/budget.h"
#include "stats/snapshot.h"

namespace sw::net {
class Loop;
class TlsContext;
}  // namespace sw::net

namespace sw::pool {

class CancelSender;

struct PoolSettings {
  int size = 20;  // servers per target across all workers (the Budget's cap)
  uint64_t idle_timeout_ms = 60000;
  uint64_t query_wait_timeout_ms = 5000;
  uint64_t server_lifetime_ms = 3600000;
  uint64_t connect_timeout_ms = 5000;
  uint64_t max_message_size = 256ull << 20;
  // Sent in each server's startup packet. Empty, PostgreSQL's default: a client that sets none
  // is told '' (ParameterStatus, SHOW, after RESET), never a name of the proxy's.
  std::string application_name;
};

class Pool : private BackendUser {
 public:
  // Backend::applied_state of a server reset by release_after_reset: matches no client's settings.
  static constexpr const char* kStateAfterReset = "-- reset by pool.server_reset_query";

  class Waiter {
   public:
    virtual ~Waiter() = default;
    virtual void on_backend_ready(Backend* backend) = 0;
    virtual void on_backend_failed(const Status& why) = 0;
  };

  struct Counts {
    int active = 0, idle = 0, connecting = 0, waiting = 0;
    uint64_t max_wait_ms = 0;
  };

  Pool(net::Loop& loop, BackendTarget target, PoolSettings settings, std::shared_ptr<Budget> budget);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // An idle server (now Active), or nullptr: the waiter is queued and called back later. The
  // most recently released one, unless one of the kOwnServerDepth most recently released last ran
  // for `client` (its Backend::sequences_of, non-zero): that one, so the client finds its
  // session's sequence values again and nobody else's need discarding. The search is bounded: it
  // runs once per transaction, and a server idle longer than that is rarely the client's.
  static constexpr size_t kOwnServerDepth = 8;
  Backend* acquire(Waiter* waiter, uint64_t client = 0);
  void cancel_wait(Waiter* waiter);
  // A server whose user is done with it. Clean servers go back idle (or to a waiter); others close.
  void release(Backend* backend, bool clean);
  // Session pooling: a clean server whose client left runs `reset_query` first and is released
  // clean once it answered without error at an idle ReadyForQuery, else closed ("" closes it).
  void release_after_reset(Backend* backend, const std::string& reset_query);

  void update_settings(const PoolSettings& settings);
  // Closes idle servers now and the others when released (the target changed or shutdown).
  void retire();
  bool retired() const { return retired_; }
  bool empty() const { return backends_.empty() && waiters_.empty(); }

  // Sends a CancelRequest for `backend`'s current query over a new connection; `delivered` runs
  // once the server closed it (PostgreSQL has then signalled the backend) or it failed. Until
  // then the backend, if released, goes to no other client (docs/architecture.md §4.3).
  void send_cancel(const Backend& backend, std::function<void()> delivered = {});
  // The cancel for `backend` is delivered or given up (CancelSender's).
  void on_cancel_finished(const Backend* backend);

  const BackendTarget& target() const { return target_; }
  const PoolSettings& settings() const { return settings_; }
  net::Loop& loop() { return loop_; }
  Counts counts() const;
  // Counters the session layer adds to as it serves queries and transactions with this pool.
  stats::PoolTraffic& traffic() { return traffic_; }
  // For the admin console and metrics (pool_report.cc): the pool's row (client counts are the
  // sessions' to fill in) and one row per server connection.
  stats::PoolInfo report() const;
  void report_servers(int worker, std::vector<stats::ServerInfo>& out) const;
  // ParameterStatus set of the last server that logged in (what new clients are told).
  const std::map<std::string, std::string>& server_parameters() const { return server_parameters_; }
  bool has_server_parameters() const { return !server_parameters_.empty(); }
  // What a server reported once a client's startup settings were applied (the session's startup
  // probe, docs/architecture.md §4.2), by those settings (`startup`, the session's key for them):
  // a client logging in with the same settings is told the same without waiting for a server.
  // Forgotten when a server's login reports other parameters; at most kMaxProbedStartups kept.
  const std::map<std::string, std::string>* probed_parameters(const std::string& startup) const;
  void remember_probed_parameters(const std::string& startup, std::map<std::string, std::string> reported);
  static constexpr size_t kMaxProbedStartups = 64;
  std::shared_ptr<net::TlsContext> tls_context(Status* error);

 private:
  friend class Backend;
  struct Waiting {
    Waiter* waiter;
    uint64_t since_ms;
  };
  // BackendUser: the answers to a server reset (pool_reset.cc).
  void on_backend_readable(Backend& backend) override;
  void on_backend_lost(Backend& backend, const Status& why) override;
  void finish_reset(Backend* backend, bool ok, bool drops_statements);
  void on_login_done(Backend* backend);
  void on_login_failed(Backend* backend, const Status& why);
  void on_backend_closed(Backend* backend);
  void hand_to_waiter_or_idle(Backend* backend);
  void grow_if_needed();
  void maintain();
  void destroy_later(Backend* backend);
  // A closed server leaves: its slot goes back to the budget, the object is deleted next turn.
  void finish_closed(std::shared_ptr<Backend> doomed);
  // Servers sent Terminate that have not hung up yet, past kHangupWaitMs: closed from this side.
  void close_lingering(uint64_t now);
  void note_waiting();
  void shed_one_idle();

  net::Loop& loop_;
  BackendTarget target_;
  PoolSettings settings_;
  std::map<Backend*, std::unique_ptr<Backend>> backends_;
  // Terminated servers waiting for the server to hang up, with when they were closed: they hold
  // their pool.size slot until then (at most kHangupWaitMs).
  std::map<Backend*, std::pair<std::shared_ptr<Backend>, uint64_t>> terminating_;
  std::vector<Backend*> idle_;  // LIFO: the warmest server first
  std::deque<Waiting> waiters_;
  // Servers running a reset query: whether an error came, whether the query drops the server's
  // prepared statements (Backend::prepared is emptied only then: a ROLLBACK keeps them).
  struct Resetting {
    bool failed = false;
    bool drops_statements = false;
  };
  std::map<Backend*, Resetting> resetting_;
  std::map<std::string, std::string> server_parameters_;
  std::map<std::string, std::map<std::string, std::string>> probed_parameters_;
  std::shared_ptr<net::TlsContext> tls_;
  struct CancelInFlight {
    CancelInFlight();
    CancelInFlight(CancelInFlight&&) noexcept;
    ~CancelInFlight();
    std::unique_ptr<CancelSender> sender;
    std::unique_ptr<net::Connection> connection;
    uint64_t started_ms = 0;
  };
  std::list<CancelInFlight> cancels_;
  std::unordered_map<const Backend*, int> cancels_pending_;  // cancels not yet delivered, by server
  std::vector<Backend*> parked_;  // released servers waiting for their cancels' delivery
  void forget_cancels_of(const Backend* backend);
  std::shared_ptr<Budget> budget_;
  stats::PoolTraffic traffic_;
  uint64_t closed_bytes_received_ = 0;  // socket bytes of servers already closed
  uint64_t closed_bytes_sent_ = 0;
  net::Timer maintenance_;
  bool retired_ = false;
};

}  // namespace sw::pool
