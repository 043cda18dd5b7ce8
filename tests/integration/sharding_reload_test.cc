// Shards added and removed by RELOAD alone, as the README's "Adding a shard" says: the new
// config reaches routing (the shard list of DDL and scatter reads, SHOW ROUTE), the pools, the
// directory watcher (later directory versions) and the mover (REBALANCE plans and runs moves to
// the new shard). A shard that still owns buckets cannot be removed. A catalog directory that
// names a shard this instance's config lacks refuses only that shard's buckets, with an error
// naming the shard and the fix, at startup as well as when the directory changes at run time.
#include "it_test.h"

#include <cstdlib>
#include <thread>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

constexpr int kReloadBuckets = 256;
constexpr int kReloadRows = 2000;

ShardedOptions reload_options(const std::string& lease, const std::string& mover_yaml) {
  ShardedOptions o;
  o.shards = 4;
  o.buckets = kReloadBuckets;
  o.directory_lease = lease;
  o.proxy.users.push_back({"admin", "adminpw"});
  o.proxy.extra_yaml = "admin:\n  users: [admin]\nmover:\n" + mover_yaml;
  return o;
}

uint32_t bucket_of(int64_t key) {
  return sw::router::bucket_of_hash(sw::router::hash_int8(key), kReloadBuckets);
}

// A proxy whose config lists the first `shards` shards, and its config rewritten for a reload.
struct ReloadDeployment {
  ShardedSetup setup;
  std::unique_ptr<ProxyProcess> proxy;

  ReloadDeployment(int catalog_shards, int config_shards, const std::string& lease = "30s",
                   const std::string& mover_yaml = "  rollback_window: 1s\n")
      : setup(shared_cluster(), reload_options(lease, mover_yaml)) {
    setup.init_or_throw("", catalog_shards);
    proxy = std::make_unique<ProxyProcess>(setup.cluster().port(), setup.proxy_options("", config_shards));
  }
  void write_config(int shards) {
    proxy->write_config(
        render_config(setup.proxy_options("", shards), proxy->port(), setup.cluster().port()));
  }
  PgConn client() const {
    ConnectResult r = connect(proxy->conninfo());
    if (!r.ok) throw std::runtime_error("connect: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
  PgConn admin() const {
    ConnectResult r = connect(proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    if (!r.ok) throw std::runtime_error("admin console: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
};

// The summary line of SHOW ROUTE ("all-shards s0,s1 fence orders"; its last column).
std::string show_route(PgConn& admin, const std::string& sql) {
  PgResult r = admin.exec("SHOW ROUTE " + sql);
  REQUIRE_MESSAGE(r.ok(), r.describe());
  return r.value(0, r.cols() - 1);
}

bool all_migrations_done(PgConn& admin) {
  PgResult r = admin.exec("SHOW MIGRATIONS");
  if (!r.ok() || r.rows() == 0) return false;
  for (int i = 0; i < r.rows(); ++i)
    if (r.value(i, 4) != "done") return false;  // id, buckets, source, target, state
  return true;
}

// The first key >= 1 whose bucket satisfies `pred`.
template <typename Pred>
int64_t key_of_bucket(Pred pred) {
  for (int64_t k = 1;; ++k)
    if (pred(bucket_of(k))) return k;
}

}  // namespace

TEST_SUITE("sharding_reload") {
  TEST_CASE("a shard added by RELOAD alone gets DDL, routing and REBALANCE; removed again while empty") {
    PROXY_ONLY();
    ReloadDeployment d(/*catalog_shards=*/3, /*config_shards=*/3);
    PgConn app = d.client();
    REQUIRE_OK(app.exec(kCreateOrders));
    for (int key = 1; key <= kReloadRows; ++key)
      REQUIRE_OK(
          app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'before')"));
    PgConn admin = d.admin();
    CHECK(contains(show_route(admin, kCreateOrders), "all-shards s0,s1,s2 "));

    // The README's procedure: the shard in the config, `shardwire init`, RELOAD.
    d.write_config(4);
    d.setup.init_or_throw("", 4);
    REQUIRE_OK(admin.exec("RELOAD"));
    CHECK_MESSAGE(contains(show_route(admin, kCreateOrders), "all-shards s0,s1,s2,s3 "), d.proxy->log_tail());
    PgResult shards = admin.exec("SHOW SHARDS");
    REQUIRE_OK(shards);
    CHECK(shards.rows() == 4);

    // Removing it again while it owns nothing is allowed, and routing forgets it; adding it back.
    d.write_config(3);
    REQUIRE_OK(admin.exec("RELOAD"));
    CHECK(contains(show_route(admin, kCreateOrders), "all-shards s0,s1,s2 "));
    d.write_config(4);
    REQUIRE_OK(admin.exec("RELOAD"));

    // CREATE TABLE IF NOT EXISTS through shardwire reaches s3, with the fence trigger.
    REQUIRE_OK(app.exec(std::string(kCreateOrders).replace(0, 12, "CREATE TABLE IF NOT EXISTS")));
    PgConn s3 = d.setup.shard(3);
    CHECK(
        s3.value("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'orders'::regclass AND NOT tgisinternal") !=
        "0");

    PgResult plan = admin.exec("REBALANCE DRY RUN");
    REQUIRE_MESSAGE(plan.ok(), plan.describe());
    REQUIRE(plan.rows() > 0);
    int planned = 0;
    for (int i = 0; i < plan.rows(); ++i) {
      CHECK(plan.value(i, 1) == "s3");  // source, target, bucket_count, ...
      planned += std::stoi(plan.value(i, 2));
    }
    CHECK(planned > 0);
    // BY BUCKETS: the even bucket count (256 / 4), whatever the data.
    PgResult by_count = admin.exec("REBALANCE BY BUCKETS DRY RUN");
    REQUIRE_MESSAGE(by_count.ok(), by_count.describe());
    int by_count_buckets = 0;
    for (int i = 0; i < by_count.rows(); ++i) by_count_buckets += std::stoi(by_count.value(i, 2));
    CHECK(by_count_buckets == kReloadBuckets / 4);
    CHECK(contains(by_count.value(0, by_count.cols() - 1), "s3 64 buckets"));
    MESSAGE("by data: " << plan.value(0, plan.cols() - 1)
                        << "\nby buckets: " << by_count.value(0, by_count.cols() - 1));
    REQUIRE_OK(admin.exec("REBALANCE"));
    CHECK_MESSAGE(wait_until([&] { return all_migrations_done(admin); }, std::chrono::seconds(120),
                             std::chrono::milliseconds(200)),
                  d.proxy->log_tail(60));
    // By data: every shard holds the mean number of rows, +-5%.
    for (int s = 0; s < 4; ++s) {
      const int rows = std::stoi(d.setup.shard(s).value("SELECT count(*) FROM orders"));
      CHECK_MESSAGE(std::abs(rows - kReloadRows / 4) <= kReloadRows / 4 / 20, "s" << s << " holds " << rows);
    }
    CHECK(app.exec("SELECT tenant_id FROM orders").rows() == kReloadRows);
    // A key on a moved bucket is read and written on s3 through shardwire.
    PgResult on_s3 = s3.exec("SELECT tenant_id FROM orders LIMIT 1");
    REQUIRE_OK(on_s3);
    const std::string key = on_s3.value(0, 0);
    REQUIRE_OK(app.exec("UPDATE orders SET note = 'after' WHERE tenant_id = " + key));
    CHECK(s3.value("SELECT count(*) FROM orders WHERE note = 'after' AND tenant_id = " + key) != "0");

    // s3 now owns buckets: removing it is refused with the reason, and the running config stays.
    d.write_config(3);
    PgResult refused = admin.exec("RELOAD");
    REQUIRE_FALSE(refused.ok());
    CHECK_MESSAGE(
        contains(refused.describe(), "shard s3 still owns " + std::to_string(planned) + " bucket(s)"),
        refused.describe());
    CHECK(contains(show_route(admin, kCreateOrders), "all-shards s0,s1,s2,s3 "));
    CHECK(app.exec("SELECT tenant_id FROM orders").rows() == kReloadRows);
  }

  TEST_CASE("a directory naming a shard missing from the config stops only that shard's buckets") {
    PROXY_ONLY();
    // The catalog's directory spreads the buckets over 4 shards (bucket i on s(i mod 4)); this
    // instance's config lists 3. Before, shardwire started this way neither listened nor exited.
    ReloadDeployment d(/*catalog_shards=*/4, /*config_shards=*/3, /*lease=*/"2s");
    for (int s = 0; s < 4; ++s) REQUIRE_OK(d.setup.shard(s).exec(kCreateOrders));
    const int64_t kept = key_of_bucket([](uint32_t b) { return b % 4 == 1; });
    const int64_t on_s3 = key_of_bucket([](uint32_t b) { return b % 4 == 3; });
    const int64_t moved = key_of_bucket([](uint32_t b) { return b % 4 == 2; });
    const std::string fix = "which is not in this instance's configuration: add shard s3 to shards in " +
                            d.proxy->config_path() + " and RELOAD";
    PgConn app = d.client();
    auto insert = [&](int64_t key) {
      return app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'x')");
    };
    CHECK_OK(insert(kept));
    CHECK_OK(insert(moved));
    PgResult refused = insert(on_s3);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.sqlstate() == "F0000");
    CHECK_MESSAGE(contains(refused.describe(),
                           "bucket " + std::to_string(bucket_of(on_s3)) + " is on shard \"s3\", " + fix),
                  refused.describe());
    PgResult scatter = app.exec("SELECT * FROM orders");
    REQUIRE_FALSE(scatter.ok());
    CHECK_MESSAGE(contains(scatter.describe(), fix), scatter.describe());
    // The lease stays confirmed: past it, the other buckets still work.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    CHECK_OK(app.exec("SELECT * FROM orders WHERE tenant_id = " + std::to_string(kept)));

    // At run time: a bucket moved in the catalog to a shard no config lists.
    PgConn catalog = d.setup.catalog();
    long long version = move_bucket_in_catalog(catalog, static_cast<int>(bucket_of(moved)), "s7");
    REQUIRE(version > 0);
    REQUIRE_MESSAGE(wait_for_directory_version(*d.proxy, version, std::chrono::seconds(10)),
                    d.proxy->log_tail());
    CHECK(contains(d.proxy->log(), "puts buckets on shard \"s7\""));
    PgResult gone = app.exec("SELECT * FROM orders WHERE tenant_id = " + std::to_string(moved));
    REQUIRE_FALSE(gone.ok());
    CHECK_MESSAGE(
        contains(gone.describe(), "is on shard \"s7\", which is not in this instance's configuration"),
        gone.describe());
    std::this_thread::sleep_for(std::chrono::seconds(3));
    PgResult still = app.exec("SELECT note FROM orders WHERE tenant_id = " + std::to_string(kept));
    REQUIRE_MESSAGE(still.ok(), still.describe());
    CHECK(still.value() == "x");

    // The fix the error names: s3 in the config and RELOAD serves s3's buckets.
    d.write_config(4);
    PgConn admin = d.admin();
    REQUIRE_OK(admin.exec("RELOAD"));
    CHECK_OK(insert(on_s3));
    CHECK(d.setup.shard(3).value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(on_s3)) ==
          "1");
    PgResult refused_again = app.exec("SELECT * FROM orders WHERE tenant_id = " + std::to_string(moved));
    CHECK_FALSE(refused_again.ok());
    PgResult plan = admin.exec("REBALANCE DRY RUN");
    REQUIRE_FALSE(plan.ok());
    CHECK_MESSAGE(contains(plan.describe(), "add shard s7 to shards in"), plan.describe());
  }

  TEST_CASE("a shard a migration still uses cannot be removed by RELOAD") {
    PROXY_ONLY();
    // This instance runs no migration, so the one created stays planned.
    ReloadDeployment d(/*catalog_shards=*/3, /*config_shards=*/4, "30s", "  max_concurrent: 0\n");
    d.setup.init_or_throw("", 4);  // s3 gets the shardwire schema (the directory stays on s0..s2)
    PgConn app = d.client();
    REQUIRE_OK(app.exec(kCreateOrders));
    PgConn admin = d.admin();
    PgResult moved = admin.exec("MOVE BUCKETS 1 TO s3");
    REQUIRE_MESSAGE(moved.ok(), moved.describe());
    const std::string id = moved.value(0, 4);  // source, target, bucket_count, buckets, migration_id

    d.write_config(3);
    PgResult refused = admin.exec("RELOAD");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.sqlstate() == "F0000");
    CHECK_MESSAGE(
        contains(refused.describe(), "migration " + id + " (s1 -> s3, planned) still uses shard s3"),
        refused.describe());
    CHECK(contains(show_route(admin, kCreateOrders), "all-shards s0,s1,s2,s3 "));
  }
}
