// The validated configuration (docs/architecture.md §12). Loading is the one place that throws: a ConfigError
// names the file, line and key. Everything downstream reads plain structs.
#pragma once

#include <algorithm>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sw::config {

using Duration = std::chrono::milliseconds;

// what() reads "<file>:<line>: <key>: <message>"; ":<line>" is left out when the line is unknown
// (0) and "<key>: " when there is no key (a YAML syntax error, an unreadable file).
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, std::string key, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }               // 1-based; 0 when unknown (missing key)
  const std::string& key() const { return key_; }  // dotted path, e.g. "pool.size"

 private:
  std::string file_;
  int line_;
  std::string key_;
};

// libpq-style "key=value key='quoted value'" connection string.
struct ConnInfo {
  std::string host = "127.0.0.1";
  int port = 5432;
  std::string dbname;
  std::string user;
  std::string password;
  std::string sslmode = "disable";  // disable | allow | prefer | require | verify-ca | verify-full
  std::string sslrootcert;
  std::map<std::string, std::string> other;  // any other keyword, kept for libpq users (mover)
};
// Throws std::invalid_argument with a message naming the bad keyword.
ConnInfo parse_conninfo(const std::string& dsn);

struct Tls {
  std::string cert_file;
  std::string key_file;
  bool enabled() const { return !cert_file.empty() && !key_file.empty(); }
};

struct Listen {
  std::string host = "127.0.0.1";
  int port = 6432;
  int max_client_connections = 10000;
  // Share the port with another process already listening on it (SO_REUSEPORT, e.g. a rolling
  // restart). Off: a port another process listens on stops start-up. The workers of one process
  // always share the port among themselves.
  bool reuse_port = false;
  Tls tls;
};

enum class AuthMethod { Trust, Md5, ScramSha256 };

struct User {
  std::string name;
  std::string password;  // cleartext or a SCRAM-SHA-256$... verifier (scram only)
};

struct Auth {
  AuthMethod method = AuthMethod::ScramSha256;
  std::vector<User> users;
  Duration login_timeout{std::chrono::seconds(60)};  // client must finish startup+auth within it
  const User* find(const std::string& name) const;
};

enum class PoolMode { Transaction, Session };

struct Pool {
  PoolMode mode = PoolMode::Transaction;
  int size = 20;                                             // per shard and user, all workers
  Duration idle_timeout{std::chrono::seconds(60)};           // close server conns idle longer
  Duration query_wait_timeout{std::chrono::seconds(5)};      // client waiting for a server conn
  Duration server_lifetime{std::chrono::seconds(3600)};      // close server conns older, when idle
  Duration server_connect_timeout{std::chrono::seconds(5)};  // TCP connect + backend login
  // Session pooling: run on a server whose client left, before it goes back to the pool ("":
  // the server is closed instead).
  std::string server_reset_query = "DISCARD ALL";
  // Transaction pooling: clients kept on their server until they disconnect (a temporary table,
  // LISTEN, ...; docs/architecture.md §5.7), across all workers. -1: half of `size`, at least 1.
  int max_pinned_clients = -1;
  int pinned_limit() const { return max_pinned_clients >= 0 ? max_pinned_clients : std::max(1, size / 2); }
};

struct Admin {
  std::string database = "shardwire";
  std::vector<std::string> users;
};

struct Metrics {
  std::string listen;  // "host:port"; empty = disabled
};

struct Catalog {
  std::string dsn;
};

struct Shard {
  std::string name;
  std::string dsn;  // as written (never logged: may hold a password)
  ConnInfo conn;
};

struct ShardedTable {
  std::string name;
  std::string key;
  std::string type = "bigint";  // smallint | integer | bigint | text | varchar | uuid
  std::string version_column;   // optional
};

// What a transaction that writes on a second shard gets: two-phase commit (needs catalog.dsn,
// where the commit decisions are recorded) or the 0A000 refusal.
enum class CrossShardTransactions { TwoPhase, Refuse };

struct Sharding {
  int buckets = 4096;
  std::string default_shard;  // defaults to the first shard
  std::vector<ShardedTable> tables;
  // Reference tables: a full copy on every shard ("plans" or "app.plans"). Reads join them
  // locally on any shard; writes and DDL reach every shard (docs/architecture.md §6.4).
  std::vector<std::string> reference_tables;
  Duration directory_lease{std::chrono::seconds(30)};
  CrossShardTransactions cross_shard_transactions = CrossShardTransactions::TwoPhase;
};

struct Mover {
  int64_t copy_rows_per_sec = 50000;
  int copy_streams = 1;  // connection pairs one migration's copy uses at once (docs/architecture.md §8.3)
  Duration rollback_window{std::chrono::hours(24)};
  int64_t rollback_wal_budget = 1ll << 30;  // bytes
  int max_concurrent = 2;
  std::string user;
  std::string password;
};

// What a cutover does with source transactions still open after drain_timeout: abort (undo the
// cutover, retry later) or terminate (end those backends on the source and go on).
enum class DrainAction { Abort, Terminate };

struct Cutover {
  Duration queue_timeout{std::chrono::seconds(2)};
  int queue_max = 10000;
  Duration drain_timeout{std::chrono::seconds(5)};
  DrainAction drain_action = DrainAction::Abort;
};

// Reads that span shards, merged in the proxy (ORDER BY, aggregates, DISTINCT).
struct Fanout {
  int max_rows_buffered = 1000;             // rows held per shard; a shard ahead of the merge waits
  int max_groups = 100000;                  // GROUP BY groups / DISTINCT keys; 54000 beyond
  int max_distinct_values = 1000000;        // count(DISTINCT) values held over all groups; 54000 beyond
  uint64_t max_scroll_bytes = 64ull << 20;  // rows a SCROLL cursor over several shards keeps; 54000 beyond
};

struct Config {
  std::string file;      // where it was loaded from
  std::string database;  // logical database clients connect to; default: first shard's dbname
  Listen listen;
  int workers = 1;
  std::string log_level = "info";
  uint64_t max_message_size = 256ull << 20;
  int statement_cache = 16384;  // statement shapes cached per worker thread; 0 = none
  // A graceful stop (SIGTERM, the console's SHUTDOWN) waits this long for transactions in progress
  // (and, for SHUTDOWN WAIT_FOR_CLIENTS, clients) before closing what is left and exiting 0.
  // Below an orchestrator's kill deadline (Kubernetes' terminationGracePeriodSeconds, 30 s).
  Duration shutdown_timeout{std::chrono::seconds(25)};
  Admin admin;
  Metrics metrics;
  Auth auth;
  Pool pool;
  Catalog catalog;
  std::vector<Shard> shards;
  Sharding sharding;
  Mover mover;
  Cutover cutover;
  Fanout fanout;

  const Shard* find_shard(const std::string& name) const;
  std::vector<std::string> shard_names() const;  // in config order
};

// Loads and validates. Throws ConfigError naming file, line and key; unknown keys are errors.
Config load_file(const std::string& path);
Config load_string(const std::string& text, const std::string& file_name);

// The configuration as flat dotted keys in file order (config_settings.cc). `value` is exact
// and may hold secrets (compare it, never print it); `shown` is safe to display.
struct Setting {
  std::string key;
  std::string value;
  std::string shown;
  bool restart = false;  // a running proxy cannot apply a change (listen.*, workers)
};
std::vector<Setting> settings(const Config& config);

// Settings that differ between two configs, as dotted keys; and which of them a running proxy
// cannot apply without a restart (listen address, workers).
struct ConfigDiff {
  std::vector<std::string> changed;
  std::vector<std::string> need_restart;
};
ConfigDiff diff(const Config& running, const Config& loaded);

// Durations: "250ms", "5s", "10m", "24h", or a bare number of seconds.
Duration parse_duration(const std::string& text);  // throws std::invalid_argument

// Byte sizes: "256MB", "1GB", "64kB" (powers of 1024, as PostgreSQL reads them), or a bare number
// of bytes. Throws std::invalid_argument.
uint64_t parse_byte_size(const std::string& text);

}  // namespace sw::config
