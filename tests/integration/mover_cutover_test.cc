// The mover's cutover under what an operator meets (docs/architecture.md §8.6): a source
// transaction that outlives cutover.drain_timeout (abort, and drain_action terminate), ROLLBACK
// MIGRATION inside the rollback window and its refusal after it, a silent router that is not
// waited for, and a final verification that finds a difference. Each case runs its own deployment (catalog, 3
// shards, one proxy) and checks the data on the shards and in the catalog directly.
#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

TEST_SUITE("mover_cutover") {
  // docs/architecture.md §8.6 (drain): a transaction on the source that started before the fence and outlives
  // cutover.drain_timeout aborts the cutover: unfence, ACTIVE on the source, retry later.
  TEST_CASE(
      "drain timeout: a long source transaction aborts the cutover; once it commits the move completes") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.drain_timeout = "1s";
    knobs.rollback_window = "1s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 200);
    const std::string long_row = s0.value("SELECT min(id) FROM orders WHERE tenant_id = " + key(m.keys[0]));
    const std::string long_where = " WHERE tenant_id = " + key(m.keys[0]) + " AND id = " + long_row;

    // The long transaction starts before the move and reads a row of a moving bucket. It writes
    // only once the cutover aborted: here every shard is a database of one PostgreSQL cluster, and
    // creating a logical slot (the reverse slot on s1, made before the first cutover) waits for
    // every transaction of the cluster that holds an xid.
    PgConn long_tx = f.setup.shard(0);
    REQUIRE_OK(long_tx.exec("BEGIN"));
    REQUIRE(long_tx.value("SELECT note FROM orders" + long_where) == "seed-1");

    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    bool aborted = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
          return row["state"] == "catching_up" && contains(row["error"], "drain_timeout");
        },
        30s, 50ms);
    REQUIRE_MESSAGE(aborted, "migration " << id << ": " << last);
    MESSAGE("after the abort: " << last);
    // No further attempt while the aborted state is looked at: a step that read the row before the
    // pause may still start one (it aborts again after drain_timeout), then the runner waits.
    REQUIRE_OK(admin.exec("PAUSE MIGRATION " + id));
    sleep_ms(1000);
    REQUIRE_MESSAGE(wait_for_state(admin, id, "catching_up", 15s, &last), "migration " << id << ": " << last);

    // The source owns the buckets again ...
    check_owned_by_s0(f, m);
    // ... and takes writes to them: in the long transaction, directly, through shardwire.
    CHECK_OK(long_tx.exec("UPDATE orders SET note = 'long-tx', qty = qty + 1000" + long_where));
    {
      PgConn direct = f.setup.shard(0);
      CHECK_OK(direct.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[1]) +
                           ", 'direct-while-aborted')"));
      PgConn app = f.client();
      CHECK_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[0]) +
                        ", 'proxy-while-aborted')"));
      CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'proxy-while-aborted'") == "1");
    }
    CHECK(migration(admin, id)["state"] == "catching_up");

    REQUIRE_OK(long_tx.exec("COMMIT"));
    const auto expected = bucket_rows(f, 0, m.buckets);
    REQUIRE_OK(admin.exec("RESUME MIGRATION " + id));
    bool done = wait_for_state(admin, id, "done", 45s, &last);
    REQUIRE_MESSAGE(done, "migration " << id << ": " << last);

    check_moved_to_s1(f, m, expected);
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT note || '|' || qty FROM orders" + long_where) == "long-tx|1001");
    CHECK(s1.value(
              "SELECT count(*) FROM orders WHERE note IN ('direct-while-aborted', 'proxy-while-aborted')") ==
          "2");
    check_no_slots_or_publications(f);
  }

  // docs/architecture.md §8.7: in the window the target's writes stream back to the source, so ROLLBACK
  // MIGRATION loses nothing; after the window it is refused.
  TEST_CASE(
      "ROLLBACK MIGRATION in the window returns every write to the source; refused once the window closed") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "60s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    Moving m = moving_on_s0(2);
    PgConn app = f.client();
    for (int64_t k : m.keys)
      for (int i = 1; i <= 10; ++i)
        REQUIRE_OK(app.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + key(k) + ", 'seed-" +
                            std::to_string(i) + "', " + std::to_string(i) + ")"));

    PgConn admin = admin_console(f);
    FenceInvariantWatch watch(f);  // through the move, the rollback and the move again
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "rollback_window", 30s, &last),
                    "migration " << id << ": " << last);
    REQUIRE(directory_of(f, m.buckets) == repeated("s1/ACTIVE", m.buckets.size()));
    CHECK(holds_rows_on(f, 0, m.buckets) == repeated("t", m.buckets.size()));  // fenced with its rows

    // Writes of the window, through shardwire: inserts, updates, deletes; they land on s1.
    for (int64_t k : m.keys) {
      for (int i = 1; i <= 5; ++i)
        REQUIRE_OK(app.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + key(k) + ", 'window-" +
                            std::to_string(i) + "', " + std::to_string(100 + i) + ")"));
      PgResult updated =
          app.exec("UPDATE orders SET qty = qty + 100, note = note || '+w' WHERE tenant_id = " + key(k) +
                   " AND note IN ('seed-1', 'seed-3')");
      CHECK_MESSAGE(updated.command_tag() == "UPDATE 2", updated.describe());
      PgResult deleted = app.exec("DELETE FROM orders WHERE tenant_id = " + key(k) + " AND note = 'seed-2'");
      CHECK_MESSAGE(deleted.command_tag() == "DELETE 1", deleted.describe());
    }
    PgConn s0 = f.setup.shard(0);
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note LIKE 'window-%' OR note LIKE '%+w'") == "14");
    const auto window_rows = bucket_rows(f, 1, m.buckets);
    REQUIRE(window_rows.size() == 2 * (10 + 5 - 1));
    std::map<uint32_t, std::vector<std::string>> window_rows_of;
    for (uint32_t b : m.buckets) window_rows_of[b] = bucket_rows(f, 1, {b});

    REQUIRE_OK(admin.exec("ROLLBACK MIGRATION " + id));
    bool rolled_back = wait_for_state(admin, id, "rolled_back", 40s, &last);
    REQUIRE_MESSAGE(rolled_back, "migration " << id << ": " << last);

    check_owned_by_s0(f, m);
    // The target's copy is gone, and its fences say so.
    CHECK(holds_rows_on(f, 1, m.buckets) == repeated("f", m.buckets.size()));
    for (uint32_t b : m.buckets) {  // every write of the window, exactly
      CAPTURE(b);
      CHECK(bucket_rows(f, 0, {b}) == window_rows_of[b]);
    }
    CHECK(bucket_rows(f, 1, m.buckets).empty());
    check_no_slots_or_publications(f);
    // The source takes writes again; its id sequence is past the ids the target handed out.
    for (int64_t k : m.keys)
      for (int i = 1; i <= 8; ++i)
        CHECK_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(k) + ", 'after-rollback')"));
    CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'after-rollback'") == "16");
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note = 'after-rollback'") == "0");

    // A rolled-back migration takes no more requests.
    PgResult again = admin.exec("ROLLBACK MIGRATION " + id);
    CHECK(again.sqlstate() == "55000");

    // The same buckets again; EXPIRE ROLLBACK closes the window: ROLLBACK is refused at once and
    // after the move is done, with a message about the window.
    const std::string id2 = start_move(admin, m.buckets);
    REQUIRE_MESSAGE(wait_for_state(admin, id2, "rollback_window", 30s, &last),
                    "migration " << id2 << ": " << last);
    REQUIRE_OK(admin.exec("EXPIRE ROLLBACK " + id2));
    PgResult early = admin.exec("ROLLBACK MIGRATION " + id2);
    CHECK_MESSAGE(early.sqlstate() == "55000", "ROLLBACK right after EXPIRE ROLLBACK (migration "
                                                   << migration(admin, id2)["state"] << ") -> "
                                                   << early.describe());
    CHECK_MESSAGE(contains(lower(early.error()), "rollback window"), early.describe());
    REQUIRE_MESSAGE(wait_for_state(admin, id2, "done", 40s, &last), "migration " << id2 << ": " << last);
    PgResult refused = admin.exec("ROLLBACK MIGRATION " + id2);
    CHECK(refused.sqlstate() == "55000");
    CHECK_MESSAGE(contains(lower(refused.error()), "rollback window"), refused.describe());
    MESSAGE("ROLLBACK MIGRATION after the window: " << refused.error());
    CHECK(directory_of(f, m.buckets) == repeated("s1/ACTIVE", m.buckets.size()));
    CHECK(bucket_rows(f, 0, m.buckets).empty());
    CHECK(holds_rows_on(f, 0, m.buckets) == repeated("f", m.buckets.size()));
    check_no_slots_or_publications(f);
    const std::string hidden = watch.stop();
    CHECK_MESSAGE(hidden == "", "a fence said no rows over rows (" << hidden << "), polls " << watch.polls());
  }

  // CANCEL MIGRATION before the flip: nothing of the migration stays behind.

  // cutover.drain_action = terminate: after drain_timeout the cutover ends the source backends
  // whose transactions hold the drain (as Vitess does) instead of aborting, and completes. (The
  // default, abort, is the case above: the transaction survives and the cutover is retried.)
  TEST_CASE(
      "drain_action terminate: a source transaction outliving drain_timeout is ended; the cutover "
      "completes") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.drain_timeout = "1s";
    knobs.rollback_window = "1s";
    ShardedOptions options = mover_options(knobs);
    options.proxy.extra_yaml += "  drain_action: terminate\n";
    int metrics_port = 0;
    ShardedFixture f(with_metrics(std::move(options), &metrics_port));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 100);
    const auto expected = bucket_rows(f, 0, m.buckets);
    PgConn holder = f.setup.shard(0);
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE_OK(holder.exec("SELECT count(*) FROM orders WHERE tenant_id = " + key(m.keys[0])));
    PgConn admin = admin_console(f);
    auto started = Clock::now();
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 40s, &last), "migration " << id << ": " << last);
    MESSAGE("migration done in " << ms_since(started) << " ms with a transaction held open on s0");
    CHECK(contains(f.proxy->log(), "cutover.drain_action = terminate: ended 1 backend(s) on s0"));
    CHECK(metric_value(metrics_port, "shardwire_cutover_drain_terminations_total") == 1);
    CHECK(metric_value(metrics_port, "shardwire_cutover_drain_aborts_total") == 0);
    CHECK(migration(admin, id)["error"] == "");
    PgResult after = holder.exec("SELECT 1");
    CHECK_MESSAGE(!after.ok(), "the blocking transaction's backend was not terminated");
    CHECK(bucket_rows(f, 1, m.buckets) == expected);
    CHECK(bucket_rows(f, 0, m.buckets).empty());
  }

  // A router that stopped heartbeating (frozen, cut off) 5 s ago still has its lease (30 s here)
  // but cannot acknowledge MIGRATING: the cutover does not wait for it (the fence covers its
  // writes). Waiting for every router within its lease paused writes queue_timeout / 2 = 1.5 s.
  TEST_CASE("a router silent for longer than two heartbeat intervals (at least 4 s) is not waited for") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 50);
    PgConn catalog = f.setup.catalog();
    REQUIRE_OK(
        catalog.exec("INSERT INTO shardwire.routers (id, directory_version, heartbeat_at, host, port, pid) "
                     "VALUES ('frozen-instance', 1, now() - interval '5 seconds', 'elsewhere', 6432, 1)"));
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 40s, &last), "migration " << id << ": " << last);
    const double pause_ms = std::stod(migration(admin, id)["last_pause_ms"]);
    MESSAGE("write pause with a silent router registered: " << pause_ms << " ms");
    // Waiting for the silent router would end in this warning (after queue_timeout / 2).
    CHECK_MESSAGE(!contains(f.proxy->log(), "not every router loaded directory version"),
                  "the cutover waited for the silent router's acknowledgement");
    CHECK(catalog.value("SELECT directory_version FROM shardwire.routers WHERE id = 'frozen-instance'") ==
          "1");
  }
  // docs/architecture.md §8.6 (verify): a row that only the target has (written there behind the
  // mover's back during the copy) fails every final verification, which runs beside the target's
  // own steps (reverse_position, sequences): each cutover is aborted and undone, and writes go on
  // on the source. Once the row is gone the next cutover completes with exactly the source's rows.
  TEST_CASE(
      "final verification: a row only the target has aborts the cutover; once removed the move completes") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.copy_rows_per_sec = 200;  // 1000 rows: a copy of ~5 s, so the stray row lands inside it
    knobs.rollback_window = "1s";
    int metrics_port = 0;
    ShardedFixture f(with_metrics(mover_options(knobs), &metrics_port));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 500);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    wait_for_copy_start(f, admin, id);
    // rows_copied above 0: the target's copy transaction has deleted the set's old rows, so a row
    // committed on s1 now stays (replication role: s1's fence would refuse it).
    std::string last;
    const bool copying = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " rows_copied=" + row["rows_copied"];
          return row["state"] == "copying" && !row["rows_copied"].empty() && row["rows_copied"] != "0";
        },
        20s, 20ms);
    REQUIRE_MESSAGE(copying, "migration " << id << ": " << last);
    PgConn s1 = f.setup.shard(1);
    const std::string stray_where = " WHERE tenant_id = " + key(m.keys[0]) + " AND note = 'stray'";
    REQUIRE_OK(s1.exec("SET session_replication_role = replica"));
    REQUIRE_OK(s1.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[0]) + ", 'stray')"));
    REQUIRE_MESSAGE(migration(admin, id)["state"] == "copying", "the copy ended before the stray row");

    const std::string differs = "cutover aborted: verification: bucket " + std::to_string(m.buckets[0]) +
                                " differs between s0 and s1";
    const bool aborted = wait_until(
        [&] {
          auto row = migration(admin, id);
          last = row["state"] + " step=" + row["step"] + " error=" + row["error"];
          return contains(row["error"], differs);
        },
        60s, 50ms);
    REQUIRE_MESSAGE(aborted, "migration " << id << ": " << last);
    // Live verification found it first, and knew no write in flight explains it (§8.5).
    CHECK(contains(f.proxy->log(), "live verification: bucket " + std::to_string(m.buckets[0]) +
                                       " differs between s0 and s1 although the stream did not change it"));
    REQUIRE_OK(admin.exec("PAUSE MIGRATION " + id));
    sleep_ms(1000);  // a cutover already under way aborts again
    REQUIRE_MESSAGE(wait_for_state(admin, id, "catching_up", 15s, &last), "migration " << id << ": " << last);
    CHECK(metric_value(metrics_port, "shardwire_mover_verify_mismatches_total") >= 1);
    check_owned_by_s0(f, m);
    PgConn app = f.client();
    REQUIRE_OK(
        app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[1]) + ", 'while-aborted')"));
    CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'while-aborted'") == "1");

    REQUIRE_OK(s1.exec("DELETE FROM orders" + stray_where));
    const auto expected = bucket_rows(f, 0, m.buckets);
    REQUIRE_OK(admin.exec("RESUME MIGRATION " + id));
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 45s, &last), "migration " << id << ": " << last);
    check_moved_to_s1(f, m, expected);
    CHECK(s1.value("SELECT count(*) FROM orders" + stray_where) == "0");
    check_no_slots_or_publications(f);
  }

  // docs/architecture.md §8.5/§8.6: live verification finds the buckets equal while writes go on,
  // and the stream's record says which it changed since; the cutover, with writes held, scans only
  // those. One bucket of eight is written throughout: the flip's log line says the pause verified
  // at most that one, and no write is lost or refused.
  TEST_CASE("the cutover verifies with writes held only the buckets changed after live verification") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 8, 100);
    std::atomic<bool> stop{false};
    std::atomic<int> acknowledged{0}, failed{0};
    std::thread writer([&] {
      PgConn app = f.client();
      while (!stop) {
        PgResult r =
            app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[0]) + ", 'during')");
        ++(r.ok() ? acknowledged : failed);
        sleep_ms(5);
      }
    });
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    const bool flipped = wait_for_state(admin, id, "rollback_window", 60s, &last) ||
                         migration(admin, id)["state"] == "cleaning" ||
                         migration(admin, id)["state"] == "done";
    sleep_ms(200);  // writes land on the new owner too
    stop = true;
    writer.join();
    REQUIRE_MESSAGE(flipped, "migration " << id << ": " << last);
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 45s, &last), "migration " << id << ": " << last);

    const std::regex flip("migration " + id +
                          R"(: 8 bucket\(s\) now on s1; writes paused [0-9.]+ ms .* verified (\d+)/8 )");
    std::smatch found;
    const std::string log = f.proxy->log();
    REQUIRE_MESSAGE(std::regex_search(log, found, flip), "no flip line with the verified buckets");
    MESSAGE(found.str());
    CHECK(std::stoi(found[1].str()) <= 1);
    CHECK(failed.load() == 0);
    CHECK(acknowledged.load() > 0);
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note = 'during'") ==
          std::to_string(acknowledged.load()));
    CHECK(bucket_rows(f, 0, m.buckets).empty());
    CHECK(directory_of(f, m.buckets) == repeated("s1/ACTIVE", m.buckets.size()));
  }
}  // TEST_SUITE
