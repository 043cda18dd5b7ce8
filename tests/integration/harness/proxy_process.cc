#include "harness/proxy_process.h"

#include <csignal>
#include <mutex>

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness/pg_cluster.h"

namespace it {

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

namespace {
const auto& q = yaml_quote;
}  // namespace

std::string render_config(const ProxyOptions& o, int listen_port, int shard_port) {
  std::ostringstream y;
  y << "# written by the shardwire integration test harness\n";
  y << "listen:\n";
  y << "  host: 127.0.0.1\n";
  y << "  port: " << listen_port << "\n";
  if (o.reuse_port) y << "  reuse_port: true\n";
  if (!o.tls_cert_file.empty() && !o.tls_key_file.empty()) {
    y << "  tls:\n";
    y << "    cert_file: " << q(o.tls_cert_file) << "\n";
    y << "    key_file: " << q(o.tls_key_file) << "\n";
  }
  y << "workers: " << o.workers << "\n";
  y << "log_level: " << o.log_level << "\n";
  y << "auth:\n";
  y << "  method: " << o.auth_method << "\n";
  y << "  login_timeout: " << o.login_timeout << "\n";
  y << "  users:\n";
  for (const auto& u : o.users) {
    y << "    - name: " << q(u.name) << "\n";
    y << "      password: " << q(u.password) << "\n";
  }
  y << "pool:\n";
  y << "  mode: " << o.pool_mode << "\n";
  y << "  size: " << o.pool_size << "\n";
  y << "  idle_timeout: " << o.idle_timeout << "\n";
  y << "  query_wait_timeout: " << o.query_wait_timeout << "\n";
  y << "  server_lifetime: " << o.server_lifetime << "\n";
  y << "  server_connect_timeout: " << o.server_connect_timeout << "\n";
  std::string dsn = o.shard_dsn;
  if (dsn.empty())
    dsn = "host=127.0.0.1 port=" + std::to_string(shard_port) + " dbname=" + o.dbname +
          " user=" + o.shard_user + " password=" + o.shard_password;
  y << "shards:\n";
  y << "  - name: s0\n";
  y << "    dsn: " << q(dsn) << "\n";
  y << o.extra_yaml;
  return y.str();
}

int line_of(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

std::string shardwire_binary() {
  if (const char* b = std::getenv("SHARDWIRE_BIN"); b && *b) return b;
#ifdef SHARDWIRE_BINARY
  return SHARDWIRE_BINARY;
#else
  return "";
#endif
}

ProxyProcess::ProxyProcess(const PgCluster& cluster, ProxyOptions options) : options_(std::move(options)) {
  start(cluster.port());
}

ProxyProcess::ProxyProcess(int shard_port, ProxyOptions options) : options_(std::move(options)) {
  start(shard_port);
}

ProxyProcess::~ProxyProcess() {
  if (sanitized_mode()) {
    // An orderly exit, so LeakSanitizer looks at what is left; then the log is read for reports.
    if (process_.running()) {
      process_.signal(SIGINT);
      process_.wait_exit(std::chrono::seconds(20));
    }
    process_.kill_and_wait();
    note_sanitizer_reports(log_path(), log());
    return;
  }
  process_.kill_and_wait();
}

bool sanitized_mode() {
  const char* v = std::getenv("SHARDWIRE_IT_SANITIZED");
  return v && std::string(v) == "1";
}

namespace {
std::mutex g_reports_mutex;
std::vector<std::string> g_reports;
}  // namespace

void note_sanitizer_reports(const std::string& source, const std::string& text) {
  static const char* const kMarkers[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                         "runtime error:", "WARNING: ThreadSanitizer"};
  for (const char* marker : kMarkers) {
    size_t at = text.find(marker);
    if (at == std::string::npos) continue;
    size_t from = text.rfind('\n', at);
    from = from == std::string::npos ? 0 : from + 1;
    std::lock_guard<std::mutex> lock(g_reports_mutex);
    g_reports.push_back(source + ":\n" + text.substr(from, 4000));
    return;
  }
}

std::vector<std::string> sanitizer_reports() {
  std::lock_guard<std::mutex> lock(g_reports_mutex);
  return g_reports;
}

void ProxyProcess::start(int shard_port) {
  std::string bin = shardwire_binary();
  if (bin.empty())
    throw std::runtime_error(
        "the shardwire binary is not built (CMake target `shardwire` missing) "
        "and SHARDWIRE_BIN is not set");
  if (access(bin.c_str(), X_OK) != 0)
    throw std::runtime_error("shardwire binary " + bin +
                             " does not exist or is not executable; build it first");
  // SHARDWIRE_IT_LOG_LEVEL=debug raises the level of every proxy a test starts (for debugging).
  if (const char* lvl = std::getenv("SHARDWIRE_IT_LOG_LEVEL"); lvl && *lvl && options_.log_level == "info")
    options_.log_level = lvl;
  std::string last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_port();
    config_text_ = render_config(options_, port_, shard_port);
    write_file(config_path(), config_text_);
    CommandOptions run;
    run.env = options_.env;
    process_ = Background({bin, "--config", config_path()}, log_path(), run);
    bool up = wait_until([&] { return !process_.running() || port_accepts(port_); }, 15s, 10ms);
    if (up && process_.running()) return;
    std::string why =
        !up ? "did not accept connections on port " + std::to_string(port_) + " within 15 s"
            : "exited (" + describe_wait_status(*process_.status()) + ") before accepting connections";
    last = "shardwire " + why + "\n--- config ---\n" + config_text_ + "--- log tail ---\n" + log_tail(30);
    process_.kill_and_wait();
    // A port taken by someone else between free_port() and bind is the only reason to retry.
    if (log().find("in use") == std::string::npos) break;
  }
  throw std::runtime_error(last);
}

void ProxyProcess::restart(const std::map<std::string, std::string>& env) {
  process_.kill_and_wait();
  CommandOptions run;
  run.env = env;
  process_ = Background({shardwire_binary(), "--config", config_path()}, log_path(), run);
  bool up = wait_until([&] { return !process_.running() || port_accepts(port_); }, 15s, 10ms);
  if (!up || !process_.running())
    throw std::runtime_error("shardwire did not come back on port " + std::to_string(port_) +
                             "\n--- log tail ---\n" + log_tail(30));
}

std::string ProxyProcess::conninfo(const std::string& user, const std::string& password,
                                   const std::string& extra) const {
  std::string s =
      "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=" + options_.dbname + " user=" + user;
  if (!password.empty()) s += " password=" + password;
  if (!extra.empty()) s += " " + extra;
  return s;
}

void ProxyProcess::write_config(const std::string& text) {
  write_file(config_path(), text);
  config_text_ = text;
}

std::string ProxyProcess::log() const { return read_file(log_path()); }

std::string ProxyProcess::log_tail(size_t lines) const { return tail_lines(log(), lines); }

bool ProxyProcess::wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) const {
  return wait_until([&] { return log().find(needle) != std::string::npos; }, timeout, 20ms);
}

bool direct_mode() {
  const char* d = std::getenv("SHARDWIRE_IT_DIRECT");
  return d && *d && std::string(d) != "0";
}

Target::Target(const PgCluster& cluster, ProxyOptions options)
    : cluster_(cluster), options_(std::move(options)) {
  if (!direct_mode()) proxy_.emplace(cluster, options_);
}

int Target::port() const { return proxy_ ? proxy_->port() : cluster_.port(); }

std::string Target::conninfo(const std::string& user, const std::string& password,
                             const std::string& extra) const {
  std::string s =
      "host=127.0.0.1 port=" + std::to_string(port()) + " dbname=" + options_.dbname + " user=" + user;
  if (!password.empty()) s += " password=" + password;
  if (!extra.empty()) s += " " + extra;
  return s;
}

ConnectResult Target::connect(const std::string& extra, std::chrono::milliseconds timeout) const {
  return it::connect(conninfo("app", "secret", extra), timeout);
}

PgConn Target::connect_or_throw(const std::string& extra) const {
  ConnectResult r = connect(extra);
  if (!r.ok)
    throw std::runtime_error("connect through " + std::string(direct() ? "PostgreSQL" : "shardwire") +
                             " failed: " + r.error + (direct() ? "" : "\n--- proxy log ---\n" + log_tail()));
  return std::move(r.conn);
}

ProxyProcess& Target::proxy() {
  if (!proxy_) throw std::logic_error("Target::proxy() in direct mode");
  return *proxy_;
}

std::string Target::log_tail(size_t lines) const { return proxy_ ? proxy_->log_tail(lines) : std::string(); }

}  // namespace it
