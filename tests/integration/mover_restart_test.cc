// The shards fail too: while buckets 0, 3 and 6 move from s0 to s1 under a write load, the
// source's or the target's PostgreSQL is restarted (`pg_ctl restart -m immediate`) during the
// copy, the catch-up and the cutover, and the catalog's during the cutover. Each migration ends by
// itself (done, or rolled back), no acknowledged write is lost or doubled, no replication slot or
// publication is left, no bucket stays MIGRATING.
//
// s0, s1 and the catalog each have a PostgreSQL of their own (synchronous_commit = on, so an
// acknowledged commit survives the crash); s2 lives on the shared cluster. Each fault proves it
// fired: the catalog showed the intended phase right before the restart, and the restarted server's
// pg_postmaster_start_time() changed.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "harness/acknowledged_inserts.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

bool moved(long long key) {
  uint32_t b = bucket_of_key(key);
  return b == 0 || b == 3 || b == 6;
}

enum class Victim { Source, Target, Catalog };
enum class Phase { Copy, CatchUp, Cutover };

const char* victim_name(Victim v) {
  return v == Victim::Source ? "source" : v == Victim::Target ? "target" : "catalog";
}

// A PostgreSQL that keeps what it acknowledged across an immediate restart.
struct DurableCluster {
  PgCluster cluster;
  DurableCluster() {
    PgConn c = cluster.admin();
    REQUIRE_OK(c.exec("ALTER SYSTEM SET synchronous_commit = on"));
    REQUIRE_OK(c.exec("SELECT pg_reload_conf()"));
  }
  std::string started_at() const { return cluster.admin().value("SELECT pg_postmaster_start_time()::text"); }
};

std::string migration_row(const ShardedFixture& f, const std::string& id) {
  ConnectResult c = connect(f.setup.catalog_cluster().admin_conninfo(f.setup.catalog_db()), 2s);
  if (!c.ok) return "? (catalog unreachable)";
  PgResult r = c.conn.exec(
      "SELECT state || ' ' || step || ' ' || coalesce(error, '') FROM shardwire.migrations WHERE id = " + id);
  return r.ok() && r.rows() == 1 ? r.value() : "?";
}

void restart_during(Victim victim, Phase phase) {
  DurableCluster source, target, catalog_pg;
  ShardedOptions options;
  options.shard_clusters = {&source.cluster, &target.cluster};
  options.catalog_cluster = &catalog_pg.cluster;
  options.proxy.users.push_back({"admin", "adminpw"});
  // The copy of 1 200 seed rows takes about 4 s. In the catch-up and cutover cases a transaction
  // held open on the source keeps the cutover in its drain: for 20 s (the restart comes then), or
  // for 1 s, after which the cutover is undone and the migration waits in catching_up.
  const std::string drain_timeout = phase == Phase::CatchUp ? "1s" : "20s";
  options.proxy.extra_yaml =
      "admin:\n  users: [admin]\nmover:\n  copy_rows_per_sec: " +
      std::string(phase == Phase::Copy ? "300" : "1000000") +
      "\n  rollback_window: 1s\ncutover:\n  queue_timeout: 3s\n  drain_timeout: " + drain_timeout + "\n";
  ShardedFixture f(options);
  DurableCluster& victim_pg = victim == Victim::Source   ? source
                              : victim == Victim::Target ? target
                                                         : catalog_pg;

  std::vector<long long> keys;  // three in the moving buckets, three elsewhere
  size_t in_count = 0;
  for (long long k = 1; keys.size() < 6; ++k) {
    if (moved(k) ? in_count == 3 : keys.size() - in_count == 3) continue;
    in_count += moved(k);
    keys.push_back(k);
  }
  {
    PgConn c = f.client();
    for (long long k : keys) {
      std::string values;
      for (int i = 0; i < 400; ++i) values += (i ? ", (" : "(") + std::to_string(k) + ", 'seed')";
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES " + values + " RETURNING id"));
    }
  }
  std::set<RowKey> acknowledged;
  std::mutex mutex;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    insert_until(f, keys, stop, acknowledged, mutex,
                 {"w", std::chrono::seconds(10), std::chrono::milliseconds(5)});
  });

  PgConn blocker;  // open before the move (no xid: the slot's creation does not wait for it)
  if (phase != Phase::Copy) {
    blocker = f.setup.shard(0);
    REQUIRE_OK(blocker.exec("BEGIN"));
    REQUIRE_OK(blocker.exec("SELECT 1"));
  }
  PgConn admin = connect_or_throw(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
  PgResult started = admin.exec("MOVE BUCKETS 0,3,6 TO s1");
  REQUIRE_MESSAGE(started.ok(), started.describe());
  const std::string id = started.value(0, 4);
  admin.reset();
  INFO("proxy log:\n" << f.proxy->log_tail(60));

  std::string seen;
  auto in_phase = [&] {
    seen = migration_row(f, id);
    switch (phase) {
      case Phase::Copy: return seen.rfind("copying", 0) == 0;
      case Phase::CatchUp: return seen.rfind("catching_up", 0) == 0 && contains(seen, "cutover aborted");
      case Phase::Cutover: return seen.rfind("cutting_over drain", 0) == 0;
    }
    return false;
  };
  REQUIRE_MESSAGE(wait_until(in_phase, 60s, 10ms),
                  "migration " << id << " never reached the phase: " << seen);
  if (phase == Phase::Copy) sleep_ms(1000);  // well inside the copy
  const std::string before = migration_row(f, id);
  const std::string started_at = victim_pg.started_at();
  MESSAGE("restarting the " << std::string(victim_name(victim)) << " in: " << before);
  victim_pg.cluster.restart_immediate();
  CHECK(victim_pg.started_at() != started_at);
  switch (phase) {
    case Phase::Copy: CHECK(before.rfind("copying", 0) == 0); break;
    case Phase::CatchUp: CHECK(before.rfind("catching_up", 0) == 0); break;
    case Phase::Cutover: CHECK(before.rfind("cutting_over drain", 0) == 0); break;
  }
  if (blocker) static_cast<void>(blocker.exec("COMMIT"));  // gone if the source restarted
  blocker.reset();

  std::string state;
  bool ended = wait_until(
      [&] {
        state = migration_row(f, id);
        return state.rfind("done", 0) == 0 || state.rfind("rolled_back", 0) == 0;
      },
      120s, 200ms);
  sleep_ms(300);
  stop = true;
  writer.join();
  INFO("migration " << id << ": " << state << "\nproxy log:\n" << f.proxy->log_tail(80));
  REQUIRE_MESSAGE(ended, "migration " << id << " did not end by itself: " << state);
  MESSAGE(std::string(victim_name(victim)) << " restarted: migration " << id << " ended " << state);

  PgConn catalog = f.setup.catalog();
  CHECK(catalog.value("SELECT count(*) FROM shardwire.buckets WHERE state <> 'ACTIVE'") == "0");
  const std::string owner = catalog.value(
      "SELECT string_agg(DISTINCT shard, ',') FROM shardwire.buckets WHERE bucket IN (0, 3, 6)");
  CHECK(owner == (state.rfind("done", 0) == 0 ? "s1" : "s0"));
  std::map<RowKey, std::vector<int>> where;
  for (int s = 0; s < f.setup.shards(); ++s) {
    PgConn c = f.setup.shard(s);
    PgResult r = c.exec("SELECT tenant_id, id FROM orders");
    for (int i = 0; i < r.rows(); ++i)
      where[{std::stoll(r.value(i, 0)), std::stoll(r.value(i, 1))}].push_back(s);
    INFO("shard s" << s);
    CHECK(c.value("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()") == "0");
    CHECK(c.value("SELECT count(*) FROM pg_publication") == "0");
  }
  size_t lost = 0, doubled = 0, misplaced = 0, moved_acks = 0;
  for (const RowKey& row : acknowledged) {
    moved_acks += moved(row.first);
    const auto& shards = where[row];
    if (shards.empty())
      ++lost;
    else if (shards.size() > 1)
      ++doubled;
    else if (shards[0] != (moved(row.first) ? owner.back() - '0' : shard_of_key(row.first)))
      ++misplaced;
  }
  MESSAGE(acknowledged.size() << " acknowledged inserts (" << moved_acks << " into the moving buckets): lost "
                              << lost << ", doubled " << doubled << ", misplaced " << misplaced);
  CHECK(moved_acks > 0);
  CHECK(lost == 0);
  CHECK(doubled == 0);
  CHECK(misplaced == 0);
}

}  // namespace

TEST_SUITE("mover_restart") {
  TEST_CASE("the source restarts during the copy") { restart_during(Victim::Source, Phase::Copy); }
  TEST_CASE("the target restarts during the copy") { restart_during(Victim::Target, Phase::Copy); }
  TEST_CASE("the source restarts during catch-up") { restart_during(Victim::Source, Phase::CatchUp); }
  TEST_CASE("the target restarts during catch-up") { restart_during(Victim::Target, Phase::CatchUp); }
  TEST_CASE("the source restarts during the cutover") { restart_during(Victim::Source, Phase::Cutover); }
  TEST_CASE("the target restarts during the cutover") { restart_during(Victim::Target, Phase::Cutover); }
  TEST_CASE("the catalog restarts during the cutover") { restart_during(Victim::Catalog, Phase::Cutover); }
}  // TEST_SUITE
