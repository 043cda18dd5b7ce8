// AdminHost: the mover's console commands. Catalog and shard I/O is blocking libpq, so it runs
// on libuv's thread pool; the answer comes back on the admin client's worker thread.
#include <map>
#include <memory>

#include "app/admin_host.h"
#include "app/proxy.h"
#include "app/worker.h"
#include "catalog/migrations.h"
#include "mover/copier.h"
#include "mover/planner.h"
#include "mover/verifier.h"

namespace sw::app {
namespace {

Result<catalog::PgConnPtr> catalog_connection(const config::Config& config) {
  return catalog::connect(config.catalog.dsn, "catalog");
}

// Creates one migration per move; the ids go into the plan.
Result<std::vector<admin::PlannedMigration>> start(const config::Config& config,
                                                   std::vector<admin::PlannedMigration> plan) {
  auto conn = catalog_connection(config);
  if (!conn) return conn.status();
  for (auto& move : plan) {
    auto id = catalog::create_migration(conn->get(), move.source, move.target, move.buckets);
    if (!id) return id.status();
    move.id = *id;
  }
  return plan;
}

// Rows and bytes per bucket on its owner: count(*) and the rows' stored size (pg_column_size of
// the whole row) of every sharded table, grouped by shardwire.bucket_of. Copies on other shards (a
// source in its rollback window, a target being filled) are not counted.
Result<mover::BucketSizes> sizes_per_bucket(const config::Config& config,
                                            const router::Directory& directory) {
  mover::BucketSizes sizes;
  auto buckets = static_cast<uint32_t>(config.sharding.buckets);
  for (const auto& shard : config.shards) {
    auto conn = catalog::connect(mover::mover_dsn(config, shard), "shard " + shard.name);
    if (!conn) return conn.status();
    for (const auto& table : config.sharding.tables) {
      auto name = mover::resolve_table(conn->get(), table.name);
      if (!name) continue;  // not created on this shard (yet): no rows
      auto bucket = catalog::bucket_expression(table, buckets);
      if (!bucket) return bucket.status();
      auto counts =
          catalog::query(conn->get(), "SELECT " + *bucket + ", count(*), sum(pg_column_size(t.*)) FROM " +
                                          *name + " t GROUP BY 1");
      if (!counts) return counts.status();
      for (int row = 0; row < PQntuples(counts->get()); ++row) {
        int64_t b = 0, n = 0, bytes = 0;
        catalog::parse_int64(counts->get(), row, 0, &b);
        catalog::parse_int64(counts->get(), row, 1, &n);
        catalog::parse_int64(counts->get(), row, 2, &bytes);
        if (b < 0 || b >= directory.bucket_count() ||
            directory.shard_name(directory.bucket(static_cast<uint32_t>(b)).shard) != shard.name)
          continue;
        mover::BucketSize& size = sizes[static_cast<uint32_t>(b)];
        size.rows += static_cast<uint64_t>(n);
        size.bytes += static_cast<uint64_t>(bytes);
      }
    }
  }
  return sizes;
}

// REBALANCE's plan with what each move carries and the spread it should leave.
std::vector<admin::PlannedMigration> rebalance_plan(const router::Directory& directory,
                                                    const std::vector<std::string>& targets, bool by_buckets,
                                                    const mover::BucketSizes& sizes) {
  std::vector<mover::PlannedMove> moves;
  if (by_buckets) {
    std::map<uint32_t, uint64_t> rows;
    for (const auto& [b, size] : sizes) rows[b] = size.rows;
    moves = mover::plan_rebalance(directory, targets, rows);
  } else {
    moves = mover::plan_rebalance_by_data(directory, targets, sizes);
  }
  const std::string spread = mover::describe_spread(mover::loads_after(directory, moves, sizes));
  std::vector<admin::PlannedMigration> plan;
  for (auto& move : moves) {
    admin::PlannedMigration migration{move.source, move.target, std::move(move.buckets), 0};
    for (uint32_t b : migration.buckets) {
      if (auto it = sizes.find(b); it != sizes.end()) {
        migration.rows += it->second.rows;
        migration.bytes += it->second.bytes;
      }
    }
    migration.expected_spread = spread;
    plan.push_back(std::move(migration));
  }
  return plan;
}

// The mover reads and writes every shard a plan touches: each must be in this config.
Status all_shards_configured(const router::Directory& directory, const config::Config& config) {
  if (directory.all_configured()) return Status::ok();
  const std::string& name = directory.shard_name(directory.configured_count());
  return Status::config("the catalog directory puts buckets on shard " + name +
                        ", which is not in this instance's configuration: add shard " + name +
                        " to shards in " + config.file + " and RELOAD");
}

}  // namespace

void AdminHost::move_buckets(const std::string& list, const std::string& target,
                             std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Plan = Result<std::vector<admin::PlannedMigration>>;
  off_loop<Plan>(
      [config, directory, list, target]() -> Plan {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (Status known = all_shards_configured(*directory, *config); !known) return known;
        if (config->find_shard(target) == nullptr)
          return Status::client("42704",
                                "shard \"" + target + "\" is not in the configuration; see SHOW SHARDS");
        auto buckets = mover::parse_bucket_list(list, directory->bucket_count());
        if (!buckets) return buckets.status();
        std::map<std::string, admin::PlannedMigration> by_source;
        for (uint32_t b : *buckets) {
          const std::string& owner = directory->shard_name(directory->bucket(b).shard);
          if (owner == target) continue;
          auto& move = by_source[owner];
          move.source = owner;
          move.target = target;
          move.buckets.push_back(b);
        }
        if (by_source.empty())
          return Status::client("22023", "every listed bucket is on " + target + " already");
        std::vector<admin::PlannedMigration> plan;
        for (auto& [source, move] : by_source) plan.push_back(std::move(move));
        return start(*config, std::move(plan));
      },
      [this, done = std::move(done)](Plan plan) {
        if (plan) proxy_.wake_mover();
        done(std::move(plan));
      });
}

void AdminHost::rebalance(const std::vector<std::string>& targets, bool by_buckets, bool dry_run,
                          std::function<void(Result<std::vector<admin::PlannedMigration>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Plan = Result<std::vector<admin::PlannedMigration>>;
  off_loop<Plan>(
      [config, directory, targets, by_buckets, dry_run]() -> Plan {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (Status known = all_shards_configured(*directory, *config); !known) return known;
        for (const auto& name : targets) {
          if (config->find_shard(name) == nullptr)
            return Status::client("42704",
                                  "shard \"" + name + "\" is not in the configuration; see SHOW SHARDS");
        }
        auto sizes = sizes_per_bucket(*config, *directory);
        if (!sizes) return sizes.status();
        std::vector<admin::PlannedMigration> plan = rebalance_plan(*directory, targets, by_buckets, *sizes);
        if (dry_run) return plan;
        return start(*config, std::move(plan));
      },
      [this, dry_run, done = std::move(done)](Plan plan) {
        if (plan && !dry_run) proxy_.wake_mover();
        done(std::move(plan));
      });
}

void AdminHost::list_migrations(std::function<void(Result<std::vector<catalog::Migration>>)> done) {
  auto config = proxy_.config();
  using List = Result<std::vector<catalog::Migration>>;
  off_loop<List>(
      [config]() -> List {
        auto conn = catalog_connection(*config);
        if (!conn) return conn.status();
        return catalog::list_migrations(conn->get(), /*active_only=*/false);
      },
      std::move(done));
}

void AdminHost::request_migration(int64_t id, catalog::MigrationRequest request,
                                  std::function<void(Status)> done) {
  auto config = proxy_.config();
  off_loop<Status>(
      [config, id, request]() -> Status {
        auto conn = catalog_connection(*config);
        if (!conn) return conn.status();
        return catalog::request_migration(conn->get(), id, request);
      },
      [this, done = std::move(done)](Status status) {
        if (status) proxy_.wake_mover();
        done(status);
      });
}

void AdminHost::verify_bucket(uint32_t bucket,
                              std::function<void(Result<std::vector<admin::BucketCheck>>)> done) {
  auto config = proxy_.config();
  auto directory = proxy_.directory_status().directory;
  using Checks = Result<std::vector<admin::BucketCheck>>;
  off_loop<Checks>(
      [config, directory, bucket]() -> Checks {
        if (!directory) return Status::proxy("57P03", "no bucket directory is loaded yet");
        if (bucket >= directory->bucket_count())
          return Status::client("22023", "bucket " + std::to_string(bucket) + " does not exist (buckets 0-" +
                                             std::to_string(directory->bucket_count() - 1) + ")");
        std::vector<std::pair<std::string, std::string>> shards{
            {directory->shard_name(directory->bucket(bucket).shard), "owner"}};
        auto conn = catalog_connection(*config);
        if (!conn) return conn.status();
        auto migrations = catalog::list_migrations(conn->get(), /*active_only=*/true);
        if (!migrations) return migrations.status();
        for (const auto& m : *migrations) {
          if (std::find(m.buckets.begin(), m.buckets.end(), bucket) == m.buckets.end()) continue;
          const std::string& other = shards.front().first == m.source ? m.target : m.source;
          shards.push_back({other, other == m.target ? "target" : "source"});
        }
        mover::BucketSet set(directory->bucket_count(), {bucket});
        std::vector<admin::BucketCheck> checks;
        for (const auto& [name, role] : shards) {
          const config::Shard* shard = config->find_shard(name);
          if (shard == nullptr) continue;
          auto shard_conn = catalog::connect(mover::mover_dsn(*config, *shard), "shard " + name);
          if (!shard_conn) return shard_conn.status();
          auto digests = mover::bucket_digests(shard_conn->get(), config->sharding.tables, set);
          if (!digests) return digests.status();
          const mover::BucketDigest& digest = (*digests)[bucket];
          checks.push_back({name, role, digest.rows, digest.checksum});
        }
        return checks;
      },
      std::move(done));
}

}  // namespace sw::app
