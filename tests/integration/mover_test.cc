// The bucket mover end to end: MOVE BUCKETS through the console while writers run through
// shardwire, then a history check — every acknowledged write is on its bucket's owner exactly
// once, the source keeps nothing writable of the moved buckets, checksums match.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

// Writers through shardwire: inserts (and increments of their own rows) on a key list, each
// recording what was acknowledged.
// Rows are identified by (tenant_id, id): each shard has its own id sequence.
using RowKey = std::pair<long long, long long>;

struct History {
  std::mutex mutex;
  std::set<RowKey> inserted;          // acknowledged
  std::map<RowKey, int> increments;   // acknowledged qty increments
  std::map<RowKey, int> unknown;      // increments whose outcome is unknown (errors)
  std::map<std::string, int> errors;  // SQLSTATE -> count
};

void write_until(const ShardedFixture& f, const std::vector<long long>& keys, int thread,
                 std::atomic<bool>& stop, History& history) {
  PgConn c = f.client();
  std::vector<RowKey> mine;
  for (int seq = 0; !stop; ++seq) {
    long long key = keys[static_cast<size_t>(seq * 7 + thread) % keys.size()];
    if (seq % 3 == 2 && !mine.empty()) {
      RowKey row = mine[static_cast<size_t>(seq) % mine.size()];
      PgResult r = c.exec("UPDATE orders SET qty = qty + 1 WHERE tenant_id = " + std::to_string(row.first) +
                          " AND id = " + std::to_string(row.second));
      std::lock_guard<std::mutex> lock(history.mutex);
      if (r.ok() && r.command_tag() == "UPDATE 1")
        ++history.increments[row];
      else {
        ++history.unknown[row];
        ++history.errors[r.sqlstate().empty() ? r.command_tag() : r.sqlstate()];
      }
      continue;
    }
    PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'w" +
                        std::to_string(thread) + "-" + std::to_string(seq) + "') RETURNING id");
    std::lock_guard<std::mutex> lock(history.mutex);
    if (r.ok() && r.rows() == 1) {
      RowKey row{key, std::stoll(r.value())};
      history.inserted.insert(row);
      mine.push_back(row);
    } else {
      ++history.errors[r.sqlstate()];
    }
  }
}

// Every row of orders on every shard: (tenant, id) -> (shard, qty).
struct Row {
  int shard;
  int qty;
};
std::multimap<RowKey, Row> all_rows(const ShardedFixture& f) {
  std::multimap<RowKey, Row> rows;
  for (int s = 0; s < f.setup.shards(); ++s) {
    PgConn c = f.setup.shard(s);
    PgResult r = c.exec("SELECT tenant_id, id, qty FROM orders");
    for (int i = 0; i < r.rows(); ++i)
      rows.insert({{std::stoll(r.value(i, 0)), std::stoll(r.value(i, 1))}, Row{s, std::stoi(r.value(i, 2))}});
  }
  return rows;
}

std::map<int, std::string> owners(const ShardedFixture& f) {
  PgConn c = f.setup.catalog();
  PgResult r = c.exec("SELECT bucket, shard FROM shardwire.buckets");
  std::map<int, std::string> out;
  for (int i = 0; i < r.rows(); ++i) out[std::stoi(r.value(i, 0))] = r.value(i, 1);
  return out;
}

}  // namespace

TEST_SUITE("mover") {
  TEST_CASE("MOVE BUCKETS under a write load: nothing lost, nothing doubled, the source fenced") {
    PROXY_ONLY();
    ShardedFixture f(mover_options());
    INFO("proxy log:\n" << f.log_tail(80));
    // Three buckets of s0 move to s1; keys in them and elsewhere.
    const std::vector<uint32_t> moving = {0, 3, 6};  // on s0 (bucket i on shard i mod 3)
    std::set<uint32_t> moving_set(moving.begin(), moving.end());
    std::vector<long long> keys;
    for (long long k = 1; keys.size() < 24; ++k) {
      bool in = moving_set.count(bucket_of_key(k)) != 0;
      size_t in_count = 0;
      for (long long x : keys) in_count += moving_set.count(bucket_of_key(x));
      if (in ? in_count < 12 : keys.size() - in_count < 12) keys.push_back(k);
    }
    PgConn app = f.client();
    for (long long k : keys)
      for (int i = 0; i < 50; ++i)
        REQUIRE_OK(
            app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(k) + ", 'seed')"));

    History history;
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) writers.emplace_back([&, t] { write_until(f, keys, t, stop, history); });
    sleep_ms(300);

    PgConn admin = admin_console(f);
    std::string list =
        std::to_string(moving[0]) + "," + std::to_string(moving[1]) + "," + std::to_string(moving[2]);
    PgResult moved = admin.exec("MOVE BUCKETS " + list + " TO s1");
    REQUIRE_MESSAGE(moved.ok(), moved.describe());
    REQUIRE(moved.rows() == 1);
    std::string id = moved.value(0, 4);
    std::string last;
    bool cut = wait_for_state(admin, id, "rollback_window", 60s, &last);
    CHECK_MESSAGE(cut, "migration " << id << " is " << last << "\n" << f.log_tail(60));
    sleep_ms(300);  // writes keep landing on the new owner
    stop = true;
    for (auto& w : writers) w.join();
    bool done = wait_for_state(admin, id, "done", 60s, &last);
    CHECK_MESSAGE(done, "migration " << id << " is " << last);

    auto row = migration(admin, id);
    INFO("SHOW MIGRATIONS: last_pause_ms=" << row["last_pause_ms"] << " rows_copied=" << row["rows_copied"]);
    CHECK(std::stoll(row["rows_copied"]) >= 3 * 4 * 50 / 2);
    std::string errors;
    for (const auto& [state, n] : history.errors) errors += state + ":" + std::to_string(n) + " ";
    MESSAGE("acknowledged inserts: " << history.inserted.size()
                                     << ", client errors: " << (errors.empty() ? "none" : errors)
                                     << ", cutover pause ms: " << row["last_pause_ms"]);
    CHECK_MESSAGE(history.errors.empty(), "client-visible errors: " << errors);

    // The history check.
    auto rows = all_rows(f);
    auto owner = owners(f);
    for (uint32_t b : moving) CHECK(owner[static_cast<int>(b)] == "s1");
    for (const RowKey& key : history.inserted) {
      auto range = rows.equal_range(key);  // not a structured binding: doctest's macros capture it
      auto first = range.first, end = range.second;
      int copies = static_cast<int>(std::distance(first, end));
      REQUIRE_MESSAGE(copies == 1,
                      "key (" << key.first << ", " << key.second << ") is present " << copies << " times");
      std::string expected = owner[static_cast<int>(bucket_of_key(key.first))];
      CHECK_MESSAGE(ShardedSetup::shard_name(first->second.shard) == expected,
                    "key (" << key.first << ", " << key.second << ") is on "
                            << ShardedSetup::shard_name(first->second.shard) << ", owner " << expected);
      int acked = history.increments[key];
      int unsure = history.unknown[key];
      CHECK_MESSAGE((first->second.qty >= acked && first->second.qty <= acked + unsure),
                    "key (" << key.first << ", " << key.second << ") qty " << first->second.qty
                            << ", acknowledged increments " << acked);
    }
    // Nothing of the moved buckets stays on s0, and s0 refuses writes to them.
    PgConn s0 = f.setup.shard(0);
    for (uint32_t b : moving) {
      PgResult left = s0.exec("SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, 4096) = " +
                              std::to_string(b));
      CHECK(left.value() == "0");
    }
    long long key_in_moved = keys.front();
    for (long long k : keys)
      if (moving_set.count(bucket_of_key(k))) key_in_moved = k;
    PgResult refused =
        s0.exec("INSERT INTO orders (tenant_id) VALUES (" + std::to_string(key_in_moved) + ")");
    CHECK(refused.sqlstate() == "SW001");
    // No slot, publication or stream position left behind.
    for (int s = 0; s < f.setup.shards(); ++s) {
      PgConn c = f.setup.shard(s);
      CHECK(c.value("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()") == "0");
      CHECK(c.value("SELECT count(*) FROM pg_publication") == "0");
      if (c.value("SELECT to_regclass('shardwire.mover_progress') IS NOT NULL") == "t")
        CHECK(c.value("SELECT count(*) FROM shardwire.mover_progress") == "0");
    }
  }

  TEST_CASE(
      "REBALANCE drains a shard: DRY RUN prints the plan, the run moves it with two migrations at once") {
    PROXY_ONLY();
    ShardedFixture f(mover_options("1s"));
    INFO("proxy log:\n" << mover_log(f));
    PgConn app = f.client();
    for (long long k = 1; k <= 300; ++k)
      REQUIRE_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(k) + ", 'r')"));
    PgConn admin = admin_console(f);

    PgResult plan = admin.exec("REBALANCE TO s0, s1 BY BUCKETS DRY RUN");
    REQUIRE_MESSAGE(plan.ok(), plan.describe());
    REQUIRE(plan.rows() == 2);  // s2's 1365 buckets split between s0 and s1
    int planned = 0;
    for (int i = 0; i < plan.rows(); ++i) {
      CHECK(plan.value(i, 0) == "s2");
      CHECK(plan.is_null(i, 4));  // a dry run starts nothing
      planned += std::stoi(plan.value(i, 2));
    }
    CHECK(planned == 1365);
    CHECK(admin.exec("SHOW MIGRATIONS").rows() == 0);

    PgResult started = admin.exec("REBALANCE TO s0, s1 BY BUCKETS");
    REQUIRE_MESSAGE(started.ok(), started.describe());
    REQUIRE(started.rows() == 2);
    std::string last;
    for (int i = 0; i < started.rows(); ++i) {
      std::string id = started.value(i, 4);
      CHECK_MESSAGE(wait_for_state(admin, id, "done", 120s, &last), "migration " << id << ": " << last);
    }
    PgConn catalog = f.setup.catalog();
    CHECK(catalog.value("SELECT count(*) FROM shardwire.buckets WHERE shard = 's2'") == "0");
    CHECK(catalog.value(
              "SELECT max(n) - min(n) FROM (SELECT count(*) n FROM shardwire.buckets GROUP BY shard) c") ==
          "0");
    long long total = 0;
    for (int s = 0; s < 3; ++s) total += std::stoll(f.setup.shard(s).value("SELECT count(*) FROM orders"));
    CHECK(total == 300);
    CHECK(f.setup.shard(2).value("SELECT count(*) FROM orders") == "0");
    CHECK(app.value("SELECT count(*) FROM orders WHERE tenant_id = 7") == "1");
  }

}  // TEST_SUITE
