// diff: which settings differ between the running and a freshly loaded config.
//
// Contract: `changed` lists dotted keys as written in YAML, in file order. Scalars are compared
// one by one ("pool.size"); lists are compared whole and reported by their key ("shards",
// "auth.users", "sharding.tables", "admin.users"). Shards compare by name and DSN text (the
// parsed ConnInfo follows from the text). `need_restart` is the subset a running proxy cannot
// apply in place: every listen.* key (sockets are bound at start) and workers (loop count).
// Keys never carry values, so the result is safe to log even when a password changed.
#include <string>
#include <vector>

#include "config/config.h"

namespace sw::config {
namespace {

bool same_users(const std::vector<User>& a, const std::vector<User>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].password != b[i].password) return false;
  }
  return true;
}

bool same_shards(const std::vector<Shard>& a, const std::vector<Shard>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].dsn != b[i].dsn) return false;
  }
  return true;
}

bool same_tables(const std::vector<ShardedTable>& a, const std::vector<ShardedTable>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].key != b[i].key || a[i].type != b[i].type ||
        a[i].version_column != b[i].version_column) {
      return false;
    }
  }
  return true;
}

class DiffBuilder {
 public:
  void add(bool same, const char* key, bool restart = false) {
    if (same) return;
    result_.changed.emplace_back(key);
    if (restart) result_.need_restart.emplace_back(key);
  }
  ConfigDiff take() { return std::move(result_); }

 private:
  ConfigDiff result_;
};

}  // namespace

ConfigDiff diff(const Config& a, const Config& b) {
  DiffBuilder d;
  constexpr bool kRestart = true;
  d.add(a.listen.host == b.listen.host, "listen.host", kRestart);
  d.add(a.listen.port == b.listen.port, "listen.port", kRestart);
  d.add(a.listen.max_client_connections == b.listen.max_client_connections,
        "listen.max_client_connections", kRestart);
  d.add(a.listen.tls.cert_file == b.listen.tls.cert_file, "listen.tls.cert_file", kRestart);
  d.add(a.listen.tls.key_file == b.listen.tls.key_file, "listen.tls.key_file", kRestart);
  d.add(a.workers == b.workers, "workers", kRestart);
  d.add(a.log_level == b.log_level, "log_level");
  d.add(a.max_message_size == b.max_message_size, "max_message_size");
  d.add(a.database == b.database, "database");
  d.add(a.admin.database == b.admin.database, "admin.database");
  d.add(a.admin.users == b.admin.users, "admin.users");
  d.add(a.metrics.listen == b.metrics.listen, "metrics.listen");
  d.add(a.auth.method == b.auth.method, "auth.method");
  d.add(same_users(a.auth.users, b.auth.users), "auth.users");
  d.add(a.auth.login_timeout == b.auth.login_timeout, "auth.login_timeout");
  d.add(a.pool.mode == b.pool.mode, "pool.mode");
  d.add(a.pool.size == b.pool.size, "pool.size");
  d.add(a.pool.idle_timeout == b.pool.idle_timeout, "pool.idle_timeout");
  d.add(a.pool.query_wait_timeout == b.pool.query_wait_timeout, "pool.query_wait_timeout");
  d.add(a.pool.server_lifetime == b.pool.server_lifetime, "pool.server_lifetime");
  d.add(a.pool.server_connect_timeout == b.pool.server_connect_timeout,
        "pool.server_connect_timeout");
  d.add(a.catalog.dsn == b.catalog.dsn, "catalog.dsn");
  d.add(same_shards(a.shards, b.shards), "shards");
  d.add(a.sharding.buckets == b.sharding.buckets, "sharding.buckets");
  d.add(a.sharding.default_shard == b.sharding.default_shard, "sharding.default_shard");
  d.add(same_tables(a.sharding.tables, b.sharding.tables), "sharding.tables");
  d.add(a.sharding.directory_lease == b.sharding.directory_lease, "sharding.directory_lease");
  d.add(a.mover.copy_rows_per_sec == b.mover.copy_rows_per_sec, "mover.copy_rows_per_sec");
  d.add(a.mover.rollback_window == b.mover.rollback_window, "mover.rollback_window");
  d.add(a.mover.rollback_wal_budget == b.mover.rollback_wal_budget, "mover.rollback_wal_budget");
  d.add(a.mover.max_concurrent == b.mover.max_concurrent, "mover.max_concurrent");
  d.add(a.mover.user == b.mover.user, "mover.user");
  d.add(a.mover.password == b.mover.password, "mover.password");
  d.add(a.cutover.queue_timeout == b.cutover.queue_timeout, "cutover.queue_timeout");
  d.add(a.cutover.queue_max == b.cutover.queue_max, "cutover.queue_max");
  d.add(a.cutover.drain_timeout == b.cutover.drain_timeout, "cutover.drain_timeout");
  return d.take();
}

}  // namespace sw::config
