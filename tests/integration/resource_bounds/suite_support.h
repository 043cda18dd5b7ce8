// Helpers of the resource_bounds suite around the proxy under test: restarting it with a
// listen.* key, running it under a low open file limit, this process's own descriptors, a
// bystander whose queries must keep completing while the proxy is under load, a stream of
// newcomers that log in and query, and raw clients that never finish logging in (silent, a
// startup packet dribbled one byte per second, stopped after the startup packet, stopped in the
// middle of SCRAM).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/pg_client.h"
#include "harness/process.h"
#include "harness/proxy_process.h"

namespace it::rb {

int env_int(const char* name, int fallback);

// ProxyOptions has no listen.* keys: `line` goes under `listen:` and shardwire restarts on the new
// file (listen.* changes need a restart). The restarted process inherits this process's limits.
void restart_with_listen_key(ProxyProcess& proxy, const std::string& line);

// Raises this process's soft open file limit to its hard limit; fails the test case when the hard
// limit cannot hold `clients` sockets and some to spare.
void raise_own_fd_limit(int clients);

// While alive, shardwire is started (SHARDWIRE_BIN) through a shell wrapper that sets both its
// soft and hard open file limits to `limit` and, as root, drops CAP_SYS_RESOURCE, so shardwire
// cannot raise them.
class FdLimitedProxyBinary {
 public:
  explicit FdLimitedProxyBinary(int limit);
  ~FdLimitedProxyBinary();
  FdLimitedProxyBinary(const FdLimitedProxyBinary&) = delete;
  FdLimitedProxyBinary& operator=(const FdLimitedProxyBinary&) = delete;

 private:
  TempDir dir_{"shardwire-fdlimit-"};
  std::optional<std::string> previous_;
};

// Runs a small query in a loop on its own connection until stopped, keeping the worst latency.
// The first failure ends the loop (a broken connection would fail every later query alike).
class Bystander {
 public:
  explicit Bystander(const std::string& conninfo);
  ~Bystander() { stop(); }
  Bystander(const Bystander&) = delete;
  Bystander& operator=(const Bystander&) = delete;

  void stop();
  int done() const { return done_.load(); }
  int failed() const { return failed_.load(); }
  long long max_ms() const { return max_ms_.load(); }
  const std::string& first_failure() const { return first_failure_; }  // read after stop()

 private:
  PgConn conn_;
  std::atomic<bool> stop_{false};
  std::atomic<int> done_{0}, failed_{0};
  std::atomic<long long> max_ms_{0};
  std::string first_failure_;
  std::thread thread_;
};

// New clients, one after another until stopped: each logs in, runs SELECT 1 and leaves.
class NewcomerLoop {
 public:
  explicit NewcomerLoop(std::string conninfo);
  ~NewcomerLoop() { stop(); }
  NewcomerLoop(const NewcomerLoop&) = delete;
  NewcomerLoop& operator=(const NewcomerLoop&) = delete;

  void stop();
  int served() const { return served_.load(); }
  int failed() const { return failed_.load(); }
  const std::string& first_failure() const { return first_failure_; }  // read after stop()

 private:
  std::string conninfo_;
  std::atomic<bool> stop_{false};
  std::atomic<int> served_{0}, failed_{0};
  std::string first_failure_;
  std::thread thread_;
};

enum class StallKind { Silent, Slowloris, AfterStartup, MidScram };
const char* stall_name(StallKind kind);

// One stalled client and what the proxy did to it.
struct StalledClient {
  StallKind kind;
  std::unique_ptr<RawSocket> socket;
  std::chrono::steady_clock::time_point connected;
  std::string startup;   // the startup packet a slowloris dribbles
  size_t dribbled = 0;   // bytes of it sent so far
  std::string received;  // everything the proxy sent after the stall began
  bool closed = false;
  long long closed_after_ms = -1;  // from connect to the proxy's close
};

// Opens `count` clients of `kind` to 127.0.0.1:`port` and brings each to its stall point (for
// MidScram: SASLInitialResponse sent, SASLContinue received; the client-final is never sent).
// Throws if the proxy does not answer the way a login in progress should.
std::vector<StalledClient> open_stalled(int port, StallKind kind, int count);

// Drives the clients until every one is closed by the proxy or `timeout` passes: slowloris
// clients send their next startup byte each second; everything received is kept per client.
void wait_until_closed(std::vector<StalledClient>& clients, std::chrono::milliseconds timeout);

}  // namespace it::rb
