// The reshard scenario's deployment: 4096 buckets on N old shards (4 by default: s0..s3, bucket i
// on s(i mod N), each a database of one PostgreSQL cluster), two shardwire instances on the same
// catalog started with those in their config, and M shards (1: s4) added the way the README says,
// without a restart: the new shards added to both instances' config files, `shardwire init`,
// RELOAD on each instance's console, then the sharded table created through shardwire (CREATE
// TABLE IF NOT EXISTS reaches the new shards alone). Seed rows: the same
// number in every bucket (moving 20% of the buckets moves 20% of the rows, whichever the planner
// picks), or a skewed spread (DeploymentOptions::skewed_seed).
//
// For the checker it also records, outside shardwire: every application write on a shard (an
// ordinary AFTER trigger, so the mover's replica-role writes are not in it) with its time, and
// every owner change in the catalog's directory with its time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/sharded_cluster.h"
#include "harness/tcp_forwarder.h"

namespace it::reshard {

inline constexpr int kInstances = 2;

// An integer from the environment (the scenario's scale knobs), or `fallback`.
inline int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

// `r` when it succeeded; else throws with `what` and the error (setup and checker queries).
PgResult must(PgResult r, const std::string& what);

struct DeploymentOptions {
  int old_shards = 4;    // s0 .. s<old_shards - 1> own the buckets at first
  int added_shards = 1;  // then added by RELOAD, owning nothing
  int rows_per_bucket = 5;
  // Buckets hold 1 .. 2 * rows_per_bucket - 1 seed rows (a fixed pseudo-random spread, the same
  // mean) instead of rows_per_bucket each: only a plan by data evens out the rows.
  bool skewed_seed = false;
  // Instance i runs at most max_concurrent[i] migrations (0: it only routes; kMoverDefault: the
  // config leaves mover.max_concurrent out, so shardwire's default applies).
  static constexpr int kMoverDefault = -1;
  std::vector<int> max_concurrent = {kMoverDefault, kMoverDefault};
  bool catalog_via_relay = false;  // the instances reach the catalog through a TcpForwarder
  std::string rollback_window = "1s";
  long long copy_rows_per_sec = 1000000;
  int copy_streams = 0;  // mover.copy_streams; 0: left out (shardwire's default)
  // orders has row_version bigint (default 1) as its sharding version_column; the workload's
  // updates never touch it, so only an applier that applies such updates keeps their qty.
  bool version_column = false;
};

class Deployment {
 public:
  explicit Deployment(DeploymentOptions options);
  ~Deployment();

  const ShardedSetup& setup() const { return *setup_; }
  ProxyProcess& instance(int i) { return *instances_.at(static_cast<size_t>(i)); }
  TcpForwarder* catalog_relay() { return relay_.get(); }
  std::string conninfo(int instance) const;
  PgConn admin(int instance) const;  // the console as admin; throws when it cannot connect

  uint32_t buckets() const { return 4096; }
  int old_shards() const { return options_.old_shards; }
  int all_shards() const { return options_.old_shards + options_.added_shards; }
  bool is_added(const std::string& shard) const;  // "s<n>" with n >= old_shards()
  // Seed rows of bucket b (rows_per_bucket, or the skewed spread).
  int seed_rows_of(uint32_t bucket) const;
  // Rows of orders on each shard, counted on the shards (index = shard number).
  std::vector<long long> rows_per_shard() const;
  // The instances' process ids (adding shards must not restart them).
  std::vector<pid_t> pids() const;
  size_t seed_rows() const { return seed_keys_.size(); }
  const std::vector<int64_t>& seed_keys() const { return seed_keys_; }
  // Owner of every bucket, by shard index: at start (i mod old_shards) and now (the catalog).
  const std::map<uint32_t, int>& initial_directory() const { return initial_; }
  std::map<uint32_t, int> directory() const;

  // Faults. kill: SIGKILL, started again after `down`. restart: SIGTERM (drains), started again.
  void kill_instance(int i, std::chrono::milliseconds down);
  void restart_instance(int i);
  // pg_terminate_backend of every other connection to shard i's database; how many.
  int terminate_backends(int shard);

  std::string log_tails(size_t lines = 40) const;

 private:
  ProxyOptions instance_options(int i, int shards) const;
  std::string create_orders_sql() const;
  void create_orders();
  void add_shards();
  void seed();
  void install_write_log();

  DeploymentOptions options_;
  std::unique_ptr<ShardedSetup> setup_;
  std::unique_ptr<TcpForwarder> relay_;
  std::string catalog_dsn_;  // the instances' (through relay_ when set); empty: the setup's
  std::vector<std::unique_ptr<ProxyProcess>> instances_;
  std::vector<int64_t> seed_keys_;
  std::map<uint32_t, int> initial_;
};

// SHOW MIGRATIONS polled on a background thread (any instance that answers): the peak lag and
// each migration's last row.
class MigrationWatch {
 public:
  explicit MigrationWatch(Deployment& deployment);
  ~MigrationWatch();
  MigrationWatch(const MigrationWatch&) = delete;
  MigrationWatch& operator=(const MigrationWatch&) = delete;

  // True once every migration listed is done (and at least one is listed).
  bool all_done() const;
  bool wait_all_done(std::chrono::milliseconds timeout) const;
  long long peak_lag_bytes() const;
  double peak_lag_seconds() const;
  // id -> column -> value, as last seen.
  std::map<std::string, std::map<std::string, std::string>> migrations() const;
  std::string summary() const;  // one line per migration: id buckets source->target state step error

 private:
  void run();

  Deployment& deployment_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> rows_;
  long long peak_lag_bytes_ = 0;
  double peak_lag_seconds_ = 0;
  std::thread thread_;
};

}  // namespace it::reshard
