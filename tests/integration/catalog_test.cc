// Catalog against real PostgreSQL 15: `shardwire init` (idempotent, refuses a mismatched
// directory), the directory layout, bucket_of on a shard, the SW001 fence trigger (and its
// session_replication_role = replica bypass), the DirectoryWatcher (NOTIFY within 1 s, the stale
// hook, the lease across a catalog outage). One cluster of its own hosts the catalog database and
// three shard databases; the last case stops and restarts it.
#include <sys/wait.h>
#include <unistd.h>

#include "it_test.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <set>

#include "catalog/directory_loader.h"
#include "catalog/directory_watcher.h"
#include "catalog/init.h"
#include "catalog/pq.h"
#include "config/config.h"
#include "router/bucket_hash.h"
#include "sqltext/catalog_sql.h"

using namespace it;
using sw::catalog::DirectoryWatcher;

namespace {

constexpr uint32_t kBuckets = 4096;

PgCluster& catalog_cluster() {
  static std::unique_ptr<PgCluster> cluster = std::make_unique<PgCluster>();
  return *cluster;
}

// A catalog database and three shard databases with fresh names; `orders` (bigint key) exists on
// s0 and s1 but not yet on s2, `accounts` (text key) on every shard.
struct Setup {
  std::string catalog_db, shard_db[3];
  sw::config::Config cfg;

  explicit Setup(std::chrono::milliseconds lease = std::chrono::seconds(30)) {
    PgCluster& pg = catalog_cluster();
    catalog_db = unique_name("catalog");
    pg.create_database(catalog_db);
    cfg.file = "catalog_test.yaml";
    cfg.catalog.dsn = pg.conninfo(catalog_db);
    for (int i = 0; i < 3; ++i) {
      shard_db[i] = unique_name("shard" + std::to_string(i));
      pg.create_database(shard_db[i]);
      cfg.shards.push_back({'s' + std::to_string(i), pg.conninfo(shard_db[i]), {}});
      PgConn c = pg.admin(shard_db[i]);
      REQUIRE(c.exec("CREATE TABLE accounts (name text PRIMARY KEY, balance int)").ok());
      if (i < 2)
        REQUIRE(c.exec("CREATE TABLE orders (id bigserial PRIMARY KEY, tenant_id bigint NOT NULL, note text)")
                    .ok());
    }
    cfg.sharding.buckets = static_cast<int>(kBuckets);
    cfg.sharding.default_shard = "s0";
    cfg.sharding.tables.push_back({"orders", "tenant_id", "bigint", ""});
    cfg.sharding.tables.push_back({"accounts", "name", "text", ""});
    cfg.sharding.directory_lease = lease;
  }
  PgConn catalog() const { return catalog_cluster().admin(catalog_db); }
  PgConn shard(int i) const { return catalog_cluster().admin(shard_db[i]); }
  void init() const {
    auto r = sw::catalog::initialize(cfg);
    REQUIRE_MESSAGE(r.is_ok(), r.status().message);
  }
};

uint32_t bucket_of(int64_t key) { return sw::router::bucket_of_hash(sw::router::hash_int8(key), kBuckets); }
uint32_t text_bucket(const std::string& key) {
  return sw::router::bucket_of_hash(sw::router::hash_text(key), kBuckets);
}

// The first key >= from whose bucket satisfies `pred`.
template <typename Pred>
int64_t key_where(Pred pred, int64_t from = 1) {
  for (int64_t k = from;; ++k)
    if (pred(bucket_of(k))) return k;
}

std::string fence_message(uint32_t bucket, uint64_t version) {
  return "bucket " + std::to_string(bucket) + " is not owned by this shard; directory version " +
         std::to_string(version);
}

// Collects published snapshots.
struct Published {
  std::mutex mu;
  std::vector<std::shared_ptr<const sw::router::Directory>> dirs;
  DirectoryWatcher::Publish callback() {
    return [this](std::shared_ptr<const sw::router::Directory> d) {
      std::lock_guard<std::mutex> lock(mu);
      dirs.push_back(std::move(d));
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return dirs.size();
  }
  std::shared_ptr<const sw::router::Directory> last() {
    std::lock_guard<std::mutex> lock(mu);
    return dirs.empty() ? nullptr : dirs.back();
  }
  // Waits for a snapshot with version >= v; returns it or null.
  std::shared_ptr<const sw::router::Directory> wait_version(uint64_t v, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto d = last();
      if (d && d->version() >= v) return d;
      sleep_ms(5);
    }
    return nullptr;
  }
};

}  // namespace

TEST_SUITE("catalog") {
  TEST_CASE("init creates the catalog, the directory and the shard schemas; a second run changes nothing") {
    Setup s;
    // Rows already there before init: on s0 one of a bucket it owns and one of a bucket s1 owns;
    // on s1 an account of a bucket s2 owns. Only those two fences may say they hold rows.
    const int64_t own = key_where([](uint32_t b) { return b % 3 == 0; });
    const int64_t foreign = key_where([](uint32_t b) { return b % 3 == 1; });
    std::string account = "acme";
    while (text_bucket(account) % 3 != 2) account += "x";
    REQUIRE_OK(s.shard(0).exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(own) +
                               ", 'a'), (" + std::to_string(foreign) + ", 'b')"));
    REQUIRE_OK(s.shard(1).exec("INSERT INTO accounts VALUES ('" + account + "', 1)"));
    auto first = sw::catalog::initialize(s.cfg);
    REQUIRE_MESSAGE(first.is_ok(), first.status().message);
    CHECK(first->catalog_created);
    CHECK(first->directory_created);
    CHECK(first->directory_version == 1);
    CHECK(first->buckets_per_shard == std::vector<uint32_t>{1366, 1365, 1365});
    REQUIRE(first->shards.size() == 3);
    CHECK(first->shards[0].schema_created);
    CHECK(first->shards[0].buckets_fenced == kBuckets - 1366);
    CHECK(first->shards[0].fences == std::vector<std::string>{"orders: created", "accounts: created"});
    CHECK(first->shards[2].fences == std::vector<std::string>{"accounts: created"});
    CHECK(first->shards[2].missing_tables == std::vector<std::string>{"orders"});
    MESSAGE(sw::catalog::format_report(*first));

    PgConn cat = s.catalog();
    CHECK(cat.value("SELECT version FROM shardwire.directory_version") == "1");
    CHECK(cat.value("SELECT count(*) FROM shardwire.buckets") == "4096");
    CHECK(cat.value(
              "SELECT count(*) FROM shardwire.buckets WHERE shard <> ('{s0,s1,s2}'::text[])[bucket % 3 + 1] "
              "OR state <> 'ACTIVE' OR version <> 1") == "0");
    CHECK(cat.value("SELECT min(bucket) || '..' || max(bucket) FROM shardwire.buckets") == "0..4095");
    for (int i = 0; i < 3; ++i) {
      PgConn sh = s.shard(i);
      // Every bucket the shard does not own is fenced there, at version 1; none it owns.
      CHECK(sh.value("SELECT count(*) FROM shardwire.fenced_buckets") ==
            std::to_string(kBuckets - (i == 0 ? 1366 : 1365)));
      CHECK(sh.value("SELECT count(*) FROM shardwire.fenced_buckets WHERE bucket % 3 = " + std::to_string(i) +
                     " OR version <> 1") == "0");
    }
    // holds_rows: true only where a sharded table there held a row of the fenced bucket.
    const std::string holding =
        "SELECT coalesce(string_agg(bucket::text, ','), '') FROM shardwire.fenced_buckets "
        "WHERE holds_rows";
    CHECK(s.shard(0).value(holding) == std::to_string(bucket_of(foreign)));
    CHECK(s.shard(1).value(holding) == std::to_string(text_bucket(account)));
    CHECK(s.shard(2).value(holding) == "");

    // The state a second run must leave untouched.
    const std::string fingerprint_catalog =
        "SELECT (SELECT version || '/' || xmin FROM shardwire.directory_version) || ' ' || "
        "(SELECT sum(version) || '/' || max(xmin::text::bigint) FROM shardwire.buckets)";
    const std::string fingerprint_shard =
        "SELECT (SELECT count(*) || '/' || max(xmin::text::bigint) FROM shardwire.fenced_buckets) || ' ' || "
        "(SELECT string_agg(t.oid || ':' || t.tgfoid || ':' || p.xmin, ',' ORDER BY t.oid) FROM pg_trigger t "
        " JOIN pg_proc p ON p.oid = t.tgfoid WHERE t.tgname = 'shardwire_fence')";
    std::string before_cat = cat.value(fingerprint_catalog);
    std::string before_shard[3];
    for (int i = 0; i < 3; ++i) before_shard[i] = s.shard(i).value(fingerprint_shard);

    auto second = sw::catalog::initialize(s.cfg);
    REQUIRE_MESSAGE(second.is_ok(), second.status().message);
    CHECK_FALSE(second->catalog_created);
    CHECK_FALSE(second->directory_created);
    CHECK(second->directory_version == 1);
    CHECK_FALSE(second->shards[1].schema_created);
    CHECK(second->shards[1].buckets_fenced == 0);
    CHECK(second->shards[1].fences == std::vector<std::string>{"orders: unchanged", "accounts: unchanged"});
    CHECK(sw::catalog::run_init(s.cfg).is_ok());  // the CLI entry point: a third run, summary on stdout
    CHECK(cat.value(fingerprint_catalog) == before_cat);
    for (int i = 0; i < 3; ++i) CHECK(s.shard(i).value(fingerprint_shard) == before_shard[i]);

    // load_directory reads exactly the initial layout.
    auto conn = sw::catalog::connect(s.cfg.catalog.dsn, "catalog");
    REQUIRE(conn.is_ok());
    auto dir = sw::catalog::load_directory(conn->get(), s.cfg);
    REQUIRE_MESSAGE(dir.is_ok(), dir.status().message);
    auto initial = sw::router::Directory::initial(kBuckets, {"s0", "s1", "s2"});
    CHECK((*dir)->version() == 1);
    CHECK((*dir)->shards() == initial->shards());
    int mismatches = 0;
    for (uint32_t b = 0; b < kBuckets; ++b) mismatches += (*dir)->bucket(b).shard != initial->bucket(b).shard;
    CHECK(mismatches == 0);

    // A shard schema from before holds_rows: init adds the column, true on every fence (their
    // rows are not known), and a run after that changes nothing.
    REQUIRE_OK(s.shard(2).exec("ALTER TABLE shardwire.fenced_buckets DROP COLUMN holds_rows"));
    s.init();
    const std::string all_true =
        "SELECT count(*) FILTER (WHERE holds_rows) || '/' || count(*) FROM "
        "shardwire.fenced_buckets";
    CHECK(s.shard(2).value(all_true) == "2731/2731");
    const std::string upgraded = s.shard(2).value(fingerprint_shard);
    s.init();
    CHECK(s.shard(2).value(fingerprint_shard) == upgraded);
  }

  TEST_CASE("init refuses a catalog whose directory does not fit the config") {
    Setup s;
    s.init();
    sw::config::Config other = s.cfg;
    other.sharding.buckets = 1024;
    auto r = sw::catalog::initialize(other);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().fault == sw::Fault::Config);
    CHECK_MESSAGE(contains(r.status().message, "4096 buckets but sharding.buckets is 1024"),
                  r.status().message);
    CHECK(contains(r.status().message, "refusing to initialize"));
    CHECK_FALSE(contains(r.status().message, "password"));

    other = s.cfg;
    other.shards[2].name = "s9";
    r = sw::catalog::initialize(other);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().fault == sw::Fault::Config);
    CHECK_MESSAGE(contains(r.status().message, "shard \"s2\", which is not in the config"),
                  r.status().message);
    CHECK(s.catalog().value("SELECT version FROM shardwire.directory_version") == "1");
  }

  TEST_CASE("bucket_of on a shard equals the C++ bucket hash") {
    Setup s;
    s.init();
    PgConn sh = s.shard(0);
    PgResult r = sh.exec(
        "SELECT k, shardwire.bucket_of(k, 4096), shardwire.bucket_of(k::text, 4096) "
        "FROM (SELECT generate_series(-500, 500) AS k UNION ALL SELECT 9223372036854775807 "
        "UNION ALL SELECT -9223372036854775808) g");
    REQUIRE_MESSAGE(r.ok(), r.describe());
    int bad = 0;
    for (int row = 0; row < r.rows(); ++row) {
      int64_t k = std::stoll(r.value(row, 0));
      bad += std::to_string(bucket_of(k)) != r.value(row, 1);
      bad += std::to_string(text_bucket(r.value(row, 0))) != r.value(row, 2);
    }
    CHECK(r.rows() == 1003);
    CHECK(bad == 0);
  }

  TEST_CASE("a fenced bucket refuses INSERT, UPDATE and DELETE with SW001; replica role bypasses") {
    Setup s;
    s.init();
    PgConn sh = s.shard(0);
    // Two buckets s0 owns (one we fence now, at version 42) and one it does not own (fenced by init).
    int64_t k_ok = key_where([](uint32_t b) { return b % 3 == 0; });
    int64_t k_fenced = key_where([&](uint32_t b) { return b % 3 == 0 && b != bucket_of(k_ok); }, k_ok + 1);
    int64_t k_foreign = key_where([](uint32_t b) { return b % 3 == 1; });
    const uint32_t b_fenced = bucket_of(k_fenced), b_foreign = bucket_of(k_foreign);
    auto sql = [](const std::string& f, int64_t a, int64_t b = 0) {
      std::string out = f;
      out.replace(out.find("%a"), 2, std::to_string(a));
      if (auto p = out.find("%b"); p != std::string::npos) out.replace(p, 2, std::to_string(b));
      return out;
    };
    REQUIRE(sh.exec(sql("INSERT INTO orders (tenant_id, note) VALUES (%a, 'ok'), (%b, 'soon fenced')", k_ok,
                        k_fenced))
                .ok());
    REQUIRE(sh.exec("INSERT INTO shardwire.fenced_buckets (bucket, version) VALUES (" +
                    std::to_string(b_fenced) + ", 42)")
                .ok());

    auto expect_fenced = [&](const std::string& statement, uint32_t bucket, uint64_t version) {
      PgResult r = sh.exec(statement);
      INFO(statement << " -> " << r.describe());
      CHECK_FALSE(r.ok());
      CHECK(r.sqlstate() == "SW001");
      CHECK(r.error() == fence_message(bucket, version));
    };
    expect_fenced(sql("INSERT INTO orders (tenant_id) VALUES (%a)", k_fenced), b_fenced, 42);
    expect_fenced(sql("UPDATE orders SET note = 'x' WHERE tenant_id = %a", k_fenced), b_fenced, 42);
    expect_fenced(sql("DELETE FROM orders WHERE tenant_id = %a", k_fenced), b_fenced, 42);
    // UPDATE checks the new row too: moving a row into a fenced bucket is refused.
    expect_fenced(sql("UPDATE orders SET tenant_id = %b WHERE tenant_id = %a", k_ok, k_fenced), b_fenced, 42);
    // A bucket the shard never owned (fenced by init at directory version 1).
    expect_fenced(sql("INSERT INTO orders (tenant_id) VALUES (%a)", k_foreign), b_foreign, 1);
    // The text-keyed table: a name in a bucket s0 does not own.
    std::string name;
    for (int i = 0; name.empty(); ++i)
      if (text_bucket("acct" + std::to_string(i)) % 3 == 1) name = "acct" + std::to_string(i);
    expect_fenced("INSERT INTO accounts (name) VALUES ('" + name + "')", text_bucket(name), 1);

    // Other buckets work.
    CHECK(sh.exec(sql("INSERT INTO orders (tenant_id) VALUES (%a)", k_ok)).ok());
    CHECK(sh.exec(sql("UPDATE orders SET note = 'updated' WHERE tenant_id = %a", k_ok)).ok());
    CHECK(sh.exec(sql("DELETE FROM orders WHERE tenant_id = %a AND note = 'updated'", k_ok)).ok());
    CHECK(sh.value(sql("SELECT count(*) FROM orders WHERE tenant_id = %a", k_fenced)) == "1");

    // session_replication_role = replica (the mover's applier and cleaner) skips the trigger.
    REQUIRE(sh.exec("SET session_replication_role = replica").ok());
    CHECK(sh.exec(sql("INSERT INTO orders (tenant_id) VALUES (%a), (%b)", k_fenced, k_foreign)).ok());
    CHECK(sh.exec(sql("UPDATE orders SET note = 'applied' WHERE tenant_id = %a", k_fenced)).ok());
    CHECK(sh.exec(sql("DELETE FROM orders WHERE tenant_id IN (%a, %b)", k_fenced, k_foreign)).ok());
    REQUIRE(sh.exec("RESET session_replication_role").ok());

    // Unfencing lets writes through again.
    REQUIRE(sh.exec("DELETE FROM shardwire.fenced_buckets WHERE bucket = " + std::to_string(b_fenced)).ok());
    CHECK(sh.exec(sql("INSERT INTO orders (tenant_id) VALUES (%a)", k_fenced)).ok());

    // A configured table created later gets its fence from the statement the proxy sends.
    PgConn s2 = s.shard(2);
    REQUIRE(s2.exec("CREATE TABLE orders (tenant_id bigint NOT NULL)").ok());
    CHECK(s2.value(sw::sqltext::install_fence_statement(s.cfg.sharding.tables[0], kBuckets)) == "created");
    CHECK(s2.value(sw::sqltext::install_fence_statement(s.cfg.sharding.tables[0], kBuckets)) == "unchanged");
    // varchar is hashed as text: the same trigger function, nothing to change.
    CHECK(s2.value("SELECT shardwire.install_fence('accounts', 'name', 'varchar', 4096)") == "unchanged");
    PgResult r = s2.exec("INSERT INTO orders VALUES (" + std::to_string(k_ok) + ")");
    CHECK(r.sqlstate() == "SW001");
    CHECK(r.error() == fence_message(bucket_of(k_ok), 1));
    CHECK(s2.exec("INSERT INTO orders VALUES (" +
                  std::to_string(key_where([](uint32_t b) { return b % 3 == 2; })) + ")")
              .ok());
  }

  TEST_CASE("the watcher publishes a catalog change, heartbeats, and honours the stale hook") {
    Setup s(std::chrono::seconds(2));  // lease 2 s -> heartbeat every 500 ms
    s.init();
    Published published;
    sw::catalog::WatcherOptions opts;
    opts.router_id = "it-router-1";
    DirectoryWatcher w(s.cfg, published.callback(), opts);
    w.start();
    auto first = w.wait_for_directory(std::chrono::seconds(10));
    REQUIRE(first);
    CHECK(first->version() == 1);
    REQUIRE(published.wait_version(1, std::chrono::seconds(2)));
    CHECK(w.lease_valid(DirectoryWatcher::Clock::now()));
    PgConn cat = s.catalog();
    CHECK(wait_until(
        [&] {
          return cat.value(
                     "SELECT count(*) FROM shardwire.routers WHERE id = 'it-router-1' "
                     "AND directory_version = 1 AND pid IS NOT NULL") == "1";
        },
        std::chrono::seconds(3)));

    // Moving bucket 0 to s1 bumps the version (once per transaction) and reaches the watcher (the
    // time it took is a reported figure; 10 s only guards against a hang).
    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(cat.exec("BEGIN; UPDATE shardwire.buckets SET shard = 's1' WHERE bucket = 0; "
                     "UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket = 3; COMMIT")
                .ok());
    auto second = published.wait_version(2, std::chrono::seconds(10));
    long long ms = ms_since(t0);
    REQUIRE_MESSAGE(second, "the watcher published no snapshot with version 2 in 10 s");
    MESSAGE("directory version 2 published after " << ms << " ms");
    CHECK(second->version() == 2);
    CHECK(second->bucket(0).shard == 1);
    CHECK(second->bucket(0).version == 2);
    CHECK(second->bucket(3).state == sw::router::BucketState::Migrating);
    CHECK(second->bucket(1).version == 1);
    CHECK(cat.value("SELECT version FROM shardwire.directory_version") == "2");
    CHECK(wait_until(
        [&] {
          return cat.value("SELECT directory_version FROM shardwire.routers WHERE id = 'it-router-1'") == "2";
        },
        std::chrono::seconds(3)));

    // request_refresh (after a fence error) reloads even without a NOTIFY; an unchanged version
    // publishes nothing new.
    size_t count = published.count();
    w.request_refresh();
    sleep_ms(200);
    CHECK(published.count() == count);
    CHECK(w.lease_valid(DirectoryWatcher::Clock::now()));

    // A stale proxy: updates ignored, it keeps heartbeating version 2, and its lease lapses.
    w.set_ignore_updates(true);
    REQUIRE(cat.exec("UPDATE shardwire.buckets SET shard = 's2' WHERE bucket = 0").ok());
    sleep_ms(1500);
    CHECK(published.last()->version() == 2);
    CHECK(cat.value("SELECT directory_version FROM shardwire.routers WHERE id = 'it-router-1'") == "2");
    CHECK(
        wait_until([&] { return !w.lease_valid(DirectoryWatcher::Clock::now()); }, std::chrono::seconds(3)));
    w.set_ignore_updates(false);
    auto third = published.wait_version(3, std::chrono::seconds(10));
    REQUIRE_MESSAGE(third, "the watcher published no snapshot with version 3 in 10 s after updates resumed");
    CHECK(third->bucket(0).shard == 2);
    CHECK(w.lease_valid(DirectoryWatcher::Clock::now()));

    w.stop();
    CHECK(cat.value("SELECT count(*) FROM shardwire.routers WHERE id = 'it-router-1'") == "0");
  }

  TEST_CASE("a router registering removes the dead registrations of its own host and port, not live ones") {
    Setup s(std::chrono::seconds(2));
    s.init();
    char host[256] = {};
    REQUIRE(gethostname(host, sizeof host - 1) == 0);
    pid_t dead = fork();  // a pid that surely names no process once reaped
    if (dead == 0) _exit(0);
    REQUIRE(dead > 0);
    REQUIRE(waitpid(dead, nullptr, 0) == dead);
    PgConn cat = s.catalog();
    const std::string port = std::to_string(s.cfg.listen.port);
    REQUIRE(cat.exec("INSERT INTO shardwire.routers (id, directory_version, host, port, pid) VALUES "
                     "('killed', 1, '" +
                     std::string(host) + "', " + port + ", " + std::to_string(dead) +
                     "), "
                     "('sharing-the-port', 1, '" +
                     std::string(host) + "', " + port + ", " + std::to_string(getpid()) +
                     "), "
                     "('other-port', 1, '" +
                     std::string(host) + "', " + std::to_string(s.cfg.listen.port + 1) + ", " +
                     std::to_string(dead) + ")")
                .ok());
    sw::catalog::WatcherOptions opts;
    opts.router_id = "it-router-2";
    Published published;
    DirectoryWatcher w(s.cfg, published.callback(), opts);
    w.start();
    REQUIRE(w.wait_for_directory(std::chrono::seconds(10)));
    CHECK(wait_until(
        [&] {
          return cat.value("SELECT string_agg(id, ',' ORDER BY id) FROM shardwire.routers") ==
                 "it-router-2,other-port,sharing-the-port";
        },
        std::chrono::seconds(3)));
    w.stop();
  }

  TEST_CASE("incremental reloads give exactly the whole load's directory, also after missed versions") {
    Setup s(std::chrono::seconds(2));  // heartbeat every 500 ms
    s.init();
    PgConn cat = s.catalog();
    // `shardwire init` upgrades a catalog created before full_since and the acknowledgement NOTIFY.
    REQUIRE(cat.exec("ALTER TABLE shardwire.directory_version DROP COLUMN full_since; "
                     "DROP TRIGGER routers_version ON shardwire.routers; "
                     "UPDATE shardwire.buckets SET state = 'ACTIVE' WHERE bucket = 2")
                .ok());
    {
      // A new shardwire against the old catalog (deployed before `shardwire init` ran): whole loads.
      Published old_catalog;
      DirectoryWatcher before_upgrade(s.cfg, old_catalog.callback());
      before_upgrade.start();
      REQUIRE(before_upgrade.wait_for_directory(std::chrono::seconds(10)));
      REQUIRE(cat.exec("UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket = 2").ok());
      auto seen = old_catalog.wait_version(3, std::chrono::seconds(2));
      REQUIRE(seen);
      CHECK(seen->bucket(2).state == sw::router::BucketState::Migrating);
      CHECK(before_upgrade.incremental_loads() == 0);
      CHECK(before_upgrade.whole_loads() == 2);
      before_upgrade.stop();
      REQUIRE(cat.exec("UPDATE shardwire.buckets SET state = 'ACTIVE' WHERE bucket = 2").ok());
    }
    s.init();
    CHECK(cat.value("SELECT full_since = version AND version = 4 FROM shardwire.directory_version") == "t");
    CHECK(cat.value("SELECT count(*) FROM pg_trigger WHERE tgname = 'routers_version'") == "1");

    auto reference = sw::catalog::connect(s.cfg.catalog.dsn, "catalog");
    REQUIRE(reference.is_ok());
    // What a router starting now would load.
    auto whole_load = [&] {
      auto d = sw::catalog::load_directory(reference->get(), s.cfg);
      REQUIRE_MESSAGE(d.is_ok(), d.status().message);
      return *d;
    };
    auto acks = sw::catalog::connect(s.cfg.catalog.dsn, "catalog");
    REQUIRE(acks.is_ok());
    REQUIRE(sw::catalog::exec(acks->get(), "LISTEN shardwire_routers").is_ok());

    Published published;
    sw::catalog::WatcherOptions opts;
    opts.router_id = "it-router-incremental";
    DirectoryWatcher w(s.cfg, published.callback(), opts);
    w.start();
    REQUIRE(w.wait_for_directory(std::chrono::seconds(10)));
    CHECK(w.whole_loads() == 1);

    // A cutover's two versions: each arrives by an incremental load equal to a whole load, and the
    // router's acknowledgement of each sends NOTIFY shardwire_routers '<version>'.
    REQUIRE(cat.exec("UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket IN (0, 3, 4095)").ok());
    auto migrating = published.wait_version(5, std::chrono::seconds(2));
    REQUIRE(migrating);
    CHECK(*migrating == *whole_load());
    CHECK(migrating->bucket(3).state == sw::router::BucketState::Migrating);
    REQUIRE(
        cat.exec("UPDATE shardwire.buckets SET shard = 's1', state = 'ACTIVE' WHERE bucket IN (0, 3, 4095)")
            .ok());
    auto flipped = published.wait_version(6, std::chrono::seconds(2));
    REQUIRE(flipped);
    CHECK(*flipped == *whole_load());
    CHECK(flipped->bucket(4095).shard == 1);
    CHECK(w.incremental_loads() >= 2);
    CHECK(w.whole_loads() == 1);
    std::set<std::string> acknowledged;
    CHECK(wait_until(
        [&] {
          PQconsumeInput(acks->get());
          while (PGnotify* n = PQnotifies(acks->get())) {
            acknowledged.insert(n->extra);
            PQfreemem(n);
          }
          return acknowledged.count("5") && acknowledged.count("6");
        },
        std::chrono::seconds(3), std::chrono::milliseconds(10)));

    // Missed notifications: a stale router skips three versions, one of which puts buckets on a
    // shard this config lacks; catching up reads only the changed rows and equals a whole load.
    w.set_ignore_updates(true);
    REQUIRE(cat.exec("UPDATE shardwire.buckets SET shard = 's9' WHERE bucket IN (5, 1)").ok());
    REQUIRE(cat.exec("UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket = 6").ok());
    REQUIRE(
        cat.exec("UPDATE shardwire.buckets SET shard = 's2', state = 'ACTIVE' WHERE bucket IN (6, 0)").ok());
    sleep_ms(300);
    CHECK(published.last()->version() == 6);
    const uint64_t incremental_before = w.incremental_loads();
    w.set_ignore_updates(false);
    auto caught_up = published.wait_version(9, std::chrono::seconds(2));
    REQUIRE(caught_up);
    CHECK(*caught_up == *whole_load());
    CHECK(caught_up->shards() == std::vector<std::string>{"s0", "s1", "s2", "s9"});
    CHECK(w.incremental_loads() > incremental_before);
    CHECK(w.whole_loads() == 1);

    // A bucket row deleted (and written again) since: the changed rows cannot tell, a whole load does.
    REQUIRE(cat.exec("BEGIN; DELETE FROM shardwire.buckets WHERE bucket = 9; "
                     "INSERT INTO shardwire.buckets (bucket, shard) VALUES (9, 's0'); COMMIT")
                .ok());
    auto reinserted = published.wait_version(10, std::chrono::seconds(2));
    REQUIRE(reinserted);
    CHECK(*reinserted == *whole_load());
    CHECK(w.whole_loads() == 2);

    // A catalog behind the router (restored from a backup): the heartbeat sees another version, and
    // the reload is whole.
    REQUIRE(cat.exec("UPDATE shardwire.directory_version SET version = 1").ok());
    REQUIRE(cat.exec("UPDATE shardwire.buckets SET shard = 's1' WHERE bucket = 9").ok());  // version 2
    CHECK(wait_until([&] { return w.current()->version() == 2; }, std::chrono::seconds(3)));
    CHECK(*w.current() == *whole_load());
    CHECK(w.whole_loads() == 3);
    w.stop();
  }

  TEST_CASE("the lease lapses while the catalog is down and returns with it") {
    Setup s(std::chrono::seconds(1));
    s.init();
    Published published;
    DirectoryWatcher w(s.cfg, published.callback());
    CHECK(contains(w.router_id(), ":" + std::to_string(s.cfg.listen.port) + ":"));
    w.start();
    REQUIRE(w.wait_for_directory(std::chrono::seconds(10)));
    CHECK(wait_until([&] { return w.lease_valid(DirectoryWatcher::Clock::now()); }, std::chrono::seconds(2)));

    catalog_cluster().stop();
    auto stopped = std::chrono::steady_clock::now();
    bool lapsed =
        wait_until([&] { return !w.lease_valid(DirectoryWatcher::Clock::now()); }, std::chrono::seconds(5));
    MESSAGE("lease invalid " << ms_since(stopped) << " ms after the catalog stopped (lease 1000 ms)");
    CHECK(lapsed);
    CHECK(ms_since(stopped) <= 2500);
    CHECK(w.current());  // the last snapshot stays available; the lease says not to route on it
    CHECK_FALSE(w.connected());

    catalog_cluster().start();
    auto restarted = std::chrono::steady_clock::now();
    CHECK(
        wait_until([&] { return w.lease_valid(DirectoryWatcher::Clock::now()); }, std::chrono::seconds(10)));
    MESSAGE("lease valid again " << ms_since(restarted) << " ms after the catalog restarted");
    CHECK(w.connected());

    // LISTEN is back too: a change is published within 1 s.
    REQUIRE(s.catalog().exec("UPDATE shardwire.buckets SET shard = 's2' WHERE bucket = 1").ok());
    auto next = published.wait_version(2, std::chrono::seconds(1));
    REQUIRE(next);
    CHECK(next->bucket(1).shard == 2);
    w.stop();
  }

}  // TEST_SUITE
