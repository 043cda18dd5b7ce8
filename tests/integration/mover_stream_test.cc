// The mover's catch-up stream (proxy/mover: replication, apply_sql, change_applier,
// catch_up_stream) against real PostgreSQL 15: a source and a target database with the shard
// schema and `orders (tenant_id, id, note, row_version)`, a publication and a slot created with
// ReplicationConnection (exported snapshot, read by a hand-made copy), then inserts, updates
// (TOASTed `note` left unchanged, key changes within, into and out of the bucket set) and deletes
// on keys in and out of the set. The target must end up holding exactly the moving buckets' rows;
// a stop and restart loses and duplicates nothing; upsert-if-newer keeps a newer target row;
// a TRUNCATE removes only the set's buckets; a replayed transaction is skipped by the progress row;
// staged source transactions commit as one target transaction through prepared statements; the
// apply lag has one sample per transaction with rows of the moving buckets, steady ones only
// after mark_caught_up().
#include "it_test.h"

#include <memory>
#include <vector>

#include "mover/catch_up_stream.h"
#include "mover/change_applier.h"
#include "mover/replication.h"
#include "router/bucket_hash.h"
#include "sqltext/catalog_sql.h"

using namespace it;
using namespace sw::mover;
namespace pgo = sw::wire::pgoutput;

// A Result that must hold a value; the failure shows its Status (read only on failure).
#define REQUIRE_RESULT(r)                         \
  do {                                            \
    if (!(r).is_ok()) FAIL((r).status().message); \
  } while (0)

namespace {

constexpr uint32_t kBuckets = 16;
const sw::config::ShardedTable kOrders{"orders", "tenant_id", "bigint", "row_version"};

uint32_t bucket_of(int64_t tenant) {
  return sw::router::bucket_of_hash(sw::router::hash_int8(tenant), kBuckets);
}

// The buckets of tenants 1 and 2 move; tenants are picked by whether their bucket moves.
BucketSet moving() { return BucketSet(kBuckets, {bucket_of(1), bucket_of(2)}); }
std::vector<int64_t> tenants(bool in_set, size_t n) {
  std::vector<int64_t> out;
  for (int64_t k = 1; out.size() < n; ++k)
    if (moving().contains(bucket_of(k)) == in_set) out.push_back(k);
  return out;
}

Lsn lsn_of(PgConn& conn, const std::string& sql) {
  auto lsn = parse_lsn(conn.value(sql));
  REQUIRE_RESULT(lsn);
  return *lsn;
}

// A source and a target database with the shard schema, orders on both, the publication on the
// source (note stored out of line uncompressed, so large values are TOASTed).
struct Shards {
  std::string source_db = unique_name("mv_source"), target_db = unique_name("mv_target");
  std::string slot = unique_name("sw_slot"), publication = "sw_pub";
  PgConn source, target;

  Shards() {
    PgCluster& pg = shared_cluster();
    for (const auto& db : {source_db, target_db}) {
      pg.create_database(db);
      PgConn c = pg.admin(db);
      REQUIRE_OK(c.exec(sw::sqltext::shard_schema_sql()));
      REQUIRE_OK(
          c.exec("CREATE TABLE orders (tenant_id bigint, id bigint, note text, row_version bigint, "
                 "PRIMARY KEY (tenant_id, id))"));
    }
    source = pg.admin(source_db);
    target = pg.admin(target_db);
    REQUIRE_OK(source.exec("ALTER TABLE orders ALTER note SET STORAGE EXTERNAL"));
    REQUIRE_OK(source.exec("CREATE PUBLICATION sw_pub FOR TABLE orders"));
  }

  ~Shards() {
    // The walsender of a stopped stream may take a moment to release the slot.
    for (int i = 0; i < 100; ++i) {
      PgResult r = source.exec(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot +
          "'");
      if (r.ok()) break;
      sleep_ms(100);
    }
  }

  CatchUpOptions options(Lsn start_lsn, int64_t migration_id = 1) const {
    PgCluster& pg = shared_cluster();
    CatchUpOptions o;
    o.source_dsn = pg.conninfo(source_db);
    o.target_dsn = pg.conninfo(target_db);
    o.slot = slot;
    o.publication = publication;
    o.migration_id = migration_id;
    o.tables = {kOrders};
    o.buckets = moving();
    o.start_lsn = start_lsn;
    o.status_interval = std::chrono::milliseconds(200);
    return o;
  }

  // Waits until everything committed on the source so far is processed.
  void catch_up(CatchUpStream& stream) {
    const Lsn lsn = lsn_of(source, "SELECT pg_current_wal_insert_lsn()::text");
    const bool done = stream.wait_until_processed(lsn, std::chrono::seconds(30));
    REQUIRE_MESSAGE(done, "processed " << lsn_text(stream.processed_lsn()) << " of " << lsn_text(lsn)
                                       << "; last error: " << stream.last_error().message);
  }

  static std::vector<std::vector<std::string>> rows(PgConn& conn, const std::string& where = "") {
    PgResult r = conn.exec(
        "SELECT tenant_id, id, coalesce(md5(note), '-'), coalesce(row_version::text, '-') "
        "FROM orders " +
        where + " ORDER BY 1, 2");
    REQUIRE_MESSAGE(r.ok(), r.describe());
    return r.data();
  }
  std::string in_set() const {
    return "WHERE shardwire.bucket_of(tenant_id, " + std::to_string(kBuckets) + ") = ANY('" +
           moving().array_literal() + "'::int[])";
  }
  // The target holds exactly the source's rows of the moving buckets.
  void check_target_matches() {
    const auto expected = rows(source, in_set());
    const auto actual = rows(target);
    CHECK(actual.size() == expected.size());
    CHECK(actual == expected);
  }
};

// The Relation message of public.orders as pgoutput sends it (OID 1 in these tests).
pgo::Relation orders_relation() {
  pgo::Relation rel;
  rel.oid = 1;
  rel.namespace_name = "public";
  rel.name = "orders";
  rel.columns = {{true, "tenant_id", 20, -1},
                 {true, "id", 20, -1},
                 {false, "note", 25, -1},
                 {false, "row_version", 20, -1}};
  return rel;
}

pgo::ColumnValue text_value(std::string v) { return pgo::ColumnValue{pgo::ColumnKind::Text, std::move(v)}; }

}  // namespace

TEST_SUITE("mover_stream") {
  TEST_CASE(
      "the catch-up stream applies the moving buckets' changes and resumes without loss or duplicates") {
    Shards s;
    const auto in = tenants(true, 3), out = tenants(false, 2);
    for (int64_t t : {in[0], in[1], out[0]})
      REQUIRE_OK(s.source.exec("INSERT INTO orders SELECT " + std::to_string(t) +
                               ", g, 'pre', 1 FROM generate_series(1, 3) g"));

    // Slot with an exported snapshot; a write lands between the slot and the copy.
    auto repl = ReplicationConnection::open(shared_cluster().conninfo(s.source_db));
    REQUIRE_RESULT(repl);
    auto slot = (*repl)->create_slot(s.slot, /*export_snapshot=*/true);
    REQUIRE_RESULT(slot);
    CHECK(slot->name == s.slot);
    CHECK(slot->consistent_point > 0);
    REQUIRE_FALSE(slot->snapshot_name.empty());
    const std::string t0 = std::to_string(in[0]), t1 = std::to_string(in[1]), t2 = std::to_string(in[2]);
    const std::string o0 = std::to_string(out[0]), o1 = std::to_string(out[1]);
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t0 + ", 100, 'after slot', 1)"));

    {  // The copy: the snapshot's rows of the moving buckets, as the mover's copy step does with COPY.
      PgConn reader = shared_cluster().admin(s.source_db);
      REQUIRE_OK(reader.exec("BEGIN ISOLATION LEVEL REPEATABLE READ"));
      REQUIRE_OK(reader.exec("SET TRANSACTION SNAPSHOT '" + slot->snapshot_name + "'"));
      PgResult copied = reader.exec("SELECT tenant_id, id, note, row_version FROM orders " + s.in_set());
      REQUIRE_OK(reader.exec("COMMIT"));
      REQUIRE(copied.ok());
      CHECK(copied.rows() == 6);  // not the row written after the slot
      for (const auto& r : copied.data())
        REQUIRE_OK(
            s.target.exec_params("INSERT INTO orders VALUES ($1, $2, $3, $4)", {r[0], r[1], r[2], r[3]}));
    }
    repl->reset();  // the snapshot is no longer needed

    // Changes of every kind, in and out of the set.
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t0 + ", 50, repeat('big', 40000), 1), (" + o0 +
                             ", 50, 'o', 1)"));
    REQUIRE_OK(s.source.exec(
        "UPDATE orders SET row_version = row_version + 1 WHERE id = 50"));  // note: unchanged TOAST
    REQUIRE_OK(s.source.exec("UPDATE orders SET tenant_id = " + t1 +
                             ", id = 51, row_version = 3 WHERE tenant_id = " + t0 +
                             " AND id = 50"));  // key change in -> in, TOAST unchanged
    REQUIRE_OK(s.source.exec("UPDATE orders SET note = 'moved', row_version = 2 WHERE tenant_id = " + t0 +
                             " AND id = 1"));
    REQUIRE_OK(s.source.exec("UPDATE orders SET tenant_id = " + t2 +
                             ", row_version = 2 WHERE tenant_id = " + t0 + " AND id = 2"));
    REQUIRE_OK(s.source.exec("UPDATE orders SET tenant_id = " + o1 +
                             ", row_version = 2 WHERE tenant_id = " + t1 + " AND id = 1"));
    REQUIRE_OK(s.source.exec("UPDATE orders SET tenant_id = " + t2 +
                             ", row_version = 2 WHERE tenant_id = " + o0 + " AND id = 1"));
    REQUIRE_OK(s.source.exec("DELETE FROM orders WHERE id = 3"));
    REQUIRE_OK(
        s.source.exec("BEGIN; INSERT INTO orders SELECT " + t1 +
                      ", g, 'batch', 1 FROM generate_series(200, 260) g; "
                      "UPDATE orders SET row_version = 2 WHERE id = 210; DELETE FROM orders WHERE id = 220; "
                      "INSERT INTO orders VALUES (" +
                      o1 + ", 200, 'out', 1); COMMIT"));

    auto stream = std::make_unique<CatchUpStream>(s.options(slot->consistent_point));
    stream->start();
    s.catch_up(*stream);
    CHECK(stream->last_error().is_ok());
    s.check_target_matches();
    CHECK(s.target.value("SELECT count(*) FROM orders WHERE id = 100") == "1");  // streamed, not copied
    CHECK(s.target.value("SELECT md5(note) = md5(repeat('big', 40000)) FROM orders WHERE id = 51") == "t");
    CHECK(s.target.value("SELECT count(*) FROM orders " + s.in_set()) ==
          s.target.value("SELECT count(*) FROM orders"));
    const uint64_t applied_first = stream->applied_changes();
    CHECK(applied_first > 60);
    CHECK(stream->lag_seconds() == 0.0);
    stream->stop();
    const Lsn progress =
        lsn_of(s.target, "SELECT applied_lsn::text FROM shardwire.mover_progress WHERE migration_id = 1");
    CHECK(progress > slot->consistent_point);
    CHECK(progress <= stream->processed_lsn());

    // Stopped: writes go on; a new stream (same options) resumes where the target's progress is.
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t2 + ", 300, 'while stopped', 1), (" + o0 +
                             ", 300, 'x', 1)"));
    REQUIRE_OK(s.source.exec(
        "UPDATE orders SET note = 'again', row_version = row_version + 1 WHERE tenant_id = " + t1));
    REQUIRE_OK(s.source.exec("DELETE FROM orders WHERE tenant_id = " + t2 + " AND id = 1"));
    stream = std::make_unique<CatchUpStream>(s.options(slot->consistent_point));
    stream->start();
    s.catch_up(*stream);
    CHECK(stream->last_error().is_ok());
    s.check_target_matches();
    // Exactly this run's changes, none replayed from the first: 1 insert, 62 updates of tenant
    // t1's rows (2, 51 and the batch without 220), 1 delete.
    CHECK(stream->applied_changes() == 64);
    stream->stop();
  }

  TEST_CASE("upsert-if-newer keeps a newer target row; TRUNCATE removes only the moving buckets") {
    Shards s;
    const auto in = tenants(true, 1), out = tenants(false, 1);
    const std::string t0 = std::to_string(in[0]), o0 = std::to_string(out[0]);
    auto repl = ReplicationConnection::open(shared_cluster().conninfo(s.source_db));
    REQUIRE_RESULT(repl);
    auto slot = (*repl)->create_slot(s.slot, /*export_snapshot=*/false);
    REQUIRE_RESULT(slot);
    CHECK(slot->snapshot_name.empty());
    repl->reset();

    CatchUpStream stream(s.options(slot->consistent_point, 2));
    stream.start();
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t0 + ", 1, 'source', 1)"));
    s.catch_up(stream);
    CHECK(s.target.value("SELECT note || ':' || row_version FROM orders WHERE id = 1") == "source:1");

    REQUIRE_OK(s.target.exec("UPDATE orders SET note = 'target', row_version = 5 WHERE id = 1"));
    REQUIRE_OK(s.source.exec("UPDATE orders SET note = 'older', row_version = 3 WHERE id = 1"));
    s.catch_up(stream);
    CHECK(s.target.value("SELECT note || ':' || row_version FROM orders WHERE id = 1") == "target:5");
    REQUIRE_OK(s.source.exec("UPDATE orders SET note = 'newer', row_version = 7 WHERE id = 1"));
    s.catch_up(stream);
    CHECK(s.target.value("SELECT note || ':' || row_version FROM orders WHERE id = 1") == "newer:7");

    // A row the target owns (bucket not moving) survives a TRUNCATE on the source.
    REQUIRE_OK(s.target.exec("INSERT INTO orders VALUES (" + o0 + ", 9, 'target owns', 1)"));
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t0 + ", 2, 'a', 1), (" + o0 + ", 2, 'b', 1)"));
    REQUIRE_OK(s.source.exec("TRUNCATE orders"));
    s.catch_up(stream);
    CHECK(s.target.value("SELECT string_agg(tenant_id || '/' || id, ',') FROM orders") == o0 + "/9");
    CHECK(stream.last_error().is_ok());
    CHECK(stream.lag_bytes() < (1u << 20));
    stream.stop();
  }

  TEST_CASE("an apply error is reported without values, fails a waiter, and the stream recovers") {
    Shards s;
    REQUIRE_OK(s.target.exec("ALTER TABLE orders ALTER note TYPE integer USING NULL"));  // drifted schema
    const std::string t0 = std::to_string(tenants(true, 1)[0]);
    auto repl = ReplicationConnection::open(shared_cluster().conninfo(s.source_db));
    REQUIRE_RESULT(repl);
    auto slot = (*repl)->create_slot(s.slot, /*export_snapshot=*/false);
    REQUIRE_RESULT(slot);
    repl->reset();

    CatchUpStream stream(s.options(slot->consistent_point, 4));
    stream.start();
    REQUIRE_OK(s.source.exec("INSERT INTO orders VALUES (" + t0 + ", 1, 'secret-value', 1)"));
    const Lsn lsn = lsn_of(s.source, "SELECT pg_current_wal_insert_lsn()::text");
    CHECK_FALSE(stream.wait_until_processed(lsn, std::chrono::seconds(20)));
    const sw::Status error = stream.last_error();
    CHECK(error.sqlstate == "22P02");
    CHECK(error.message.find("secret-value") == std::string::npos);
    CHECK_MESSAGE(error.message.find("data exception") != std::string::npos, error.message);
    CHECK(stream.lag_seconds() > 0.0);

    // Fixed on the target: the retrying stream applies the transaction (a waiter that meets one
    // more failed attempt returns false; wait again).
    REQUIRE_OK(s.target.exec("ALTER TABLE orders ALTER note TYPE text"));
    bool done = false;
    for (int i = 0; i < 10 && !done; ++i) done = stream.wait_until_processed(lsn, std::chrono::seconds(10));
    REQUIRE(done);
    CHECK(stream.last_error().is_ok());
    CHECK(s.target.value("SELECT note FROM orders") == "secret-value");
    CHECK(stream.lag_seconds() == 0.0);
    stream.stop();
  }

  TEST_CASE("a transaction at or below the progress row is not applied again") {
    Shards s;
    const int64_t tenant = tenants(true, 1)[0];
    auto applier = ChangeApplier::open(shared_cluster().conninfo(s.target_db), 3, {kOrders}, moving());
    REQUIRE_RESULT(applier);
    CHECK((*applier)->applied_lsn() == 0);

    const pgo::Relation rel = orders_relation();
    pgo::RelationCache relations;  // the Relation arrives inside the transaction
    const std::vector<pgo::Message> txn{rel, pgo::Insert{std::nullopt,
                                                         1,
                                                         {text_value(std::to_string(tenant)), text_value("1"),
                                                          text_value("n"), text_value("1")}}};
    const Lsn end = 0x1000000;
    auto st = (*applier)->apply_transaction(txn, relations, end);
    REQUIRE_MESSAGE(st.is_ok(), st.message);
    CHECK((*applier)->applied_lsn() == end);
    CHECK((*applier)->applied_changes() == 1);
    CHECK(s.target.value("SELECT count(*) FROM orders") == "1");

    REQUIRE_OK(s.target.exec("DELETE FROM orders"));
    st = (*applier)->apply_transaction(txn, relations, end);  // a replay after a restart
    REQUIRE(st.is_ok());
    CHECK(s.target.value("SELECT count(*) FROM orders") == "0");
    applier->reset();

    auto reopened = ChangeApplier::open(shared_cluster().conninfo(s.target_db), 3, {kOrders}, moving());
    REQUIRE_RESULT(reopened);
    CHECK((*reopened)->applied_lsn() == end);
    auto read = read_applied_lsn((*reopened)->connection(), 3);
    REQUIRE(read.is_ok());
    CHECK(*read == end);
    auto other = read_applied_lsn((*reopened)->connection(), 4);
    REQUIRE(other.is_ok());
    CHECK(*other == 0);
  }

  TEST_CASE("staged source transactions commit as one target transaction through prepared statements") {
    Shards s;
    const auto in = tenants(true, 2), out = tenants(false, 1);
    auto applier = ChangeApplier::open(shared_cluster().conninfo(s.target_db), 6, {kOrders}, moving());
    REQUIRE_RESULT(applier);
    ChangeApplier& a = **applier;

    const pgo::Relation rel = orders_relation();
    const auto insert = [&](int64_t tenant, int id) {
      return pgo::Insert{std::nullopt,
                         1,
                         {text_value(std::to_string(tenant)), text_value(std::to_string(id)), text_value("n"),
                          text_value("1")}};
    };
    pgo::RelationCache relations;
    relations.put(rel);
    auto staged = a.stage_transaction({insert(in[0], 1), insert(out[0], 1)}, relations);
    REQUIRE_RESULT(staged);
    CHECK(*staged);
    staged = a.stage_transaction({insert(out[0], 2)}, relations);  // nothing of the moving buckets
    REQUIRE_RESULT(staged);
    CHECK_FALSE(*staged);
    CHECK(a.staged_statements() == 1);
    staged = a.stage_transaction({insert(in[1], 3), insert(in[0], 4)}, relations);
    REQUIRE_RESULT(staged);
    CHECK(*staged);
    CHECK(a.staged_statements() == 3);
    CHECK(s.target.value("SELECT count(*) FROM orders") == "0");  // nothing sent yet

    const Lsn end = 0x2000000;
    sw::Status st = a.commit_staged(end);
    REQUIRE_MESSAGE(st.is_ok(), st.message);
    CHECK(a.staged_statements() == 0);
    CHECK(a.applied_lsn() == end);
    CHECK(a.applied_changes() == 3);
    CHECK(s.target.value("SELECT string_agg(id::text, ',' ORDER BY id) FROM orders") == "1,3,4");
    // One target transaction: the rows and the progress row share their xmin.
    CHECK(s.target.value("SELECT count(DISTINCT xmin::text) FROM (SELECT xmin FROM orders UNION ALL "
                         "SELECT xmin FROM shardwire.mover_progress WHERE migration_id = 6) x") == "1");
    auto prepared = sw::catalog::query(a.connection(), "SELECT count(*) FROM pg_prepared_statements");
    REQUIRE_RESULT(prepared);
    CHECK(sw::catalog::text_value(prepared->get(), 0, 0) == "1");  // one text for the three inserts

    // A failing statement: rolled back, the staged statements dropped, nothing advances.
    REQUIRE_OK(s.target.exec("ALTER TABLE orders ALTER note TYPE integer USING NULL"));
    staged = a.stage_transaction({insert(in[0], 5)}, relations);
    REQUIRE_RESULT(staged);
    st = a.commit_staged(end + 0x100);
    CHECK_FALSE(st.is_ok());
    CHECK(a.staged_statements() == 0);
    CHECK(a.applied_lsn() == end);
    CHECK(s.target.value("SELECT count(*) FROM orders") == "3");
  }

  TEST_CASE(
      "apply lag: one sample per transaction with rows of the moving buckets, steady after mark_caught_up") {
    Shards s;
    const auto in = tenants(true, 2), out = tenants(false, 2);
    auto repl = ReplicationConnection::open(shared_cluster().conninfo(s.source_db));
    REQUIRE_RESULT(repl);
    auto slot = (*repl)->create_slot(s.slot, /*export_snapshot=*/false);
    REQUIRE_RESULT(slot);
    repl->reset();
    const auto insert = [&](int64_t tenant, int id) {
      return "INSERT INTO orders VALUES (" + std::to_string(tenant) + ", " + std::to_string(id) + ", 'n', 1)";
    };

    // The backlog: written before the stream starts, 3 transactions with moving rows and 2 without.
    for (int i = 0; i < 3; ++i) REQUIRE_OK(s.source.exec(insert(in[0], 10 + i)));
    for (int i = 0; i < 2; ++i) REQUIRE_OK(s.source.exec(insert(out[0], 10 + i)));
    CatchUpStream stream(s.options(slot->consistent_point, 7));
    stream.start();
    s.catch_up(stream);
    CHECK(stream.apply_lag(false).transactions == 3);
    CHECK(stream.apply_lag(true).transactions == 0);  // a wait that succeeds does not mark it

    stream.mark_caught_up();
    for (int i = 0; i < 4; ++i)  // moving rows, each transaction with a row of another bucket too
      REQUIRE_OK(
          s.source.exec("BEGIN; " + insert(in[1], 20 + i) + "; " + insert(out[1], 20 + i) + "; COMMIT"));
    for (int i = 0; i < 3; ++i) REQUIRE_OK(s.source.exec(insert(out[0], 20 + i)));
    s.catch_up(stream);
    stream.stop();
    CHECK(stream.last_error().is_ok());
    s.check_target_matches();
    const CatchUpStream::LagSummary all = stream.apply_lag(false), steady = stream.apply_lag(true),
                                    received = stream.receive_lag();
    CHECK(all.transactions == 7);
    CHECK(steady.transactions == 4);
    CHECK(received.transactions == 4);
    CHECK(steady.p50_ms > 0);
    // Each transaction arrived before the target transaction that applied it committed.
    CHECK(received.p50_ms <= steady.p50_ms);
    CHECK(received.max_ms <= steady.max_ms);
  }
}
