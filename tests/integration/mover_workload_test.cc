// The mover under workloads that are valid on PostgreSQL but were hard on the catch-up stream:
// updates that leave the version column alone, identity columns. Each case runs its own
// deployment (catalog, 3 shards, one proxy), moves buckets while the workload runs through
// shardwire, and checks the data on the shards directly.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

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

// A Writer's statement: the i-th inserts a row noted 'w<i>' into `table` for each of `keys` in turn.
std::function<std::string(long)> inserts_in_turn(const std::string& table, const std::vector<int64_t>& keys) {
  return [table, keys](long i) {
    return "INSERT INTO " + table + " (tenant_id, note) VALUES (" +
           std::to_string(keys[static_cast<size_t>(i) % keys.size()]) + ", 'w" + std::to_string(i) + "')";
  };
}

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
  // GENERATED ALWAYS AS IDENTITY: the stream inserts the source's id (OVERRIDING SYSTEM VALUE);
  // plain INSERT ... VALUES was refused ("cannot insert a non-DEFAULT value into column") and the
  // migration stayed catching_up forever.
  TEST_CASE("a table with an identity column moves under inserts; every acknowledged row arrives") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    knobs.copy_rows_per_sec = 2000;
    ShardedOptions options = mover_options(knobs);
    options.tables_yaml += "    - name: items\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(std::move(options));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn app = f.client();
    REQUIRE_OK(app.exec(
        "CREATE TABLE items (tenant_id bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY, note text, "
        "PRIMARY KEY (tenant_id, id))"));
    Moving m = moving_on_s0(3);
    PgConn seed = f.setup.shard(0);
    for (int64_t k : m.keys)
      REQUIRE_OK(seed.exec("INSERT INTO items (tenant_id, note) SELECT " + std::to_string(k) +
                           ", 'seed' FROM generate_series(1, 300)"));
    Writer writer(f, inserts_in_turn("items", m.keys));
    sleep_ms(200);
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
    sleep_ms(300);
    writer.stop();
    REQUIRE_MESSAGE(flipped, "migration " << id << " never cut over: " << last);
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
    MESSAGE(writer.acknowledged() << " inserts acknowledged, " << writer.failed() << " refused");
    CHECK(writer.acknowledged() > 50);
    PgConn s0 = f.setup.shard(0), s1 = f.setup.shard(1);
    CHECK(std::stoll(s1.value("SELECT count(*) FROM items WHERE tenant_id IN (" + m.key_list() + ")")) ==
          900 + writer.acknowledged());
    CHECK(s1.value("SELECT count(*) - count(DISTINCT (tenant_id, id)) FROM items") == "0");
    CHECK(s0.value("SELECT count(*) FROM items") == "0");
    // The new owner's identity sequence is past every moved id: its own inserts do not collide.
    REQUIRE_OK(
        app.exec("INSERT INTO items (tenant_id, note) VALUES (" + std::to_string(m.keys[0]) + ", 'after')"));
  }

  // docs/architecture.md §8.5: live verification while writes go on. The source's and the target's
  // scans (run at once) may see different moments, so the buckets being written can differ between
  // them; the stream changed exactly those while the scans ran, so the difference is explained and
  // they are left to the cutover's verification (exact, and over those buckets only), instead of
  // rounds of full scans that compete with the catch-up for the shards' CPU. Either a round saw such
  // a difference, or the buckets written until the pause were left to the cutover (`verified k/2`,
  // k >= 1, in the flip's line). (Before, every such round counted as a mismatch.)
  TEST_CASE("live verification: buckets the stream changed while the scans ran do not hold the cutover") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    Moving m = moving_on_s0(2);
    PgConn s0 = f.setup.shard(0);
    // Scans of some milliseconds each, so that inserts land between the two snapshots.
    for (int64_t k : m.keys) seed_orders(s0, k, 20000);
    Writer writer(f, inserts_in_turn("orders", m.keys));
    sleep_ms(200);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    const bool done = wait_for_state(admin, id, "done", 60s, &last);
    writer.stop();
    REQUIRE_MESSAGE(done, "migration " << id << ": " << last);
    CHECK(writer.acknowledged() > 50);
    const std::string log = f.proxy->log();
    const bool explained =
        contains(log, "live verification: 1 bucket(s) differ, each changed by the stream") ||
        contains(log, "live verification: 2 bucket(s) differ, each changed by the stream") ||
        contains(log, "verified 1/2 ") || contains(log, "verified 2/2 ");
    CHECK_MESSAGE(explained, "no live verification saw the writes in flight");
    CHECK_FALSE(contains(log, "although the stream did not change it"));
    CHECK_FALSE(contains(log, "cutover aborted"));
    PgConn s1 = f.setup.shard(1);
    CHECK(std::stoll(s1.value("SELECT count(*) FROM orders WHERE tenant_id IN (" + m.key_list() + ")")) ==
          40000 + writer.acknowledged());
  }

  // A change the target refuses (here a CHECK constraint only the target has): the stream backs
  // off and retries, SHOW MIGRATIONS shows the error, the metric counts it, and CANCEL MIGRATION
  // ends the migration without leaving anything behind.
  TEST_CASE("a catch-up stream that cannot apply a change backs off, shows its error and can be cancelled") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.drain_timeout = "1s";
    int metrics_port = 0;
    ShardedFixture f(with_metrics(mover_options(knobs), &metrics_port));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    Moving m = moving_on_s0(2);
    PgConn s0 = f.setup.shard(0), s1 = f.setup.shard(1);
    REQUIRE_OK(s1.exec("ALTER TABLE orders ADD CONSTRAINT small_qty CHECK (qty < 1000) NOT VALID"));
    for (int64_t k : m.keys)
      REQUIRE_OK(s0.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + std::to_string(k) +
                         ", 'seed', g FROM generate_series(1, 100) g"));
    // An open transaction on s0 keeps every cutover from draining: the migration stays before its
    // flip while the refused change is written.
    PgConn holder = f.setup.shard(0);
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE_OK(holder.exec("SELECT count(*) FROM orders"));
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "catching_up", 30s, &last), "migration " << id << ": " << last);
    PgConn app = f.client();
    PgResult big = app.exec(
        "INSERT INTO orders (tenant_id, note, qty) VALUES (" + std::to_string(m.keys[0]) + ", 'big', 5000)",
        15s);
    REQUIRE_MESSAGE(big.ok(), big.describe());

    bool shown = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
          return contains(row["error"], "small_qty");
        },
        20s, 100ms);
    REQUIRE_MESSAGE(shown, "SHOW MIGRATIONS never showed the stream's error: " << last);
    CHECK(contains(last, "catch-up stream"));
    const double first = metric_value(metrics_port, "shardwire_mover_stream_errors_total");
    CHECK(first >= 1);
    // Backoff (100 ms doubling to 5 s): a few retries in 5 s, not one per connect.
    sleep_ms(5000);
    const double later = metric_value(metrics_port, "shardwire_mover_stream_errors_total");
    MESSAGE("stream errors: " << first << " then " << later << " 5 s later");
    CHECK(later >= first);
    CHECK(later - first <= 10);
    auto row = migration(admin, id);
    CHECK(row["state"] != "rollback_window");
    CHECK(contains(row["error"], "small_qty"));

    REQUIRE_OK(admin.exec("CANCEL MIGRATION " + id));
    REQUIRE_MESSAGE(wait_for_state(admin, id, "cancelled", 30s, &last), "migration " << id << ": " << last);
    REQUIRE_OK(holder.exec("COMMIT"));
    CHECK(slots_on(f, 0) == "");
    CHECK(slots_on(f, 1) == "");
    CHECK(bucket_rows(f, 1, m.buckets).empty());
    CHECK(directory_of(f, m.buckets) == std::vector<std::string>(m.buckets.size(), "s0/ACTIVE"));
  }

  // The same in the rollback window: the reverse stream cannot apply a change on the old owner.
  // Its error shows; ROLLBACK MIGRATION is accepted but no cutover back is tried while the stream
  // fails (each would stall the buckets' writes); EXPIRE ROLLBACK withdraws it and the migration
  // completes.
  TEST_CASE("a failing reverse stream shows its error; EXPIRE ROLLBACK ends the window even after ROLLBACK") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "120s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    Moving m = moving_on_s0(2);
    PgConn s0 = f.setup.shard(0), s1 = f.setup.shard(1);
    for (int64_t k : m.keys)
      REQUIRE_OK(s0.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + std::to_string(k) +
                         ", 'seed', g FROM generate_series(1, 100) g"));
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "rollback_window", 60s, &last),
                    "migration " << id << ": " << last);
    REQUIRE_OK(s0.exec("ALTER TABLE orders ADD CONSTRAINT small_qty CHECK (qty < 1000) NOT VALID"));
    PgConn app = f.client();
    REQUIRE_OK(app.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + std::to_string(m.keys[0]) +
                        ", 'big', 5000)"));
    bool shown = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
          return contains(row["error"], "small_qty");
        },
        20s, 100ms);
    REQUIRE_MESSAGE(shown, "SHOW MIGRATIONS never showed the reverse stream's error: " << last);
    CHECK(contains(last, "reverse stream"));

    REQUIRE_OK(admin.exec("ROLLBACK MIGRATION " + id));
    // For 3 s and at least 12 writes (a loaded machine runs fewer in 3 s): writes to the buckets
    // go through, no cutover back starts.
    int writes = 0;
    int tries = 0;
    bool cut_over = false;
    auto until = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < until || tries < 12) {
      ++tries;
      PgResult w =
          app.exec("UPDATE orders SET note = 'during' WHERE tenant_id = " + std::to_string(m.keys[1]), 10s);
      CHECK_MESSAGE(w.ok(), w.describe());
      writes += w.ok();
      cut_over = cut_over || migration(admin, id)["state"] != "rollback_window";
      sleep_ms(50);
    }
    CHECK_FALSE(cut_over);
    CHECK(writes == tries);
    CHECK(directory_of(f, m.buckets) == std::vector<std::string>(m.buckets.size(), "s1/ACTIVE"));

    PgResult expired = admin.exec("EXPIRE ROLLBACK " + id);
    REQUIRE_MESSAGE(expired.ok(), "EXPIRE ROLLBACK while the rollback cannot run: " << expired.describe());
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note = 'big'") == "1");
    CHECK(bucket_rows(f, 0, m.buckets).empty());
    CHECK(directory_of(f, m.buckets) == std::vector<std::string>(m.buckets.size(), "s1/ACTIVE"));
    CHECK(slots_on(f, 0) == "");
    CHECK(slots_on(f, 1) == "");
  }
  // Schema drift (a column on the target only, an index on the source only) is found before the
  // move starts: the migration stays planned with a per-table diff as its error and no slot, and
  // starts by itself once the schemas agree.
  TEST_CASE("schema drift between source and target holds the move before it starts, with a per-table diff") {
    PROXY_ONLY();
    ShardedFixture f(mover_options("1s"));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    Moving m = moving_on_s0(2);
    PgConn s0 = f.setup.shard(0), s1 = f.setup.shard(1);
    for (int64_t k : m.keys)
      REQUIRE_OK(s0.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + std::to_string(k) +
                         ", 'seed', g FROM generate_series(1, 100) g"));
    REQUIRE_OK(s1.exec("ALTER TABLE orders ADD COLUMN extra integer"));
    REQUIRE_OK(s0.exec("CREATE INDEX orders_note_idx ON orders (note)"));
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::map<std::string, std::string> row;
    bool reported = wait_until(
        [&] {
          row = migration(admin, id);
          return contains(row["error"], "schema drift");
        },
        15s, 100ms);
    REQUIRE_MESSAGE(reported, "no drift reported: " << row["state"] << " error=" << row["error"]);
    MESSAGE("SHOW MIGRATIONS error: " << row["error"]);
    CHECK(row["state"] == "planned");
    CHECK(contains(row["error"], "schema drift between s0 and s1: orders: "));
    CHECK(contains(row["error"], "column \"extra\" only on s1"));
    CHECK(contains(row["error"], "index (CREATE INDEX ON public.orders USING btree (note)) only on s0"));
    CHECK(slots_on(f, 0) == "");
    CHECK(bucket_rows(f, 1, m.buckets).empty());

    REQUIRE_OK(s0.exec("ALTER TABLE orders ADD COLUMN extra integer"));
    const auto expected = bucket_rows(f, 0, m.buckets);  // the index below is the last difference
    REQUIRE_OK(s1.exec("CREATE INDEX orders_note_idx ON orders (note)"));
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 60s, &last), "migration " << id << ": " << last);
    CHECK(migration(admin, id)["error"] == "");
    CHECK(bucket_rows(f, 1, m.buckets) == expected);
    CHECK(bucket_rows(f, 0, m.buckets).empty());
  }
}
