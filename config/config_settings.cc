// settings(): the configuration as a flat list of dotted keys, in file order. One list serves
// the reload diff (compare `value`) and the admin console's SHOW CONFIG (print `shown`).
//
// Contract: scalars are one setting each ("pool.size"); lists are one setting each, compared
// whole ("shards", "auth.users", "sharding.tables", "sharding.reference_tables",
// "admin.users"). `value` may hold secrets
// and is never printed; `shown` never does (passwords masked, DSN passwords dropped).
// `restart` marks what a running proxy cannot apply in place: listen.* (sockets are bound at
// start), workers (loop count), and the directory watcher's catalog.dsn and directory_lease.
#include <string>
#include <vector>

#include "config/config.h"

namespace sw::config {
namespace {

std::string duration_text(Duration d) {
  auto ms = d.count();
  if (ms % 3600000 == 0 && ms != 0) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0 && ms != 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

// A DSN without its password, for display.
std::string safe_dsn(const ConnInfo& c) {
  std::string out = "host=" + c.host + " port=" + std::to_string(c.port) + " dbname=" + c.dbname;
  if (!c.user.empty()) out += " user=" + c.user;
  if (c.sslmode != "disable") out += " sslmode=" + c.sslmode;
  return out;
}

std::string method_text(AuthMethod m) {
  switch (m) {
    case AuthMethod::Trust: return "trust";
    case AuthMethod::Md5: return "md5";
    case AuthMethod::ScramSha256: return "scram-sha-256";
  }
  return "?";
}

class Builder {
 public:
  void add(std::string key, std::string value, bool restart = false) {
    std::string shown = value;
    add(std::move(key), std::move(value), std::move(shown), restart);
  }
  void add(std::string key, std::string value, std::string shown, bool restart) {
    list_.push_back({std::move(key), std::move(value), std::move(shown), restart});
  }
  void secret(std::string key, const std::string& value) {
    add(std::move(key), value, value.empty() ? "" : "********", false);
  }
  std::vector<Setting> take() { return std::move(list_); }

 private:
  std::vector<Setting> list_;
};

}  // namespace

std::vector<Setting> settings(const Config& c) {
  Builder b;
  constexpr bool kRestart = true;
  b.add("listen.host", c.listen.host, kRestart);
  b.add("listen.port", std::to_string(c.listen.port), kRestart);
  b.add("listen.max_client_connections", std::to_string(c.listen.max_client_connections), kRestart);
  b.add("listen.reuse_port", c.listen.reuse_port ? "true" : "false", kRestart);
  b.add("listen.tls.cert_file", c.listen.tls.cert_file, kRestart);
  b.add("listen.tls.key_file", c.listen.tls.key_file, kRestart);
  b.add("workers", std::to_string(c.workers), kRestart);
  b.add("log_level", c.log_level);
  b.add("max_message_size", std::to_string(c.max_message_size));
  b.add("statement_cache", std::to_string(c.statement_cache), kRestart);
  b.add("shutdown_timeout", duration_text(c.shutdown_timeout));
  b.add("database", c.database);
  b.add("admin.database", c.admin.database);
  std::string admins;
  for (const auto& name : c.admin.users) admins += (admins.empty() ? "" : ",") + name;
  b.add("admin.users", admins);
  b.add("metrics.listen", c.metrics.listen);
  b.add("auth.method", method_text(c.auth.method));
  std::string users, user_names;
  for (const auto& u : c.auth.users) {
    users += u.name + "\n" + u.password + "\n";
    user_names += (user_names.empty() ? "" : ",") + u.name;
  }
  b.add("auth.users", users, user_names, false);
  b.add("auth.login_timeout", duration_text(c.auth.login_timeout));
  b.add("pool.mode", c.pool.mode == PoolMode::Session ? "session" : "transaction");
  b.add("pool.size", std::to_string(c.pool.size));
  b.add("pool.idle_timeout", duration_text(c.pool.idle_timeout));
  b.add("pool.query_wait_timeout", duration_text(c.pool.query_wait_timeout));
  b.add("pool.server_lifetime", duration_text(c.pool.server_lifetime));
  b.add("pool.server_connect_timeout", duration_text(c.pool.server_connect_timeout));
  b.add("pool.server_reset_query", c.pool.server_reset_query);
  b.add("pool.max_pinned_clients", std::to_string(c.pool.pinned_limit()));
  std::string catalog_shown = c.catalog.dsn.empty() ? "" : "(set; not shown: may hold a password)";
  b.add("catalog.dsn", c.catalog.dsn, catalog_shown, true);
  std::string shards, shards_shown;
  for (const auto& s : c.shards) {
    shards += s.name + "\n" + s.dsn + "\n";
    shards_shown += (shards_shown.empty() ? "" : "; ") + s.name + ": " + safe_dsn(s.conn);
  }
  b.add("shards", shards, shards_shown, false);
  b.add("sharding.buckets", std::to_string(c.sharding.buckets));
  b.add("sharding.default_shard", c.sharding.default_shard);
  std::string tables;
  for (const auto& t : c.sharding.tables) {
    tables += (tables.empty() ? "" : "; ") + t.name + "(" + t.key + " " + t.type;
    tables += (t.version_column.empty() ? "" : ", version " + t.version_column) + ")";
  }
  b.add("sharding.tables", tables);
  std::string references;
  for (const auto& name : c.sharding.reference_tables) references += (references.empty() ? "" : ",") + name;
  b.add("sharding.reference_tables", references);
  b.add("sharding.directory_lease", duration_text(c.sharding.directory_lease), true);
  b.add("sharding.cross_shard_transactions",
        c.sharding.cross_shard_transactions == CrossShardTransactions::Refuse ? "refuse" : "two_phase");
  b.add("mover.copy_rows_per_sec", std::to_string(c.mover.copy_rows_per_sec));
  b.add("mover.copy_streams", std::to_string(c.mover.copy_streams));
  b.add("mover.rollback_window", duration_text(c.mover.rollback_window));
  b.add("mover.rollback_wal_budget", std::to_string(c.mover.rollback_wal_budget));
  b.add("mover.max_concurrent", std::to_string(c.mover.max_concurrent));
  b.add("mover.user", c.mover.user);
  b.secret("mover.password", c.mover.password);
  b.add("cutover.queue_timeout", duration_text(c.cutover.queue_timeout));
  b.add("cutover.queue_max", std::to_string(c.cutover.queue_max));
  b.add("cutover.drain_timeout", duration_text(c.cutover.drain_timeout));
  b.add("cutover.drain_action", c.cutover.drain_action == DrainAction::Terminate ? "terminate" : "abort");
  b.add("fanout.max_rows_buffered", std::to_string(c.fanout.max_rows_buffered));
  b.add("fanout.max_groups", std::to_string(c.fanout.max_groups));
  b.add("fanout.max_distinct_values", std::to_string(c.fanout.max_distinct_values));
  b.add("fanout.max_scroll_bytes", std::to_string(c.fanout.max_scroll_bytes));
  return b.take();
}

ConfigDiff diff(const Config& running, const Config& loaded) {
  std::vector<Setting> before = settings(running);
  std::vector<Setting> after = settings(loaded);
  ConfigDiff result;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    if (before[i].value == after[i].value) continue;
    result.changed.push_back(before[i].key);
    if (before[i].restart) result.need_restart.push_back(before[i].key);
  }
  return result;
}

}  // namespace sw::config
