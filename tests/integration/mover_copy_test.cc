// The mover's bulk copy and verification against real PostgreSQL 15 (docs/architecture.md §8.3, §8.5):
// two shard databases with the shardwire schema and `orders`, a logical slot exporting a
// snapshot over a raw `replication=database` libpq connection, changes after the snapshot that
// must not be copied, stale target rows that must go (in fenced buckets: the fence trigger must be
// skipped), other buckets that must stay, per-bucket digests equal on both sides and a changed
// row reported as exactly its bucket; then throttling, cancel, error texts and sequences.
#include "it_test.h"

#include <atomic>
#include <thread>

#include "catalog/pq.h"
#include "mover/copier.h"
#include "mover/verifier.h"
#include "sqltext/catalog_sql.h"

using namespace it;
namespace mover = sw::mover;

namespace {

constexpr uint32_t kBuckets = 64;
constexpr uint32_t kEmptyBucket = 3;  // no source row hashes here
const std::vector<sw::config::ShardedTable> kTables = {{"orders", "tenant_id", "bigint", ""}};

std::string bucket_sql(const std::string& column = "tenant_id") {
  return "shardwire.bucket_of(" + column + ", " + std::to_string(kBuckets) + ")";
}

// The moving buckets: every fourth one, plus the empty one.
mover::BucketSet moving_set() {
  std::vector<uint32_t> buckets{kEmptyBucket};
  for (uint32_t b = 1; b < kBuckets; b += 4) buckets.push_back(b);
  return mover::BucketSet(kBuckets, buckets);
}

std::string in_set(const mover::BucketSet& set) {
  return bucket_sql() + " = ANY('" + set.array_literal() + "'::int[])";
}

// A source and a target shard database: shardwire schema, `orders`, the fence trigger.
struct ShardPair {
  PgCluster& pg = shared_cluster();
  std::string source_db = unique_name("mcopy_src"), target_db = unique_name("mcopy_dst");

  ShardPair() {
    for (const std::string& db : {source_db, target_db}) {
      pg.create_database(db);
      PgConn c = pg.admin(db);
      REQUIRE_OK(c.exec(sw::sqltext::shard_schema_sql()));
      REQUIRE_OK(c.exec(
          "CREATE TABLE orders (tenant_id bigint, id bigserial, note text, PRIMARY KEY (tenant_id, id))"));
      REQUIRE_OK(c.exec_params(sw::sqltext::kInstallFenceSql,
                               {"orders", "tenant_id", "bigint", std::to_string(kBuckets)}));
    }
  }
  PgConn source() const { return pg.admin(source_db); }
  PgConn target() const { return pg.admin(target_db); }

  // `rows` rows; tenants avoid kEmptyBucket; notes include NULLs and characters COPY escapes.
  void fill_source(int rows) const {
    REQUIRE_OK(source().exec(
        "INSERT INTO orders (tenant_id, note) SELECT t, CASE WHEN g % 97 = 0 THEN NULL "
        "WHEN g % 89 = 0 THEN E'tab\\there\\nnew line \\\\ back ''quote'' \u00e9' ELSE 'note ' || g END "
        "FROM generate_series(1, " +
        std::to_string(rows) +
        ") g, LATERAL (SELECT g % 1000 AS t) k "
        "WHERE " +
        bucket_sql("t") + " <> " + std::to_string(kEmptyBucket)));
  }

  mover::CopyOptions options(const mover::BucketSet& set) const {
    mover::CopyOptions o;
    o.source_dsn = pg.conninfo(source_db);
    o.target_dsn = pg.conninfo(target_db);
    o.source_name = "s0";
    o.target_name = "s1";
    o.tables = kTables;
    o.buckets = set;
    return o;
  }
};

// Rows of the set, ordered, as text.
std::vector<std::vector<std::string>> rows_in(PgConn& c, const mover::BucketSet& set) {
  PgResult r = c.exec("SELECT tenant_id, id, note FROM orders WHERE " + in_set(set) + " ORDER BY 1, 2");
  REQUIRE_MESSAGE(r.ok(), r.describe());
  return r.data();
}

std::map<uint32_t, mover::BucketDigest> digests(PgConn& c, const mover::BucketSet& set) {
  auto d = mover::bucket_digests(c.get(), kTables, set);
  REQUIRE_MESSAGE(d.is_ok(), d.status().message);
  return *d;
}

// A logical slot whose exported snapshot lives as long as this connection stays idle.
struct ExportedSnapshot {
  PgConn conn;
  std::string slot = unique_name("mcopy_slot"), name;
  PgCluster& pg;

  ExportedSnapshot(PgCluster& cluster, const std::string& db) : pg(cluster) {
    conn = connect_or_throw(pg.conninfo(db) + " replication=database");
    PgResult r = conn.exec("CREATE_REPLICATION_SLOT " + slot + " LOGICAL pgoutput EXPORT_SNAPSHOT");
    REQUIRE_MESSAGE(r.ok(), r.describe());
    REQUIRE(r.cols() == 4);
    name = r.value(0, 2);
    REQUIRE_FALSE(name.empty());
  }
  ~ExportedSnapshot() {
    conn.reset();
    pg.admin().exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot +
        "'");
  }
  // A connection reading the database as of the snapshot.
  PgConn reader(const std::string& db) const {
    PgConn c = pg.admin(db);
    PgResult r =
        c.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" + name + "'");
    REQUIRE_MESSAGE(r.ok(), r.describe());
    return c;
  }
};

}  // namespace

TEST_SUITE("mover_copy") {
  TEST_CASE("copy in the slot's snapshot: exact rows, stale rows gone, digests equal, a change found") {
    ShardPair shards;
    shards.fill_source(20000);
    const mover::BucketSet set = moving_set();
    PgConn target = shards.target();
    // Target: stale rows in the moving buckets (an interrupted copy's) and rows of other buckets.
    REQUIRE_OK(target.exec(
        "INSERT INTO orders (tenant_id, note) SELECT g % 1000, 'stale' FROM generate_series(1, 3000) g"));
    const std::string kept_other =
        target.value("SELECT count(*) FROM orders WHERE NOT (" + in_set(set) + ")");
    REQUIRE(std::stoi(target.value("SELECT count(*) FROM orders WHERE " + in_set(set))) > 0);
    REQUIRE_OK(target.exec_params(sw::sqltext::kFenceBucketsSql, {set.array_literal(), "9"}));
    CHECK(target.exec("DELETE FROM orders WHERE " + in_set(set)).sqlstate() == "SW001");  // fenced

    ExportedSnapshot snapshot(shards.pg, shards.source_db);
    // After the snapshot: inserts, updates and deletes in moving buckets, none of which may be copied.
    PgConn source = shards.source();
    REQUIRE_OK(source.exec(
        "INSERT INTO orders (tenant_id, note) SELECT g % 1000, 'after' FROM generate_series(1, 2000) g"));
    REQUIRE_OK(source.exec("UPDATE orders SET note = 'changed after' WHERE id % 50 = 0"));
    REQUIRE_OK(source.exec("DELETE FROM orders WHERE id % 70 = 0"));

    PgConn in_snapshot = snapshot.reader(shards.source_db);
    const auto expected = rows_in(in_snapshot, set);
    REQUIRE(expected.size() > 4000);
    auto source_count = mover::count_rows(in_snapshot.get(), kTables, set);
    REQUIRE(source_count.is_ok());
    CHECK(*source_count == expected.size());

    mover::CopyOptions options = shards.options(set);
    options.snapshot_name = snapshot.name;
    std::vector<mover::CopyProgress> reports;
    options.on_progress = [&](const mover::CopyProgress& p) { reports.push_back(p); };
    const auto started = std::chrono::steady_clock::now();
    auto copied = mover::copy_buckets(options);
    REQUIRE_MESSAGE(copied.is_ok(), copied.status().message);
    MESSAGE("copied " << copied->rows << " rows, " << copied->bytes << " bytes in " << ms_since(started)
                      << " ms");
    CHECK(copied->rows == expected.size());
    REQUIRE_FALSE(reports.empty());
    CHECK(reports.back().rows == copied->rows);
    CHECK(reports.back().bytes == copied->bytes);

    CHECK(rows_in(target, set) == expected);
    CHECK(target.value("SELECT count(*) FROM orders WHERE note IN ('stale', 'after', 'changed after') AND " +
                       in_set(set)) == "0");
    CHECK(target.value("SELECT count(*) FROM orders WHERE NOT (" + in_set(set) + ")") == kept_other);
    auto target_count = mover::count_rows(target.get(), kTables, set);
    REQUIRE(target_count.is_ok());
    CHECK(*target_count == expected.size());

    const auto source_digests = digests(in_snapshot, set);
    const auto target_digests = digests(target, set);
    CHECK(source_digests.size() == set.list().size());
    CHECK(source_digests.at(kEmptyBucket) == mover::BucketDigest{0, "0"});
    CHECK(source_digests == target_digests);
    CHECK(mover::mismatched_buckets(source_digests, target_digests).empty());

    // Copying again (here in text format, in 3 streams, each importing the same snapshot and
    // clearing its share of the buckets first) is idempotent: same rows, same digests.
    REQUIRE_OK(
        target.exec("SET session_replication_role = replica; INSERT INTO orders (tenant_id, note) "
                    "SELECT g % 1000, 'stale' FROM generate_series(1, 3000) g; RESET "
                    "session_replication_role"));
    options.format = mover::CopyFormat::Text;
    options.streams = 3;
    reports.clear();
    auto again = mover::copy_buckets(options);
    REQUIRE_MESSAGE(again.is_ok(), again.status().message);
    CHECK(again->rows == expected.size());
    REQUIRE_FALSE(reports.empty());
    CHECK(reports.back().rows == again->rows);
    CHECK(target.value("SELECT count(*) FROM orders WHERE note = 'stale' AND " + in_set(set)) == "0");
    CHECK(rows_in(target, set) == expected);
    CHECK(digests(target, set) == source_digests);

    // One changed row on the target: exactly its bucket differs, with the same row count.
    const std::string changed_bucket = target.value("SELECT " + bucket_sql() + " FROM orders WHERE " +
                                                    in_set(set) + " ORDER BY tenant_id, id LIMIT 1");
    REQUIRE_OK(
        target.exec("SET session_replication_role = replica; UPDATE orders SET note = note || '!' WHERE "
                    "(tenant_id, id) = "
                    "(SELECT tenant_id, id FROM orders WHERE " +
                    in_set(set) + " ORDER BY tenant_id, id LIMIT 1)"));
    const auto changed = digests(target, set);
    CHECK(mover::mismatched_buckets(source_digests, changed) ==
          std::vector<uint32_t>{uint32_t(std::stoul(changed_bucket))});
    CHECK(changed.at(std::stoul(changed_bucket)).rows == source_digests.at(std::stoul(changed_bucket)).rows);

    // The bigserial moves past the imported ids: the target's sequence only saw the 3000 stale rows.
    const int64_t max_id = std::stoll(target.value("SELECT max(id) FROM orders WHERE " + in_set(set)));
    REQUIRE(std::stoll(target.value("SELECT last_value FROM orders_id_seq")) < max_id);
    sw::Status advanced = mover::advance_sequences(target.get(), kTables, set);
    REQUIRE_MESSAGE(advanced.is_ok(), advanced.message);
    CHECK(std::stoll(target.value("SELECT nextval('orders_id_seq')")) == max_id + 1);
    REQUIRE(mover::advance_sequences(target.get(), kTables, set).is_ok());  // never backwards
    CHECK(std::stoll(target.value("SELECT nextval('orders_id_seq')")) == max_id + 2);
  }

  TEST_CASE("throttled copy keeps to rows_per_sec; a cancel stops it with 57014 and rolls back") {
    ShardPair shards;
    const mover::BucketSet all(kBuckets, [] {
      std::vector<uint32_t> b(kBuckets);
      for (uint32_t i = 0; i < kBuckets; ++i) b[i] = i;
      return b;
    }());
    REQUIRE_OK(shards.source().exec(
        "INSERT INTO orders (tenant_id, note) SELECT g % 1000, 'n' || g FROM generate_series(1, 10000) g"));

    mover::CopyOptions options = shards.options(all);
    options.rows_per_sec = 5000;
    int reports = 0;
    options.on_progress = [&](const mover::CopyProgress&) { ++reports; };
    const auto started = std::chrono::steady_clock::now();
    auto copied = mover::copy_buckets(options);
    const long long ms = ms_since(started);
    REQUIRE_MESSAGE(copied.is_ok(), copied.status().message);
    REQUIRE(copied->rows == 10000);
    MESSAGE("throttled to 5000 rows/s: 10000 rows in " << ms << " ms = " << (copied->rows * 1000.0 / ms)
                                                       << " rows/s, " << reports << " progress reports");
    CHECK(ms >= 1800);
    CHECK(reports >= 3);  // every ~0.5 s plus the end

    // Cancel mid-copy: the copy ends soon, 57014, and the target's earlier rows are untouched.
    REQUIRE_OK(shards.source().exec("UPDATE orders SET note = 'second'"));
    std::atomic<bool> cancel{false};
    options.cancel = &cancel;
    options.rows_per_sec = 2000;
    options.on_progress = nullptr;
    std::thread canceller([&] {
      sleep_ms(700);
      cancel = true;
    });
    const auto cancel_start = std::chrono::steady_clock::now();
    auto canceled = mover::copy_buckets(options);
    const long long cancel_ms = ms_since(cancel_start);
    canceller.join();
    REQUIRE_FALSE(canceled.is_ok());
    CHECK(canceled.status().sqlstate == "57014");
    CHECK(contains(canceled.status().message, "copy of orders from s0"));
    // 57014 says the copy stopped on the cancel (at 2000 rows/s it needs 5 s); the time is a figure.
    MESSAGE("canceled after 700 ms; copy_buckets returned after " << cancel_ms << " ms");
    PgConn target = shards.target();
    CHECK(target.value("SELECT count(*) FROM orders") == "10000");
    CHECK(target.value("SELECT count(*) FROM orders WHERE note = 'second'") == "0");
  }

  TEST_CASE("digests over several tables add per-table sums; equal rows in two tables do not cancel") {
    ShardPair shards;
    shards.fill_source(3000);
    PgConn source = shards.source();
    REQUIRE_OK(source.exec("CREATE TABLE orders_copy AS SELECT * FROM orders"));
    const mover::BucketSet set = moving_set();
    const std::vector<sw::config::ShardedTable> both = {kTables[0],
                                                        {"orders_copy", "tenant_id", "bigint", ""}};
    auto one = mover::bucket_digests(source.get(), kTables, set);
    auto copy_only = mover::bucket_digests(source.get(), {both[1]}, set);
    auto combined = mover::bucket_digests(source.get(), both, set);
    REQUIRE(one.is_ok());
    REQUIRE(copy_only.is_ok());
    REQUIRE(combined.is_ok());
    for (uint32_t bucket : set.list()) {
      const auto& a = one->at(bucket);
      const auto& b = copy_only->at(bucket);
      const auto& ab = combined->at(bucket);
      CHECK(ab.rows == a.rows + b.rows);
      CHECK(ab.checksum ==
            source.value("SELECT (" + a.checksum + "::numeric + " + b.checksum + "::numeric)::text"));
      if (a.rows > 0) CHECK(a.checksum != b.checksum);  // the table name is part of each row's hash
    }
  }

  TEST_CASE("errors name the table and the side, never the password") {
    ShardPair shards;
    mover::CopyOptions options = shards.options(moving_set());
    REQUIRE_OK(shards.target().exec("DROP TABLE orders"));
    auto missing = mover::copy_buckets(options);
    REQUIRE_FALSE(missing.is_ok());
    CHECK(missing.status().sqlstate == "42P01");
    CHECK(contains(missing.status().message, "copy of orders to s1"));

    options.source_dsn = shards.pg.conninfo(shards.source_db, "app", "wrong-secret");
    auto refused = mover::copy_buckets(options);
    REQUIRE_FALSE(refused.is_ok());
    CHECK(contains(refused.status().message, "s0"));
    CHECK_FALSE(contains(refused.status().message, "secret"));
    MESSAGE("connect error: " << refused.status().message);

    options.tables = {{"orders", "tenant_id", "float8", ""}};
    options.source_dsn = shards.pg.conninfo(shards.source_db);
    auto bad_type = mover::copy_buckets(options);
    REQUIRE_FALSE(bad_type.is_ok());
    CHECK(bad_type.status().sqlstate == "22023");
  }
}
