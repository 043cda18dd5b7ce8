// read_document: one function per top-level section of the config file. Per-field rules live here
// (ranges, choices, DSN syntax); rules that relate fields to each other are in config_validate.cc.
#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <string>

#include "config/loader.h"

namespace sw::config::detail {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr uint64_t kMaxMessageSize = 1ull << 30;  // PostgreSQL's own limit (MaxAllocSize)

void read_nonempty(MapReader& m, std::string_view key, std::string& out) {
  std::string value;
  if (!m.read_string(key, value)) return;
  if (value.empty()) m.fail(key, "must not be empty");
  out = std::move(value);
}

// A DSN error names the key, never the DSN: it may hold a password.
ConnInfo read_dsn(MapReader& m, std::string_view key, std::string& out) {
  if (!m.read_string(key, out)) return {};
  try {
    return parse_conninfo(out);
  } catch (const std::invalid_argument& e) {
    m.fail(key, std::string("invalid connection string: ") + e.what());
  }
}

// "host:port" or "[v6addr]:port".
bool valid_host_port(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return false;
  std::string port = text.substr(colon + 1);
  if (port.size() > 5 || !std::all_of(port.begin(), port.end(),
                                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  int value = std::stoi(port);
  std::string host = text.substr(0, colon);
  if (host.find(':') != std::string::npos && !(host.front() == '[' && host.back() == ']')) {
    return false;  // a bare IPv6 address needs brackets
  }
  return value >= 1 && value <= 65535;
}

bool valid_shard_name(const std::string& name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

void read_listen(MapReader& top, Listen& out) {
  MapReader m = top.map("listen", {"host", "port", "max_client_connections", "reuse_port", "tls"});
  read_nonempty(m, "host", out.host);
  m.read_int("port", out.port, 1, 65535);
  m.read_int("max_client_connections", out.max_client_connections, 1, kMaxInt);
  std::string reuse_port;
  if (m.read_choice("reuse_port", reuse_port, {"true", "false"})) out.reuse_port = reuse_port == "true";
  MapReader tls = m.map("tls", {"cert_file", "key_file"});
  tls.read_string("cert_file", out.tls.cert_file);
  tls.read_string("key_file", out.tls.key_file);
}

void read_auth(MapReader& top, Auth& out) {
  MapReader m = top.map("auth", {"method", "users", "login_timeout"});
  std::string method;
  if (m.read_choice("method", method, {"trust", "md5", "scram-sha-256"})) {
    out.method = method == "trust" ? AuthMethod::Trust
                 : method == "md5" ? AuthMethod::Md5
                                   : AuthMethod::ScramSha256;
  }
  m.read_duration("login_timeout", out.login_timeout);
  for (auto& [node, path] : m.list("users")) {
    MapReader u(m.context(), node, path, {"name", "password"});
    User user;
    read_nonempty(u, "name", user.name);
    if (user.name.empty()) u.fail("name", "is required");
    u.read_string("password", user.password);  // required unless trust: config_validate.cc
    out.users.push_back(std::move(user));
  }
}

void read_pool(MapReader& top, Pool& out) {
  MapReader m = top.map("pool", {"mode", "size", "idle_timeout", "query_wait_timeout", "server_lifetime",
                                 "server_connect_timeout", "server_reset_query", "max_pinned_clients"});
  std::string mode;
  if (m.read_choice("mode", mode, {"transaction", "session"})) {
    out.mode = mode == "session" ? PoolMode::Session : PoolMode::Transaction;
  }
  m.read_int("size", out.size, 1, kMaxInt);
  m.read_duration("idle_timeout", out.idle_timeout);
  m.read_duration("query_wait_timeout", out.query_wait_timeout);
  m.read_duration("server_lifetime", out.server_lifetime);
  m.read_duration("server_connect_timeout", out.server_connect_timeout);
  m.read_string("server_reset_query", out.server_reset_query);
  m.read_int("max_pinned_clients", out.max_pinned_clients, 0, kMaxInt);
}

void read_shards(MapReader& top, std::vector<Shard>& out) {
  for (auto& [node, path] : top.list("shards")) {
    MapReader s(top.context(), node, path, {"name", "dsn"});
    Shard shard;
    read_nonempty(s, "name", shard.name);
    if (shard.name.empty()) s.fail("name", "is required");
    if (!valid_shard_name(shard.name)) {
      s.fail("name", "may hold only letters, digits, '_', '-' and '.', got " + quote_value(shard.name));
    }
    shard.conn = read_dsn(s, "dsn", shard.dsn);
    if (shard.dsn.empty()) s.fail("dsn", "is required");
    out.push_back(std::move(shard));
  }
}

// Normalizes the spellings PostgreSQL accepts for the key types the bucket hash supports.
std::string normalize_key_type(const std::string& type) {
  if (type == "int" || type == "int4") return "integer";
  if (type == "int2") return "smallint";
  if (type == "int8") return "bigint";
  return type;
}

void read_sharding(MapReader& top, Sharding& out) {
  MapReader m = top.map("sharding", {"buckets", "default_shard", "tables", "reference_tables",
                                     "directory_lease", "cross_shard_transactions"});
  m.read_int("buckets", out.buckets, 1, 1 << 20);
  read_nonempty(m, "default_shard", out.default_shard);
  m.read_duration("directory_lease", out.directory_lease);
  m.read_string_list("reference_tables", out.reference_tables);
  std::string cross;
  if (m.read_choice("cross_shard_transactions", cross, {"two_phase", "refuse"})) {
    out.cross_shard_transactions =
        cross == "refuse" ? CrossShardTransactions::Refuse : CrossShardTransactions::TwoPhase;
  }
  for (auto& [node, path] : m.list("tables")) {
    MapReader t(m.context(), node, path, {"name", "key", "type", "version_column"});
    ShardedTable table;
    read_nonempty(t, "name", table.name);
    if (table.name.empty()) t.fail("name", "is required");
    read_nonempty(t, "key", table.key);
    if (table.key.empty()) t.fail("key", "is required (the shard-key column)");
    if (t.read_choice(
            "type", table.type,
            {"smallint", "integer", "int", "int2", "int4", "int8", "bigint", "text", "varchar", "uuid"})) {
      table.type = normalize_key_type(table.type);
    }
    read_nonempty(t, "version_column", table.version_column);
    out.tables.push_back(std::move(table));
  }
}

void read_mover(MapReader& top, Mover& out) {
  MapReader m = top.map("mover", {"copy_rows_per_sec", "copy_streams", "rollback_window",
                                  "rollback_wal_budget", "max_concurrent", "user", "password"});
  m.read_int64("copy_rows_per_sec", out.copy_rows_per_sec, 1, std::numeric_limits<int64_t>::max());
  m.read_int("copy_streams", out.copy_streams, 1, 16);
  m.read_duration("rollback_window", out.rollback_window);
  uint64_t budget = 0;
  if (m.read_size("rollback_wal_budget", budget, 1ull << 50)) {
    out.rollback_wal_budget = static_cast<int64_t>(budget);
  }
  m.read_int("max_concurrent", out.max_concurrent, 0, 64);  // 0: this instance runs no migrations
  m.read_string("user", out.user);
  m.read_string("password", out.password);
}

void read_cutover(MapReader& top, Cutover& out) {
  MapReader m = top.map("cutover", {"queue_timeout", "queue_max", "drain_timeout", "drain_action"});
  m.read_duration("queue_timeout", out.queue_timeout);
  m.read_int("queue_max", out.queue_max, 0, kMaxInt);
  m.read_duration("drain_timeout", out.drain_timeout);
  std::string action;
  if (m.read_choice("drain_action", action, {"abort", "terminate"}))
    out.drain_action = action == "terminate" ? DrainAction::Terminate : DrainAction::Abort;
}

void read_fanout(MapReader& top, Fanout& out) {
  MapReader m =
      top.map("fanout", {"max_rows_buffered", "max_groups", "max_distinct_values", "max_scroll_bytes"});
  m.read_int("max_rows_buffered", out.max_rows_buffered, 1, 10000000);
  m.read_int("max_groups", out.max_groups, 1, 100000000);
  m.read_int("max_distinct_values", out.max_distinct_values, 1, 100000000);
  m.read_size("max_scroll_bytes", out.max_scroll_bytes, 1ull << 40);
}

}  // namespace

void read_document(const YAML::Node& root, LoadContext& ctx, Config& cfg) {
  MapReader top(ctx, root, "",
                {"listen", "workers", "log_level", "max_message_size", "statement_cache", "shutdown_timeout",
                 "database", "admin", "metrics", "auth", "pool", "catalog", "shards", "sharding", "mover",
                 "cutover", "fanout"},
                1);
  read_listen(top, cfg.listen);
  top.read_int("workers", cfg.workers, 1, 64);
  top.read_choice("log_level", cfg.log_level, {"debug", "info", "warn", "error"});
  top.read_size("max_message_size", cfg.max_message_size, kMaxMessageSize);
  top.read_int("statement_cache", cfg.statement_cache, 0, 1 << 20);
  top.read_duration("shutdown_timeout", cfg.shutdown_timeout);
  read_nonempty(top, "database", cfg.database);

  MapReader admin = top.map("admin", {"database", "users"});
  read_nonempty(admin, "database", cfg.admin.database);
  admin.read_string_list("users", cfg.admin.users);

  MapReader metrics = top.map("metrics", {"listen"});
  if (metrics.read_string("listen", cfg.metrics.listen) && !cfg.metrics.listen.empty() &&
      !valid_host_port(cfg.metrics.listen)) {
    metrics.fail("listen",
                 "must be \"host:port\" with a port 1..65535, got " + quote_value(cfg.metrics.listen));
  }

  read_auth(top, cfg.auth);
  read_pool(top, cfg.pool);
  MapReader catalog = top.map("catalog", {"dsn"});
  read_dsn(catalog, "dsn", cfg.catalog.dsn);
  read_shards(top, cfg.shards);
  read_sharding(top, cfg.sharding);
  read_mover(top, cfg.mover);
  read_cutover(top, cfg.cutover);
  read_fanout(top, cfg.fanout);
}

}  // namespace sw::config::detail
