// The mover killed (as by SIGKILL) at each step of a migration while writers run, then started
// again: the migration completes, no acknowledged write is lost or doubled, no slot or
// publication leaks, no bucket stays MIGRATING. The kill is the failpoint `mover.<step>`
// (SHARDWIRE_FAILPOINT: the process SIGKILLs itself right after recording the step).
#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "harness/acknowledged_inserts.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

// Buckets 0, 3 and 6 (on s0) move to s1.
bool moved(long long key) {
  uint32_t b = bucket_of_key(key);
  return b == 0 || b == 3 || b == 6;
}

ShardedOptions crash_options(const std::string& point) {
  ShardedOptions options;
  options.proxy.users.push_back({"admin", "adminpw"});
  options.proxy.extra_yaml =
      "admin:\n  users: [admin]\nmover:\n  copy_rows_per_sec: 1000000\n  rollback_window: 1s\n"
      "cutover:\n  queue_timeout: 3s\n  drain_timeout: 2s\n";
  options.proxy.env["SHARDWIRE_FAILPOINT"] = "mover." + point;
  return options;
}

std::string migration_state(const ShardedFixture& f, const std::string& id) {
  PgConn catalog = f.setup.catalog();
  PgResult r = catalog.exec(
      "SELECT state || ' ' || step || ' ' || coalesce(error, '') FROM shardwire.migrations WHERE id = " + id);
  return r.rows() == 1 ? r.value() : "?";
}

void crash_and_recover(const std::string& point) {
  ShardedFixture f(crash_options(point));
  std::vector<long long> keys;  // four in the moving buckets, four elsewhere
  size_t in_count = 0;
  for (long long k = 1; keys.size() < 8; ++k) {
    if (moved(k) ? in_count == 4 : keys.size() - in_count == 4) continue;
    in_count += moved(k);
    keys.push_back(k);
  }
  {
    PgConn c = f.client();
    for (long long k : keys) {
      std::string values;
      for (int i = 0; i < 200; ++i) values += (i ? ", (" : "(") + std::to_string(k) + ", 'seed')";
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES " + values));
    }
  }
  std::set<RowKey> acknowledged;
  std::mutex mutex;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    insert_until(f, keys, stop, acknowledged, mutex, {"crash", std::chrono::seconds(5)});
  });

  std::string id;
  {
    ConnectResult admin = connect(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    REQUIRE_MESSAGE(admin.ok, admin.error);
    PgResult moved = admin.conn.exec("MOVE BUCKETS 0,3,6 TO s1");
    REQUIRE_MESSAGE(moved.ok(), moved.describe());
    id = moved.value(0, 4);
  }
  auto exited = f.proxy->wait_exit(60s);
  // Acknowledged inserts into the moving buckets before the crash (what a lost write would be).
  auto moved_acknowledged = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    return std::count_if(acknowledged.begin(), acknowledged.end(),
                         [](const RowKey& r) { return moved(r.first); });
  };
  const auto before_crash = moved_acknowledged();
  INFO("migration " << id << " before the restart: " << migration_state(f, id) << "\nlog:\n"
                    << f.proxy->log_tail(40));
  REQUIRE_MESSAGE(exited.has_value(), "the mover never reached step " << point);
  CHECK(contains(f.proxy->log(), "failpoint mover." + point + " fired"));
  f.proxy->restart();
  std::string state;
  bool done = wait_until(
      [&] {
        state = migration_state(f, id);
        return state.rfind("done", 0) == 0;
      },
      90s, 200ms);
  // Writes go on after the restart too, on the moving buckets' new owner.
  const bool wrote_after = wait_until([&] { return moved_acknowledged() > before_crash; }, 20s, 50ms);
  sleep_ms(200);
  stop = true;
  writer.join();
  MESSAGE("crash at " << point << ": " << before_crash
                      << " inserts into the moving buckets acknowledged before it, "
                      << moved_acknowledged() - before_crash << " after the restart");
  CHECK_MESSAGE(before_crash > 0, "no insert into the moving buckets was acknowledged before the crash");
  CHECK_MESSAGE(wrote_after, "no insert into the moving buckets was acknowledged after the restart");
  INFO("after the restart: " << state << "\nlog:\n" << f.proxy->log_tail(60));
  REQUIRE_MESSAGE(done, "migration " << id << " did not finish: " << state);

  // Every acknowledged row exactly once, on the owner of its bucket.
  PgConn catalog = f.setup.catalog();
  CHECK(catalog.value("SELECT count(*) FROM shardwire.buckets WHERE state <> 'ACTIVE'") == "0");
  CHECK(catalog.value(
            "SELECT string_agg(DISTINCT shard, ',') FROM shardwire.buckets WHERE bucket IN (0, 3, 6)") ==
        "s1");
  std::map<RowKey, std::vector<int>> where;
  for (int s = 0; s < f.setup.shards(); ++s) {
    PgConn c = f.setup.shard(s);
    PgResult r = c.exec("SELECT tenant_id, id FROM orders");
    for (int i = 0; i < r.rows(); ++i)
      where[{std::stoll(r.value(i, 0)), std::stoll(r.value(i, 1))}].push_back(s);
    CHECK(c.value("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()") == "0");
    CHECK(c.value("SELECT count(*) FROM pg_publication") == "0");
  }
  size_t lost = 0, doubled = 0, misplaced = 0;
  for (const RowKey& row : acknowledged) {
    const auto& shards = where[row];
    if (shards.empty())
      ++lost;
    else if (shards.size() > 1)
      ++doubled;
    else if (shards[0] != (moved(row.first) ? 1 : shard_of_key(row.first)))
      ++misplaced;
  }
  MESSAGE("crash at " << point << ": " << acknowledged.size() << " acknowledged inserts, lost " << lost
                      << ", doubled " << doubled << ", misplaced " << misplaced);
  CHECK(lost == 0);
  CHECK(doubled == 0);
  CHECK(misplaced == 0);
}

}  // namespace

TEST_SUITE("mover_faults") {
  TEST_CASE("killed during the copy") { crash_and_recover("copy"); }
  TEST_CASE("killed during catch-up") { crash_and_recover("catching_up"); }
  TEST_CASE("killed after publishing MIGRATING") { crash_and_recover("publish_migrating"); }
  TEST_CASE("killed after fencing the source") { crash_and_recover("fence_source"); }
  TEST_CASE("killed during the drain") { crash_and_recover("drain"); }
  TEST_CASE("killed during the final catch-up") { crash_and_recover("catch_up"); }
  TEST_CASE("killed during the final verification") { crash_and_recover("verify"); }
  TEST_CASE("killed before unfencing the target") { crash_and_recover("unfence_target"); }
  TEST_CASE("killed right after the flip") { crash_and_recover("flipped"); }

}  // TEST_SUITE
