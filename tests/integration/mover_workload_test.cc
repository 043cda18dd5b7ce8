// The mover under workloads that are valid on PostgreSQL but were hard on the catch-up stream:
// updates that leave the version column alone, identity columns. Each case runs its own
// deployment (catalog, 3 shards, one proxy), moves buckets while the workload runs through
// shardwire, and checks the data on the shards directly.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

#if defined(SHARDWIRE_IT_SHARDING)

using namespace it;

namespace {

// Keys of s0 in `n` distinct buckets (initially bucket b is on shard b mod 3), and the buckets.
struct Moving {
  std::vector<int64_t> keys;
  std::vector<uint32_t> buckets;
  std::string key_list() const {
    std::string out;
    for (int64_t k : keys) out += (out.empty() ? "" : ",") + std::to_string(k);
    return out;
  }
};
Moving moving_on_s0(size_t n) {
  Moving m;
  m.keys = keys_in_distinct_buckets(n, [](uint32_t b) { return b % kShards == 0; });
  for (int64_t k : m.keys) m.buckets.push_back(bucket_of_key(k));
  return m;
}

std::string start_move(PgConn& admin, const std::vector<uint32_t>& buckets,
                       const std::string& target = "s1") {
  PgResult r = admin.exec("MOVE BUCKETS " + bucket_list(buckets) + " TO " + target);
  REQUIRE_MESSAGE(r.ok(), "MOVE BUCKETS -> " << r.describe());
  REQUIRE(r.rows() == 1);
  return r.value(0, 4);
}

// Runs `statement(i)` through shardwire until stopped; counts the acknowledged ones.
class Writer {
 public:
  Writer(const ShardedFixture& f, std::function<std::string(long)> statement)
      : thread_([this, &f, statement = std::move(statement)] {
          PgConn c = f.client();
          for (long i = 0; !stop_; ++i) {
            PgResult r = c.exec(statement(i), 10s);
            if (r.ok())
              ++acknowledged_;
            else
              ++failed_;
            sleep_ms(2);
          }
        }) {}
  ~Writer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long acknowledged() const { return acknowledged_; }
  long failed() const { return failed_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<long> acknowledged_{0}, failed_{0};
  std::thread thread_;
};

}  // namespace

TEST_SUITE("mover_workload") {
  // An application whose UPDATE leaves version_column alone (balance = balance - 1): every such
  // change reaches the target, verification agrees, the move completes with equal data. (An
  // upsert-if-newer that needs the version to rise dropped them all and aborted every cutover.)
  TEST_CASE("updates that leave version_column alone are applied; the move completes with equal data") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    knobs.drain_timeout = "1s";
    knobs.copy_rows_per_sec = 2000;  // 1 000 rows: a copy of ~0.5 s, under the workload
    ShardedOptions options = mover_options(knobs);
    options.tables_yaml +=
        "    - name: accounts\n      key: tenant_id\n      type: bigint\n      version_column: row_version\n";
    ShardedFixture f(std::move(options));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn app = f.client();
    REQUIRE_OK(
        app.exec("CREATE TABLE accounts (tenant_id bigint NOT NULL, id integer NOT NULL, balance bigint NOT "
                 "NULL, note text, row_version bigint NOT NULL DEFAULT 1, PRIMARY KEY (tenant_id, id))"));
    Moving m = moving_on_s0(4);
    PgConn s0 = f.setup.shard(0);
    REQUIRE_OK(
        s0.exec("INSERT INTO accounts (tenant_id, id, balance, note) SELECT k, g, 1000, 'seed' FROM "
                "unnest(ARRAY[" +
                m.key_list() + "]::bigint[]) k, generate_series(1, 250) g"));
    const long long initial = std::stoll(s0.value("SELECT sum(balance) FROM accounts"));

    // The workload: single-row decrements that never touch row_version, spread over the keys.
    Writer writer(f, [&](long i) {
      return "UPDATE accounts SET balance = balance - 1, note = 'w" + std::to_string(i) +
             "' WHERE tenant_id = " + std::to_string(m.keys[static_cast<size_t>(i) % m.keys.size()]) +
             " AND id = " + std::to_string(1 + (i * 7) % 250);
    });
    sleep_ms(300);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    bool flipped = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
          return row["state"] == "rollback_window" || row["state"] == "cleaning" || row["state"] == "done";
        },
        60s, 100ms);
    sleep_ms(300);  // some writes on the new owner too
    writer.stop();
    REQUIRE_MESSAGE(flipped, "migration " << id << " never cut over: " << last);
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
    MESSAGE(writer.acknowledged() << " updates acknowledged, " << writer.failed() << " refused");
    CHECK(writer.acknowledged() > 100);

    // Every acknowledged decrement is on the new owner, once; nothing of the buckets stays on s0.
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT count(*) FROM accounts WHERE tenant_id IN (" + m.key_list() + ")") == "1000");
    CHECK(std::stoll(s1.value("SELECT sum(balance) FROM accounts WHERE tenant_id IN (" + m.key_list() +
                              ")")) == initial - writer.acknowledged());
    CHECK(s0.value("SELECT count(*) FROM accounts") == "0");
    CHECK(s1.value("SELECT count(*) FROM accounts WHERE row_version <> 1") == "0");
    CHECK(migration(admin, id)["error"] == "");
  }
}

#endif
