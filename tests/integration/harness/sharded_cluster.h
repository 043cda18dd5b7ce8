// A sharded deployment for the integration tests: a catalog database and N shard databases
// (fresh names, by default all in one PgCluster; the catalog may live on a cluster of its own),
// the shardwire config that ties them together, `shardwire init`, and proxies started on it.
// Shard i is named "s<i>"; clients connect to the logical database `app`.
//
// Added for the sharding suites; the rest of the harness is unchanged (this only composes
// PgCluster, ProxyProcess and run_command).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness/pg_client.h"
#include "harness/pg_cluster.h"
#include "harness/process.h"
#include "harness/proxy_process.h"

namespace it {

struct ShardedOptions {
  int shards = 3;
  int buckets = 4096;
  std::string directory_lease = "30s";
  std::string cross_shard_transactions;  // sharding.cross_shard_transactions; empty: the default
  // The YAML list items under sharding.tables (indented by 4 spaces).
  std::string tables_yaml = "    - name: orders\n      key: tenant_id\n      type: bigint\n";
  // sharding.reference_tables as a YAML flow list ("[plans, public.countries]"); "" for none.
  std::string reference_tables;
  // Where the catalog database lives; null: on the shards' cluster.
  const PgCluster* catalog_cluster = nullptr;
  // Where shard i lives, when shard_clusters[i] is set; else on the shards' cluster.
  std::vector<const PgCluster*> shard_clusters;
  // Base options of every proxy (pool size, workers, log level...). dbname/shard_dsn/extra_yaml
  // are filled in by ShardedSetup.
  ProxyOptions proxy;
};

class ShardedSetup {
 public:
  explicit ShardedSetup(const PgCluster& cluster, ShardedOptions options = {});

  int shards() const { return static_cast<int>(shard_dbs_.size()); }
  int buckets() const { return options_.buckets; }
  static std::string shard_name(int i) { return 's' + std::to_string(i); }
  const std::string& shard_db(int i) const { return shard_dbs_.at(static_cast<size_t>(i)); }
  const std::string& catalog_db() const { return catalog_db_; }
  const PgCluster& cluster() const { return cluster_; }
  const PgCluster& shard_cluster(int i) const;
  const PgCluster& catalog_cluster() const { return *catalog_cluster_; }

  std::string shard_dsn(int i) const;  // TCP, user app (what the proxy uses)
  std::string catalog_dsn() const;     // TCP, user app

  // Another, empty catalog database on the catalog cluster (for a proxy with a catalog of its
  // own); returns its DSN. Run init(dsn) to fill it.
  std::string create_extra_catalog();

  // The proxy options for a proxy whose catalog is `catalog_dsn` (empty: this setup's), with the
  // first `shard_count` shards in its config (0: all; fewer is a deployment before shards are
  // added).
  ProxyOptions proxy_options(const std::string& catalog_dsn = "", int shard_count = 0) const;
  // The whole config file text (listen port irrelevant for init).
  std::string config_text(const std::string& catalog_dsn = "", int shard_count = 0) const;
  // `shardwire init --config FILE`; the result (exit code, stdout, stderr).
  CommandResult init(const std::string& catalog_dsn = "", int shard_count = 0) const;
  // init() that must succeed (throws with its output otherwise).
  void init_or_throw(const std::string& catalog_dsn = "", int shard_count = 0) const;
  // A running proxy on this deployment.
  std::unique_ptr<ProxyProcess> start_proxy(const std::string& catalog_dsn = "") const;

  // Superuser connections (Unix socket, trust) to a shard / the catalog database.
  PgConn shard(int i) const;
  PgConn catalog() const;

 private:
  const PgCluster& cluster_;
  const PgCluster* catalog_cluster_;
  ShardedOptions options_;
  std::string catalog_db_;
  std::vector<std::string> shard_dbs_;
  std::vector<std::string> extra_catalogs_;
  std::unique_ptr<TempDir> dir_;
};

// ---- bucket bookkeeping on the shards and the catalog (plain SQL, superuser connections) -------

// INSERT INTO shardwire.fenced_buckets (bucket, version) VALUES (b, v) ON CONFLICT DO NOTHING.
PgResult fence_bucket(PgConn& shard, int bucket, long long version = 0);
// DELETE FROM shardwire.fenced_buckets WHERE bucket = b.
PgResult unfence_bucket(PgConn& shard, int bucket);
// holds_rows = true on every fence of the shard, as the mover sets a bucket's fence before it
// writes rows of it there (docs/architecture.md §7.4). A test that plants rows of fenced buckets
// by hand calls it first; scatter reads would count them otherwise.
PgResult mark_fences_holding_rows(PgConn& shard);
// UPDATE shardwire.buckets SET shard = name WHERE bucket = b (the catalog trigger bumps the
// version and NOTIFYs); returns the new directory version, -1 on failure.
long long move_bucket_in_catalog(PgConn& catalog, int bucket, const std::string& shard_name);
long long directory_version(PgConn& catalog);

// Waits until the proxy's log says it loaded directory `version` (or a later one).
bool wait_for_directory_version(const ProxyProcess& proxy, long long version,
                                std::chrono::milliseconds timeout);

// Extended-protocol query with explicit parameter types and formats (PQsendQueryParams), bounded
// like PgConn::exec_params. `binary[i]` selects format 1 for parameter i; `types[i]` 0 = let the
// server infer. Values are given as raw bytes.
PgResult exec_params_typed(PgConn& conn, const std::string& sql, const std::vector<std::string>& values,
                           const std::vector<unsigned int>& types, const std::vector<int>& binary,
                           std::chrono::milliseconds timeout = std::chrono::seconds(30));
// Same for a prepared statement (PQsendQueryPrepared).
PgResult exec_prepared_typed(PgConn& conn, const std::string& name, const std::vector<std::string>& values,
                             const std::vector<int>& binary,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30));
// Big-endian 8-byte / 4-byte encodings for binary int8 / int4 parameters.
std::string be_int8(long long v);
std::string be_int4(int v);

}  // namespace it
