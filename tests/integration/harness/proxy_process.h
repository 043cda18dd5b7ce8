// shardwire under test: writes a YAML config into a temp dir, runs `shardwire --config FILE` with
// stdout+stderr in a log file, waits until its port accepts connections. The binary is
// $SHARDWIRE_BIN, else the CMake target's path compiled in as SHARDWIRE_BINARY.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/pg_client.h"
#include "harness/process.h"

namespace it {

class PgCluster;

struct ProxyUser {
  std::string name;
  std::string password;
};

struct ProxyOptions {
  std::string auth_method = "scram-sha-256";  // trust | md5 | scram-sha-256
  std::vector<ProxyUser> users = {{"app", "secret"}};
  std::string login_timeout = "60s";
  std::string pool_mode = "transaction";  // transaction | session
  int pool_size = 20;
  std::string idle_timeout = "60s";
  std::string query_wait_timeout = "5s";
  std::string server_lifetime = "3600s";
  std::string server_connect_timeout = "5s";
  int workers = 2;
  std::string log_level = "info";
  bool reuse_port = false;    // listen.reuse_port: share the port with another process
  std::string tls_cert_file;  // both set -> listen.tls
  std::string tls_key_file;
  std::string dbname = "app";  // shard database, also what clients connect to
  std::string shard_user = "app";
  std::string shard_password = "secret";
  std::string shard_dsn;                   // overrides dbname/user/password when set
  std::string extra_yaml;                  // appended verbatim
  std::map<std::string, std::string> env;  // added to the proxy's environment (fault hooks)
};

// The config file text, one key per line (tests find line numbers in it).
std::string render_config(const ProxyOptions& options, int listen_port, int shard_port);
// A YAML double-quoted scalar.
std::string yaml_quote(const std::string& s);
// 1-based line of the first line containing `needle`, 0 if none.
int line_of(const std::string& text, const std::string& needle);

// Path of the shardwire binary, or "" when it is not built.
std::string shardwire_binary();

// SHARDWIRE_IT_SANITIZED=1: the binary is built with sanitizers (scripts/test.sh). Each proxy is
// then stopped with SIGINT (so LeakSanitizer runs) and its log is searched for sanitizer reports;
// the test runner fails when any was found.
bool sanitized_mode();
void note_sanitizer_reports(const std::string& source, const std::string& text);
std::vector<std::string> sanitizer_reports();

class ProxyProcess {
 public:
  ProxyProcess(const PgCluster& cluster, ProxyOptions options = {});
  ProxyProcess(int shard_port, ProxyOptions options);
  ~ProxyProcess();
  ProxyProcess(const ProxyProcess&) = delete;
  ProxyProcess& operator=(const ProxyProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  const ProxyOptions& options() const { return options_; }
  const std::string& dir() const { return dir_.path(); }
  std::string config_path() const { return dir_.file("shardwire.yaml"); }
  std::string log_path() const { return dir_.file("shardwire.log"); }
  const std::string& config_text() const { return config_text_; }

  std::string conninfo(const std::string& user = "app", const std::string& password = "secret",
                       const std::string& extra = "sslmode=disable") const;

  void write_config(const std::string& text);  // replaces the file (atomically)
  // Starts the proxy again (after it exited or was killed) on the same port and config file, with
  // `env` instead of the options' environment; the log is appended to.
  void restart(const std::map<std::string, std::string>& env = {});
  bool signal(int sig) { return process_.signal(sig); }
  bool running() { return process_.running(); }
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) { return process_.wait_exit(timeout); }

  std::string log() const;
  std::string log_tail(size_t lines = 40) const;
  // Polls the log until it contains `needle` (true) or the timeout passes (false).
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) const;

 private:
  void start(int shard_port);

  ProxyOptions options_;
  TempDir dir_{"shardwire-proxy-"};
  int port_ = 0;
  std::string config_text_;
  Background process_;
};

// What a test talks to: shardwire in front of the cluster, or, with SHARDWIRE_IT_DIRECT=1, the
// cluster itself (to check the tests and harness against real PostgreSQL behaviour).
bool direct_mode();

class Target {
 public:
  explicit Target(const PgCluster& cluster, ProxyOptions options = {});
  bool direct() const { return !proxy_; }
  int port() const;
  const std::string& dbname() const { return options_.dbname; }
  std::string conninfo(const std::string& user = "app", const std::string& password = "secret",
                       const std::string& extra = "sslmode=disable") const;
  ConnectResult connect(const std::string& extra = "sslmode=disable",
                        std::chrono::milliseconds timeout = 15s) const;
  PgConn connect_or_throw(const std::string& extra = "sslmode=disable") const;
  ProxyProcess& proxy();                          // throws in direct mode
  std::string log_tail(size_t lines = 40) const;  // proxy log tail, "" in direct mode

 private:
  const PgCluster& cluster_;
  ProxyOptions options_;
  std::optional<ProxyProcess> proxy_;
};

// Polls `pred` every `every` until it is true or `timeout` passes.
template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds timeout, std::chrono::milliseconds every = 50ms);

}  // namespace it

#include <thread>
namespace it {
template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds timeout, std::chrono::milliseconds every) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}
}  // namespace it
