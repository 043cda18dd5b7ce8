#include "harness/sharded_cluster.h"

#include <cstdint>
#include <regex>
#include <stdexcept>

namespace it {
namespace {

const auto& q = yaml_quote;

// "host=... port=... dbname=... user=app password=secret" without sslmode (the proxy's DSN).
std::string dsn_of(const PgCluster& cluster, const std::string& db) {
  return "host=127.0.0.1 port=" + std::to_string(cluster.port()) + " dbname=" + db +
         " user=app password=secret";
}

}  // namespace

ShardedSetup::ShardedSetup(const PgCluster& cluster, ShardedOptions options)
    : cluster_(cluster),
      catalog_cluster_(options.catalog_cluster ? options.catalog_cluster : &cluster),
      options_(std::move(options)),
      dir_(std::make_unique<TempDir>("shardwire-sharded-")) {
  catalog_db_ = unique_name("swcatalog");
  catalog_cluster_->create_database(catalog_db_);
  for (int i = 0; i < options_.shards; ++i) {
    shard_dbs_.push_back(unique_name("swshard" + std::to_string(i) + "_"));
    shard_cluster(i).create_database(shard_dbs_.back());
  }
}

const PgCluster& ShardedSetup::shard_cluster(int i) const {
  size_t at = static_cast<size_t>(i);
  return at < options_.shard_clusters.size() && options_.shard_clusters[at] ? *options_.shard_clusters[at]
                                                                            : cluster_;
}

std::string ShardedSetup::shard_dsn(int i) const { return dsn_of(shard_cluster(i), shard_db(i)); }

std::string ShardedSetup::catalog_dsn() const { return dsn_of(*catalog_cluster_, catalog_db_); }

std::string ShardedSetup::create_extra_catalog() {
  std::string db = unique_name("swcatalog_extra");
  catalog_cluster_->create_database(db);
  extra_catalogs_.push_back(db);
  return dsn_of(*catalog_cluster_, db);
}

ProxyOptions ShardedSetup::proxy_options(const std::string& catalog_dsn_override, int shard_count) const {
  ProxyOptions o = options_.proxy;
  o.dbname = "app";
  o.shard_dsn = shard_dsn(0);
  std::string y;
  // Continues the `shards:` list render_config() starts with s0.
  for (int i = 1; i < (shard_count > 0 ? shard_count : shards()); ++i) {
    y += "  - name: " + shard_name(i) + "\n";
    y += "    dsn: " + q(shard_dsn(i)) + "\n";
  }
  y += "database: app\n";
  y += "catalog:\n";
  y += "  dsn: " + q(catalog_dsn_override.empty() ? catalog_dsn() : catalog_dsn_override) + "\n";
  y += "sharding:\n";
  y += "  buckets: " + std::to_string(options_.buckets) + "\n";
  y += "  default_shard: s0\n";
  y += "  directory_lease: " + options_.directory_lease + "\n";
  if (!options_.cross_shard_transactions.empty())
    y += "  cross_shard_transactions: " + options_.cross_shard_transactions + "\n";
  y += "  tables:\n";
  y += options_.tables_yaml;
  if (!options_.reference_tables.empty()) y += "  reference_tables: " + options_.reference_tables + "\n";
  o.extra_yaml = y + o.extra_yaml;
  return o;
}

std::string ShardedSetup::config_text(const std::string& catalog_dsn_override, int shard_count) const {
  return render_config(proxy_options(catalog_dsn_override, shard_count), free_port(), cluster_.port());
}

CommandResult ShardedSetup::init(const std::string& catalog_dsn_override, int shard_count) const {
  std::string path = dir_->file("init-" + unique_name("cfg") + ".yaml");
  write_file(path, config_text(catalog_dsn_override, shard_count));
  return run_command({shardwire_binary(), "init", "--config", path}, "", std::chrono::seconds(120));
}

void ShardedSetup::init_or_throw(const std::string& catalog_dsn_override, int shard_count) const {
  CommandResult r = init(catalog_dsn_override, shard_count);
  if (r.exit_code != 0) throw std::runtime_error("shardwire init failed: " + r.describe());
}

std::unique_ptr<ProxyProcess> ShardedSetup::start_proxy(const std::string& catalog_dsn_override) const {
  return std::make_unique<ProxyProcess>(cluster_.port(), proxy_options(catalog_dsn_override));
}

PgConn ShardedSetup::shard(int i) const { return shard_cluster(i).admin(shard_db(i)); }

PgConn ShardedSetup::catalog() const { return catalog_cluster_->admin(catalog_db_); }

PgResult fence_bucket(PgConn& shard, int bucket, long long version) {
  return shard.exec("INSERT INTO shardwire.fenced_buckets (bucket, version) VALUES (" +
                    std::to_string(bucket) + ", " + std::to_string(version) +
                    ") ON CONFLICT (bucket) DO NOTHING");
}

PgResult mark_fences_holding_rows(PgConn& shard) {
  return shard.exec("UPDATE shardwire.fenced_buckets SET holds_rows = true WHERE NOT holds_rows");
}

PgResult unfence_bucket(PgConn& shard, int bucket) {
  return shard.exec("DELETE FROM shardwire.fenced_buckets WHERE bucket = " + std::to_string(bucket));
}

long long move_bucket_in_catalog(PgConn& catalog, int bucket, const std::string& shard_name) {
  PgResult r = catalog.exec("UPDATE shardwire.buckets SET shard = '" + shard_name +
                            "' WHERE bucket = " + std::to_string(bucket) + " RETURNING version");
  if (!r.ok() || r.rows() != 1) return -1;
  return std::stoll(r.value(0, 0));
}

long long directory_version(PgConn& catalog) {
  PgResult r = catalog.exec("SELECT version FROM shardwire.directory_version");
  if (!r.ok() || r.rows() != 1) return -1;
  return std::stoll(r.value(0, 0));
}

bool wait_for_directory_version(const ProxyProcess& proxy, long long version,
                                std::chrono::milliseconds timeout) {
  // The main loop logs "directory version N loaded" (end of line) when it hands a snapshot to
  // the workers; the watcher's own line ("catalog: directory version N loaded (...)") is earlier.
  static const std::regex line(R"(directory version (\d+) loaded\n)");
  return wait_until(
      [&] {
        std::string log = proxy.log();
        for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it)
          if (std::stoll((*it)[1]) >= version) return true;
        return false;
      },
      timeout, std::chrono::milliseconds(5));
}

namespace {

PgResult send_and_wait(PgConn& conn, int sent, std::chrono::milliseconds timeout, const char* what) {
  if (!sent) return PgResult::failure(std::string(what) + ": " + conn.error_message());
  return conn.wait_result(timeout);
}

}  // namespace

PgResult exec_params_typed(PgConn& conn, const std::string& sql, const std::vector<std::string>& values,
                           const std::vector<unsigned int>& types, const std::vector<int>& binary,
                           std::chrono::milliseconds timeout) {
  if (!conn.get()) return PgResult::failure("no connection");
  std::vector<const char*> v;
  std::vector<int> lengths, formats;
  std::vector<Oid> oids;
  for (size_t i = 0; i < values.size(); ++i) {
    v.push_back(values[i].data());
    lengths.push_back(static_cast<int>(values[i].size()));
    formats.push_back(i < binary.size() ? binary[i] : 0);
    oids.push_back(i < types.size() ? types[i] : 0);
  }
  int sent = PQsendQueryParams(conn.get(), sql.c_str(), static_cast<int>(values.size()), oids.data(),
                               v.data(), lengths.data(), formats.data(), 0);
  return send_and_wait(conn, sent, timeout, "PQsendQueryParams");
}

PgResult exec_prepared_typed(PgConn& conn, const std::string& name, const std::vector<std::string>& values,
                             const std::vector<int>& binary, std::chrono::milliseconds timeout) {
  if (!conn.get()) return PgResult::failure("no connection");
  std::vector<const char*> v;
  std::vector<int> lengths, formats;
  for (size_t i = 0; i < values.size(); ++i) {
    v.push_back(values[i].data());
    lengths.push_back(static_cast<int>(values[i].size()));
    formats.push_back(i < binary.size() ? binary[i] : 0);
  }
  int sent = PQsendQueryPrepared(conn.get(), name.c_str(), static_cast<int>(values.size()), v.data(),
                                 lengths.data(), formats.data(), 0);
  return send_and_wait(conn, sent, timeout, "PQsendQueryPrepared");
}

std::string be_int8(long long v) {
  auto u = static_cast<uint64_t>(v);
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i) {
    s[static_cast<size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

std::string be_int4(int v) {
  auto u = static_cast<uint32_t>(v);
  std::string s(4, '\0');
  for (int i = 3; i >= 0; --i) {
    s[static_cast<size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

}  // namespace it
