#include "harness/reshard_deployment.h"

#include <csignal>
#include <stdexcept>

#include "harness/sharded_fixture.h"

namespace it::reshard {
namespace {

// orders with the version column the sharding config names (DeploymentOptions::version_column).
const char* const kCreateVersionedOrders =
    "CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, note text, "
    "qty integer NOT NULL DEFAULT 0, row_version bigint NOT NULL DEFAULT 1, PRIMARY KEY (tenant_id, id))";

ShardedOptions sharded_options(const DeploymentOptions& options) {
  ShardedOptions o;
  if (options.version_column) o.tables_yaml += "      version_column: row_version\n";
  o.shards = options.old_shards + options.added_shards;
  o.buckets = 4096;
  o.proxy.pool_size = 10;
  o.proxy.users.push_back({"admin", "adminpw"});
  o.proxy.extra_yaml = "admin:\n  users: [admin]\ncutover:\n  queue_timeout: 5s\n  drain_timeout: 2s\n";
  return o;
}

std::string mover_yaml(const DeploymentOptions& options, int instance) {
  const int max_concurrent = options.max_concurrent.at(static_cast<size_t>(instance));
  std::string yaml = "mover:\n  copy_rows_per_sec: " + std::to_string(options.copy_rows_per_sec) +
                     "\n  rollback_window: " + options.rollback_window + "\n";
  if (options.copy_streams > 0) yaml += "  copy_streams: " + std::to_string(options.copy_streams) + "\n";
  if (max_concurrent != DeploymentOptions::kMoverDefault)
    yaml += "  max_concurrent: " + std::to_string(max_concurrent) + "\n";
  return yaml;
}

// Application writes on a shard, with the time of each row written (an ordinary trigger: the
// mover's session_replication_role = replica writes do not fire it).
const char* const kWriteLog =
    "CREATE TABLE sw_test_writes (bucket integer NOT NULL, at timestamptz NOT NULL DEFAULT "
    "clock_timestamp());"
    "CREATE FUNCTION sw_test_log_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "  INSERT INTO sw_test_writes (bucket) VALUES (shardwire.bucket_of(CASE WHEN TG_OP = 'DELETE' THEN "
    "OLD.tenant_id "
    "    ELSE NEW.tenant_id END, 4096)); RETURN NULL; END $$;"
    "CREATE TRIGGER sw_test_log_write AFTER INSERT OR UPDATE OR DELETE ON orders FOR EACH ROW "
    "  EXECUTE FUNCTION sw_test_log_write();";

// Owner changes in the catalog's directory, with the time of the flip.
const char* const kFlipLog =
    "CREATE TABLE sw_test_flips (bucket integer NOT NULL, shard text NOT NULL, "
    "  at timestamptz NOT NULL DEFAULT clock_timestamp());"
    "CREATE FUNCTION sw_test_log_flip() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "  IF NEW.shard IS DISTINCT FROM OLD.shard THEN INSERT INTO sw_test_flips (bucket, shard) "
    "  VALUES (NEW.bucket, NEW.shard); END IF; RETURN NULL; END $$;"
    "CREATE TRIGGER sw_test_log_flip AFTER UPDATE ON shardwire.buckets FOR EACH ROW "
    "  EXECUTE FUNCTION sw_test_log_flip();"
    "ALTER TABLE shardwire.buckets ENABLE ALWAYS TRIGGER sw_test_log_flip;";

}  // namespace

PgResult must(PgResult r, const std::string& what) {
  if (!r.ok()) throw std::runtime_error(what + ": " + r.describe());
  return r;
}

Deployment::Deployment(DeploymentOptions options)
    : options_(std::move(options)),
      setup_(std::make_unique<ShardedSetup>(shared_cluster(), sharded_options(options_))) {
  // The old shards first: the directory spreads the buckets over them.
  setup_->init_or_throw("", old_shards());
  for (uint32_t b = 0; b < buckets(); ++b)
    initial_[b] = static_cast<int>(b % static_cast<uint32_t>(old_shards()));
  if (options_.catalog_via_relay) {
    relay_ = std::make_unique<TcpForwarder>(setup_->catalog_cluster().port());
    catalog_dsn_ = "host=127.0.0.1 port=" + std::to_string(relay_->port()) +
                   " dbname=" + setup_->catalog_db() + " user=app password=secret";
  }
  for (int i = 0; i < kInstances; ++i)
    instances_.push_back(
        std::make_unique<ProxyProcess>(setup_->cluster().port(), instance_options(i, old_shards())));
  create_orders();
  seed();
  add_shards();
  install_write_log();
}

Deployment::~Deployment() = default;

ProxyOptions Deployment::instance_options(int i, int shards) const {
  ProxyOptions o = setup_->proxy_options(catalog_dsn_, shards);
  o.extra_yaml += mover_yaml(options_, i);
  return o;
}

std::string Deployment::create_orders_sql() const {
  return options_.version_column ? kCreateVersionedOrders : kCreateOrders;
}

// CREATE TABLE through shardwire on the old shards (the first deployment).
void Deployment::create_orders() {
  ConnectResult r = connect(conninfo(0));
  if (!r.ok) throw std::runtime_error("connect: " + r.error + "\n" + log_tails());
  must(r.conn.exec(create_orders_sql()), "CREATE TABLE orders through shardwire");
}

// The README's "Adding a shard", by RELOAD alone: the new shards in every instance's config
// file, `shardwire init`, RELOAD on each console, then CREATE TABLE IF NOT EXISTS through
// shardwire, which creates orders on the new shards with the fence trigger and the bucket index.
void Deployment::add_shards() {
  const std::vector<pid_t> before = pids();
  for (int i = 0; i < kInstances; ++i)
    instance(i).write_config(
        render_config(instance_options(i, all_shards()), instance(i).port(), setup_->cluster().port()));
  setup_->init_or_throw("", all_shards());
  std::string every = "all-shards ";
  for (int s = 0; s < all_shards(); ++s) every += (s ? ",s" : "s") + std::to_string(s);
  for (int i = 0; i < kInstances; ++i) {
    PgConn console = admin(i);
    must(console.exec("RELOAD"), "RELOAD on instance " + std::to_string(i));
    PgResult route = must(console.exec("SHOW ROUTE " + create_orders_sql()), "SHOW ROUTE");
    const std::string summary = route.value(0, route.cols() - 1);
    if (summary.find(every + " ") != 0)
      throw std::runtime_error("instance " + std::to_string(i) + " routes DDL to " + summary +
                               " after RELOAD");
  }
  ConnectResult r = connect(conninfo(0));
  if (!r.ok) throw std::runtime_error("connect: " + r.error + "\n" + log_tails());
  std::string again = create_orders_sql();
  again.replace(again.find("CREATE TABLE"), 12, "CREATE TABLE IF NOT EXISTS");
  must(r.conn.exec(again), "CREATE TABLE IF NOT EXISTS orders through shardwire");
  for (int s = old_shards(); s < all_shards(); ++s) {
    PgConn added = setup_->shard(s);
    if (added.value(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'orders'::regclass AND NOT tgisinternal") == "0")
      throw std::runtime_error("s" + std::to_string(s) + ": orders has no fence trigger");
  }
  if (pids() != before) throw std::runtime_error("an instance restarted while shards were added");
}

bool Deployment::is_added(const std::string& shard) const {
  return shard.size() > 1 && shard[0] == 's' && std::atoi(shard.c_str() + 1) >= old_shards();
}

int Deployment::seed_rows_of(uint32_t bucket) const {
  if (!options_.skewed_seed) return options_.rows_per_bucket;
  const uint32_t mixed = (bucket * 2654435761u) >> 7;
  return 1 + static_cast<int>(mixed % static_cast<uint32_t>(2 * options_.rows_per_bucket - 1));
}

std::vector<long long> Deployment::rows_per_shard() const {
  std::vector<long long> rows;
  for (int s = 0; s < all_shards(); ++s) {
    PgConn c = setup_->shard(s);
    rows.push_back(
        std::stoll(must(c.exec("SELECT count(*) FROM orders"), "rows on s" + std::to_string(s)).value()));
  }
  return rows;
}

std::vector<pid_t> Deployment::pids() const {
  std::vector<pid_t> out;
  for (const auto& instance : instances_) out.push_back(instance->pid());
  return out;
}

// seed_rows_of(b) keys in every bucket b (the first keys 1, 2, ... that fall in it), inserted on
// their owners directly.
void Deployment::seed() {
  std::map<uint32_t, int> per_bucket;
  std::vector<std::string> keys_of_shard(static_cast<size_t>(old_shards()));
  size_t full = 0;
  for (int64_t key = 1; full < buckets(); ++key) {
    uint32_t b = bucket_of_key(key);
    if (per_bucket[b] == seed_rows_of(b)) continue;
    if (++per_bucket[b] == seed_rows_of(b)) ++full;
    seed_keys_.push_back(key);
    std::string& list = keys_of_shard[static_cast<size_t>(initial_.at(b))];
    list += (list.empty() ? "" : ",") + std::to_string(key);
  }
  for (int s = 0; s < old_shards(); ++s) {
    PgConn c = setup_->shard(s);
    must(c.exec("INSERT INTO orders (tenant_id, note) SELECT unnest('{" +
                keys_of_shard[static_cast<size_t>(s)] + "}'::bigint[]), 'seed'"),
         "seed rows on s" + std::to_string(s));
  }
}

void Deployment::install_write_log() {
  for (int s = 0; s < all_shards(); ++s) {
    PgConn c = setup_->shard(s);
    must(c.exec(kWriteLog), "write log on s" + std::to_string(s));
  }
  PgConn catalog = setup_->catalog();
  must(catalog.exec(kFlipLog), "flip log on the catalog");
}

std::string Deployment::conninfo(int instance) const {
  return instances_.at(static_cast<size_t>(instance))->conninfo();
}

PgConn Deployment::admin(int instance) const {
  ConnectResult r = connect(instances_.at(static_cast<size_t>(instance))
                                ->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"),
                            std::chrono::seconds(3));
  if (!r.ok)
    throw std::runtime_error("admin console of instance " + std::to_string(instance) + ": " + r.error);
  return std::move(r.conn);
}

std::map<uint32_t, int> Deployment::directory() const {
  PgConn c = setup_->catalog();
  PgResult r = c.exec("SELECT bucket, substr(shard, 2)::int FROM shardwire.buckets");
  must(r, "directory");
  std::map<uint32_t, int> out;
  for (const auto& row : r.data()) out[static_cast<uint32_t>(std::stoul(row.at(0)))] = std::stoi(row.at(1));
  return out;
}

void Deployment::kill_instance(int i, std::chrono::milliseconds down) {
  instance(i).signal(SIGKILL);
  instance(i).wait_exit(std::chrono::seconds(10));
  std::this_thread::sleep_for(down);
  instance(i).restart();
}

void Deployment::restart_instance(int i) {
  instance(i).signal(SIGTERM);
  if (!instance(i).wait_exit(std::chrono::seconds(30))) instance(i).signal(SIGKILL);
  instance(i).restart();
}

int Deployment::terminate_backends(int shard) {
  PgConn c = setup_->shard(shard);
  PgResult r = c.exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid()");
  must(r, "pg_terminate_backend on s" + std::to_string(shard));
  return std::stoi(r.value());
}

std::string Deployment::log_tails(size_t lines) const {
  std::string out;
  for (size_t i = 0; i < instances_.size(); ++i)
    out += "--- instance " + std::to_string(i) + " ---\n" + instances_[i]->log_tail(lines);
  return out;
}

MigrationWatch::MigrationWatch(Deployment& deployment)
    : deployment_(deployment), thread_([this] { run(); }) {}

MigrationWatch::~MigrationWatch() {
  stopping_ = true;
  thread_.join();
}

void MigrationWatch::run() {
  PgConn admin;
  for (int attempt = 0; !stopping_; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!admin) {
      try {
        admin = deployment_.admin(attempt % kInstances);
      } catch (const std::exception&) {
        continue;  // that instance is down (a fault); try the other next time
      }
    }
    PgResult r = admin.exec("SHOW MIGRATIONS", std::chrono::seconds(5));
    if (!r.ok()) {
      admin.reset();
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < r.rows(); ++i) {
      auto& row = rows_[r.value(i, 0)];
      for (int c = 0; c < r.cols(); ++c) row[r.names()[c]] = r.value(i, c);
      if (!row["lag_bytes"].empty())
        peak_lag_bytes_ = std::max(peak_lag_bytes_, std::stoll(row["lag_bytes"]));
      if (!row["lag_seconds"].empty())
        peak_lag_seconds_ = std::max(peak_lag_seconds_, std::stod(row["lag_seconds"]));
    }
  }
}

bool MigrationWatch::all_done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rows_.empty()) return false;
  for (const auto& [id, row] : rows_)
    if (row.at("state") != "done") return false;
  return true;
}

bool MigrationWatch::wait_all_done(std::chrono::milliseconds timeout) const {
  return wait_until([&] { return all_done(); }, timeout, std::chrono::milliseconds(100));
}

long long MigrationWatch::peak_lag_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_lag_bytes_;
}

double MigrationWatch::peak_lag_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_lag_seconds_;
}

std::map<std::string, std::map<std::string, std::string>> MigrationWatch::migrations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

std::string MigrationWatch::summary() const {
  std::string out;
  for (auto& [id, row] : migrations())
    out += "migration " + id + ": " + row["source"] + "->" + row["target"] + " " + row["state"] +
           " step=" + row["step"] + " rows=" + row["rows_copied"] + " pause_ms=" + row["last_pause_ms"] +
           " error=" + row["error"] + "\n";
  return out;
}

}  // namespace it::reshard
