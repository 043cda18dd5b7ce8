// The mover's operator paths end to end (docs/architecture.md §8, §10): CANCEL MIGRATION during
// the copy, upsert-if-newer of a version column through the catch-up stream, rollback windows
// that hold no mover slot, PAUSE/RESUME MIGRATION, the console's SHOW MIGRATIONS (with the copy's
// rate and time to finish, also in SHOW REBALANCE and /metrics) and VERIFY BUCKET (the cutover's operator
// cases are in mover_cutover_test.cc). Each case runs its own deployment (catalog, 3 shards, one proxy) and
// checks the data on the shards and in the catalog directly.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

TEST_SUITE("mover_ops") {
  TEST_CASE(
      "CANCEL MIGRATION during the copy: no slot, no publication, no copied rows; the source keeps the "
      "buckets") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.copy_rows_per_sec = 200;  // 2000 rows: a copy of ~10 s
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 1000);
    const auto before = bucket_rows(f, 0, m.buckets);

    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    wait_for_copy_start(f, admin, id);
    sleep_ms(600);  // some rows are copied
    // Marked before the copy's first row, on the target that fences the buckets till the cutover.
    CHECK(holds_rows_on(f, 1, m.buckets) == repeated("t", m.buckets.size()));
    auto cancel_asked = Clock::now();
    REQUIRE_OK(admin.exec("CANCEL MIGRATION " + id));
    CHECK(migration(admin, id)["state"] == "copying");  // asked during the copy
    std::string last;
    bool cancelled = wait_for_state(admin, id, "cancelled", 40s, &last);
    REQUIRE_MESSAGE(cancelled, "migration " << id << ": " << last);
    MESSAGE("CANCEL MIGRATION during the copy took " << ms_since(cancel_asked) << " ms");

    check_no_slots_or_publications(f);
    CHECK(bucket_rows(f, 1, m.buckets).empty());
    check_owned_by_s0(f, m);
    CHECK(holds_rows_on(f, 1, m.buckets) == repeated("f", m.buckets.size()));  // the copy deleted
    CHECK(bucket_rows(f, 0, m.buckets) == before);
    PgConn s1 = f.setup.shard(1);
    // The applier's progress row goes too (the table exists once a stream applied something).
    CHECK(s1.value("SELECT CASE WHEN to_regclass('shardwire.mover_progress') IS NULL THEN 0 ELSE "
                   "(xpath('/row/n/text()', query_to_xml('SELECT count(*) AS n FROM shardwire.mover_progress "
                   "WHERE migration_id = " +
                   id + "', false, true, '')))[1]::text::int END") == "0");

    // Writes through shardwire to the buckets work and go to the source; the target still refuses.
    PgConn app = f.client();
    for (int64_t k : m.keys) {
      CHECK_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(k) + ", 'after-cancel')"));
      PgResult updated =
          app.exec("UPDATE orders SET qty = -1 WHERE tenant_id = " + key(k) + " AND note = 'seed-7'");
      CHECK_MESSAGE(updated.command_tag() == "UPDATE 1", updated.describe());
    }
    CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'after-cancel' OR qty = -1") == "4");
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note = 'after-cancel'") == "0");
    PgResult refused =
        s1.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(m.keys[0]) + ", 'direct')");
    CHECK(refused.sqlstate() == "SW001");
    CHECK(admin.exec("CANCEL MIGRATION " + id).sqlstate() == "55000");
  }

  // The copy checks the migration's requests with every progress report (about twice a second):
  // PAUSE stops it (it starts over on RESUME), CANCEL stops it and removes what it copied.
  TEST_CASE("PAUSE MIGRATION and CANCEL MIGRATION take effect during a running copy") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.copy_rows_per_sec = 200;  // 2000 rows: a copy of ~10 s
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 1000);

    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    wait_for_copy_start(f, admin, id);
    sleep_ms(600);
    REQUIRE_OK(admin.exec("PAUSE MIGRATION " + id));
    sleep_ms(1000);  // progress is recorded every 0.5 s
    const std::string paused_at = migration(admin, id)["rows_copied"];
    sleep_ms(2000);
    auto row = migration(admin, id);
    CHECK(row["state"] == "copying");
    CHECK_MESSAGE(row["rows_copied"] == paused_at,
                  "rows_copied went from " << paused_at << " to " << row["rows_copied"] << " while paused");
    // The copy has written rows of the buckets on the target, which still fences them.
    CHECK(holds_rows_on(f, 1, m.buckets) == repeated("t", m.buckets.size()));
    auto cancel_asked = Clock::now();
    REQUIRE_OK(admin.exec("CANCEL MIGRATION " + id));
    std::string last;
    // 40 s only guards against a hang; how long the cancel took is a reported figure.
    REQUIRE_MESSAGE(
        wait_for_state(admin, id, "cancelled", 40s, &last),
        "migration " << id << " never reached 'cancelled' after CANCEL MIGRATION; last: " << last);
    MESSAGE("CANCEL MIGRATION of a paused copy took " << ms_since(cancel_asked) << " ms");
    check_no_slots_or_publications(f);
    CHECK(bucket_rows(f, 1, m.buckets).empty());
    CHECK(directory_of(f, m.buckets) == repeated("s0/ACTIVE", m.buckets.size()));
    CHECK(fenced_on(f, 0, m.buckets).empty());
    CHECK(holds_rows_on(f, 1, m.buckets) == repeated("f", m.buckets.size()));  // the copy deleted
    // Writes to the buckets are not blocked: they go through shardwire to the source.
    PgConn app = f.client();
    for (int64_t k : m.keys)
      CHECK_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(k) + ", 'after-cancel')"));
    CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'after-cancel'") ==
          std::to_string(m.keys.size()));
  }

  // docs/architecture.md §8.4: with a version_column the applier upserts only newer rows, so an older change
  // the stream replays never overwrites a newer row the target already holds.
  TEST_CASE("version_column: the catch-up stream never overwrites a newer target row with an older one") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "1s";
    knobs.drain_timeout = "500ms";
    ShardedOptions options = mover_options(knobs);
    options.tables_yaml +=
        "    - name: accounts\n      key: tenant_id\n      type: bigint\n      version_column: row_version\n";
    ShardedFixture f(std::move(options));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn app = f.client();
    REQUIRE_OK(app.exec(
        "CREATE TABLE accounts (tenant_id bigint NOT NULL, id integer NOT NULL, balance integer NOT NULL, "
        "note text, row_version bigint NOT NULL, PRIMARY KEY (tenant_id, id))"));
    Moving m = moving_on_s0(2);
    const std::string k0 = key(m.keys[0]), k1 = key(m.keys[1]);
    PgConn s0 = f.setup.shard(0);
    for (int64_t k : m.keys)
      REQUIRE_OK(s0.exec("INSERT INTO accounts SELECT " + key(k) +
                         ", g, g, 'seed', 1 FROM generate_series(1, 250) g"));
    // R = (k0, 1): balance 10, version 1. R2 = (k0, 2): balance 20, version 5. R3 = (k1, 1000): none yet.
    REQUIRE_OK(s0.exec("UPDATE accounts SET balance = 10 WHERE tenant_id = " + k0 + " AND id = 1"));
    REQUIRE_OK(
        s0.exec("UPDATE accounts SET balance = 20, row_version = 5 WHERE tenant_id = " + k0 + " AND id = 2"));

    // A transaction left open on s0 keeps every cutover from draining: the migration copies, then
    // streams (catching_up) until it is closed, while the writes below happen in a known order.
    PgConn holder = f.setup.shard(0);
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE_OK(holder.exec("SELECT count(*) FROM accounts"));
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    std::string last;
    PgConn s1_probe = f.setup.shard(1);
    REQUIRE_MESSAGE(wait_until(
                        [&] {
                          return s1_probe.value("SELECT count(*) FROM accounts WHERE tenant_id IN (" + k0 +
                                                ", " + k1 + ")") == "500";
                        },
                        20s, 20ms),
                    "the copy did not finish: " << migration(admin, id)["state"]);
    REQUIRE(migration(admin, id)["state"] != "rollback_window");

    // The target: a log of every row its accounts takes (fires for the applier too), then rows
    // written directly, past the fence: R newer than anything the source has yet, R2 older, R3 new.
    PgConn s1 = f.setup.shard(1);
    REQUIRE_OK(
        s1.exec("CREATE TABLE accounts_audit (tenant_id bigint, id integer, balance integer, note text, "
                "row_version bigint, op text)"));
    REQUIRE_OK(s1.exec(
        "CREATE FUNCTION accounts_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "INSERT INTO accounts_audit VALUES (NEW.tenant_id, NEW.id, NEW.balance, NEW.note, NEW.row_version, "
        "TG_OP); RETURN NULL; END $$"));
    REQUIRE_OK(
        s1.exec("CREATE TRIGGER accounts_audit AFTER INSERT OR UPDATE ON accounts FOR EACH ROW "
                "EXECUTE FUNCTION accounts_audit()"));
    REQUIRE_OK(s1.exec("ALTER TABLE accounts ENABLE ALWAYS TRIGGER accounts_audit"));
    REQUIRE(s1.value("SELECT balance || '|' || row_version FROM accounts WHERE tenant_id = " + k0 +
                     " AND id = 1") == "10|1");  // copied
    REQUIRE_OK(s1.exec("SET session_replication_role = replica"));
    REQUIRE_OK(s1.exec(
        "UPDATE accounts SET balance = 999, note = 'target-newer', row_version = 100 WHERE tenant_id = " +
        k0 + " AND id = 1"));
    REQUIRE_OK(s1.exec(
        "UPDATE accounts SET balance = 0, note = 'target-older', row_version = 3 WHERE tenant_id = " + k0 +
        " AND id = 2"));
    REQUIRE_OK(s1.exec("INSERT INTO accounts VALUES (" + k1 + ", 1000, 777, 'target-newer', 50)"));
    REQUIRE_OK(s1.exec("RESET session_replication_role"));

    // The source (still the owner), through shardwire, in this commit order: older versions of R
    // and R3, a newer one of R2, then R and R3 reach the versions the target holds.
    REQUIRE_OK(app.exec(
        "UPDATE accounts SET balance = 11, note = 'source-old', row_version = 2 WHERE tenant_id = " + k0 +
        " AND id = 1"));
    REQUIRE_OK(app.exec(
        "UPDATE accounts SET balance = 21, note = 'source-new', row_version = 6 WHERE tenant_id = " + k0 +
        " AND id = 2"));
    REQUIRE_OK(app.exec("INSERT INTO accounts (tenant_id, id, balance, note, row_version) VALUES (" + k1 +
                        ", 1000, 1, 'source-old', 1)"));
    REQUIRE_OK(app.exec(
        "UPDATE accounts SET balance = 999, note = 'target-newer', row_version = 100 WHERE tenant_id = " +
        k0 + " AND id = 1"));
    REQUIRE_OK(app.exec(
        "UPDATE accounts SET balance = 777, note = 'target-newer', row_version = 50 WHERE tenant_id = " + k1 +
        " AND id = 1000"));
    const auto expected = bucket_rows(f, 0, m.buckets, "accounts");

    REQUIRE_OK(holder.exec("COMMIT"));
    bool done = wait_for_state(admin, id, "done", 45s, &last);
    REQUIRE_MESSAGE(done, "migration " << id << ": " << last);

    auto row_at = [&](const std::string& k, int row_id) {
      return s1.value("SELECT balance || '|' || note || '|' || row_version FROM accounts WHERE tenant_id = " +
                      k + " AND id = " + std::to_string(row_id));
    };
    CHECK(row_at(k0, 1) == "999|target-newer|100");
    CHECK(row_at(k0, 2) == "21|source-new|6");
    CHECK(row_at(k1, 1000) == "777|target-newer|50");
    CHECK(bucket_rows(f, 1, m.buckets, "accounts") == expected);
    // What the target's rows went through: the older source versions were never written there; the
    // newer one of R2 was.
    auto audited = [&](const std::string& k, int row_id, int version) {
      return s1.value("SELECT count(*) FROM accounts_audit WHERE tenant_id = " + k + " AND id = " +
                      std::to_string(row_id) + " AND row_version = " + std::to_string(version));
    };
    CHECK_MESSAGE(audited(k0, 1, 2) == "0",
                  "the older version 2 of (" << k0 << ", 1) overwrote version 100 on the target");
    CHECK_MESSAGE(audited(k1, 1000, 1) == "0",
                  "the older version 1 of (" << k1 << ", 1000) overwrote version 50");
    CHECK(audited(k0, 2, 6) == "1");
    MESSAGE("target log: " << s1.value(
                "SELECT string_agg(op || ' ' || tenant_id || '/' || id || ' v' || row_version, "
                "', ' ORDER BY row_version) FROM accounts_audit"));
    check_no_slots_or_publications(f);
  }

  // With the default mover.max_concurrent (2), two migrations in their (long) rollback windows
  // leave the mover free: a third one proceeds instead of waiting out a window. While it waits
  // for a slot SHOW MIGRATIONS says so; a window that closes is not an error.
  TEST_CASE(
      "rollback windows hold no mover slot: a third migration proceeds; SHOW MIGRATIONS says why one waits") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "120s";
    knobs.copy_rows_per_sec = 300;  // 400 rows per migration: copies of ~1.3 s
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 6, 200);
    PgConn admin = admin_console(f);
    const std::vector<std::string> ids = {start_move(admin, {m.buckets[0], m.buckets[1]}, "s1"),
                                          start_move(admin, {m.buckets[2], m.buckets[3]}, "s1"),
                                          start_move(admin, {m.buckets[4], m.buckets[5]}, "s2")};
    std::string waiting;
    bool said = wait_until(
        [&] {
          auto row = migration(admin, ids[2]);
          waiting = row["state"] + ": " + row["waiting"];
          return row["state"] == "planned" && contains(row["waiting"], "for a mover slot");
        },
        10s, 50ms);
    CHECK_MESSAGE(said, "the third migration never said why it waits: " << waiting);
    MESSAGE("migration " << ids[2] << " waited: " << waiting);

    std::string last;
    for (const auto& id : ids)
      REQUIRE_MESSAGE(wait_for_state(admin, id, "rollback_window", 60s, &last),
                      "migration " << id << " (mover.max_concurrent 2, two windows open): " << last);
    for (const auto& id : ids) {
      auto row = migration(admin, id);
      CHECK(row["state"] == "rollback_window");  // the first two windows are still open
      CHECK(row["error"] == "");
      CHECK(row["waiting"] == "");
    }
    for (const auto& id : ids) REQUIRE_OK(admin.exec("EXPIRE ROLLBACK " + id));
    for (const auto& id : ids) {
      REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
      CHECK_MESSAGE(migration(admin, id)["error"] == "", "a done migration shows an error");
    }
  }

  TEST_CASE("PAUSE MIGRATION holds a migration where it is; RESUME MIGRATION completes it") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.copy_rows_per_sec = 200;  // 400 rows: a copy of ~2 s
    knobs.rollback_window = "1s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 200);

    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    wait_for_copy_start(f, admin, id);
    std::map<std::string, std::string> copying;
    REQUIRE(wait_until([&] { return (copying = migration(admin, id))["rows_total"] == "400"; }, 5s, 20ms));
    CHECK(copying["state"] == "copying");
    CHECK(std::stod(copying["percent"]) < 100.0);
    REQUIRE_OK(admin.exec("PAUSE MIGRATION " + id));
    CHECK(migration(admin, id)["paused"] == "t");
    // The copy stops; the migration stays in copying, owned by s0, for as long as it is paused (the
    // copy starts over on RESUME).
    std::string last;
    REQUIRE(wait_until([&] { return migration(admin, id)["step"] == "paused"; }, 10s, 50ms));
    std::set<std::string> seen;
    auto held = Clock::now();
    while (ms_since(held) < 3000) {
      auto row = migration(admin, id);
      seen.insert(row["state"] + " paused=" + row["paused"]);
      for (const auto& owner : directory_of(f, m.buckets)) seen.insert(owner);
      sleep_ms(100);
    }
    CHECK(seen == std::set<std::string>{"copying paused=t", "s0/ACTIVE"});
    CHECK(fenced_on(f, 0, m.buckets).empty());
    PgConn app = f.client();
    for (int64_t k : m.keys)
      CHECK_OK(app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key(k) + ", 'while-paused')"));
    CHECK(s0.value("SELECT count(*) FROM orders WHERE note = 'while-paused'") == "2");
    const auto expected = bucket_rows(f, 0, m.buckets);

    REQUIRE_OK(admin.exec("RESUME MIGRATION " + id));
    CHECK(migration(admin, id)["paused"] == "f");
    PgResult again = admin.exec("RESUME MIGRATION " + id);
    CHECK(again.sqlstate() == "55000");
    CHECK_MESSAGE(contains(again.error(), "not paused"), again.describe());
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 40s, &last), "migration " << id << ": " << last);
    check_moved_to_s1(f, m, expected);
    auto row = migration(admin, id);
    CHECK(row["rows_copied"] ==
          "402");  // the copy started over after RESUME: 400 seeded + 2 written while paused
    CHECK(std::stod(row["percent"]) == 100.0);
  }

  TEST_CASE(
      "during a throttled copy SHOW MIGRATIONS and SHOW REBALANCE report the rate and the time to finish, "
      "and so does /metrics") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.copy_rows_per_sec = 400;  // 2 buckets x 1000 rows: a copy of ~5 s
    int metrics_port = 0;
    ShardedFixture f(with_metrics(mover_options(knobs), &metrics_port));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 1000);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);

    std::map<std::string, std::string> row;
    bool reported = wait_until(
        [&] {
          row = migration(admin, id);
          return row["state"] == "copying" && !row["eta_seconds"].empty() &&
                 std::stoll(row["rows_copied"]) >= 200;
        },
        20s, 100ms);
    REQUIRE_MESSAGE(reported, "no rate and eta while copying; last: state "
                                  << row["state"] << ", rows_copied " << row["rows_copied"]);
    const long long copied = std::stoll(row["rows_copied"]), total = std::stoll(row["rows_total"]);
    const double rate = std::stod(row["rows_per_sec"]), eta = std::stod(row["eta_seconds"]);
    MESSAGE("copying: " << copied << "/" << total << " rows, " << rate << " rows/s, " << row["bytes_per_sec"]
                        << " bytes/s, eta " << eta << " s");
    CHECK(total == 2000);
    CHECK(rate > 100);
    CHECK(rate < 400 * 1.5);  // mover.copy_rows_per_sec
    CHECK(eta > 0);
    CHECK(eta == doctest::Approx(static_cast<double>(total - copied) / rate).epsilon(0.01));
    CHECK(std::stoll(row["bytes_copied"]) > 0);
    CHECK(std::stoll(row["bytes_total"]) > std::stoll(row["bytes_copied"]));
    CHECK(std::stod(row["bytes_per_sec"]) > 0);

    PgResult whole = admin.exec("SHOW REBALANCE");
    REQUIRE_OK(whole);
    REQUIRE(whole.rows() == 1);
    std::map<std::string, std::string> r;
    for (int c = 0; c < whole.cols(); ++c) r[whole.names()[c]] = whole.value(0, c);
    CHECK(r["migrations"] == "1");
    CHECK(r["copying"] == "1");
    CHECK(r["rows_total"] == "2000");
    REQUIRE(!r["eta_seconds"].empty());
    CHECK(std::stod(r["eta_seconds"]) > 0);
    CHECK(std::stod(r["percent"]) > 0);
    CHECK(std::stod(r["percent"]) < 100);

    bool exported = wait_until(
        [&] {
          return metric_value(metrics_port, "shardwire_rebalance_rows") == 2000 &&
                 metric_value(metrics_port, "shardwire_rebalance_eta_seconds") > 0 &&
                 metric_value(metrics_port, "shardwire_rebalance_rows_per_second") > 0;
        },
        5s, 100ms);
    CHECK_MESSAGE(exported, "/metrics: rows "
                                << metric_value(metrics_port, "shardwire_rebalance_rows") << ", eta "
                                << metric_value(metrics_port, "shardwire_rebalance_eta_seconds"));

    // Past the copy nothing is left to copy; once done no rebalance is under way.
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
    row = migration(admin, id);
    CHECK(row["rows_copied"] == "2000");
    CHECK(std::stod(row["eta_seconds"]) == 0.0);
    CHECK(std::stod(row["rows_per_sec"]) > 0);
    whole = admin.exec("SHOW REBALANCE");
    REQUIRE_OK(whole);
    CHECK(whole.value(0, 0) == "0");
    CHECK(wait_until([&] { return metric_value(metrics_port, "shardwire_rebalance_migrations") == 0; }, 5s,
                     100ms));
  }

  TEST_CASE("SHOW MIGRATIONS columns and progress; VERIFY BUCKET shows the owner's rows and checksum") {
    PROXY_ONLY();
    MoverKnobs knobs;
    knobs.rollback_window = "60s";
    ShardedFixture f(mover_options(knobs));
    INFO("proxy log (without SHOW MIGRATIONS):\n" << mover_log(f));
    PgConn s0 = f.setup.shard(0);
    const Moving m = seed_moving_on_s0(s0, 2, 30);

    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, m.buckets);
    PgResult shown = admin.exec("SHOW MIGRATIONS");
    REQUIRE_OK(shown);
    CHECK(shown.names() == std::vector<std::string>{"id",
                                                    "buckets",
                                                    "source",
                                                    "target",
                                                    "state",
                                                    "step",
                                                    "rows_copied",
                                                    "rows_total",
                                                    "percent",
                                                    "lag_bytes",
                                                    "lag_seconds",
                                                    "last_pause_ms",
                                                    "rollback_expires_at",
                                                    "paused",
                                                    "error",
                                                    "waiting",
                                                    "bytes_copied",
                                                    "bytes_total",
                                                    "rows_per_sec",
                                                    "bytes_per_sec",
                                                    "eta_seconds"});
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(admin, id, "rollback_window", 30s, &last),
                    "migration " << id << ": " << last);

    std::vector<uint32_t> sorted = m.buckets;
    std::sort(sorted.begin(), sorted.end());
    auto row = migration(admin, id);
    CHECK(row["buckets"] == bucket_list(sorted));
    CHECK(row["source"] == "s0");
    CHECK(row["target"] == "s1");
    CHECK(row["rows_copied"] == "60");
    CHECK(row["rows_total"] == "60");
    CHECK(std::stod(row["percent"]) == 100.0);
    REQUIRE_MESSAGE(!row["last_pause_ms"].empty(), "last_pause_ms is NULL after the cutover");
    CHECK(std::stod(row["last_pause_ms"]) > 0.0);
    CHECK(row["paused"] == "f");
    CHECK(std::stoll(row["lag_bytes"]) >= 0);
    CHECK(std::stod(row["lag_seconds"]) >= 0.0);
    REQUIRE_MESSAGE(!row["rollback_expires_at"].empty(), "rollback_expires_at is NULL in the window");
    PgConn catalog = f.setup.catalog();
    double left = std::stod(catalog.value("SELECT extract(epoch FROM '" + row["rollback_expires_at"] +
                                          "'::timestamptz - now())"));
    CHECK(left > 30.0);
    CHECK(left <= 60.0);

    // In the window VERIFY BUCKET shows the owner (s1) and the source (s0), equal.
    PgResult in_window = admin.exec("VERIFY BUCKET " + std::to_string(m.buckets[0]));
    REQUIRE_OK(in_window);
    CHECK(in_window.names() ==
          std::vector<std::string>{"bucket", "shard", "role", "rows", "checksum", "matches_owner"});
    REQUIRE(in_window.rows() == 2);
    CHECK(in_window.value(0, 1) + "/" + in_window.value(0, 2) == "s1/owner");
    CHECK(in_window.value(1, 1) + "/" + in_window.value(1, 2) == "s0/source");
    CHECK(in_window.value(0, 3) == "30");
    CHECK(in_window.value(1, 3) == "30");
    CHECK(in_window.value(0, 4) == in_window.value(1, 4));
    CHECK(in_window.value(1, 5) == "t");

    REQUIRE_OK(admin.exec("EXPIRE ROLLBACK " + id));
    REQUIRE_MESSAGE(wait_for_state(admin, id, "done", 30s, &last), "migration " << id << ": " << last);
    row = migration(admin, id);
    CHECK(std::stod(row["percent"]) == 100.0);
    CHECK(!row["last_pause_ms"].empty());
    CHECK(row["rollback_expires_at"] == "");
    CHECK(row["error"] == "");
    CHECK(row["paused"] == "f");

    // VERIFY BUCKET: the owner's count and checksum, as the shard computes them (docs/architecture.md §8.5:
    // sum of 64-bit row hashes of the row image with the columns in name order).
    PgConn app = f.client();
    REQUIRE_OK(
        app.exec("UPDATE orders SET qty = qty * 7 WHERE tenant_id = " + key(m.keys[0]) + " AND qty % 2 = 0"));
    PgConn s1 = f.setup.shard(1);
    for (uint32_t b : m.buckets) {
      CAPTURE(b);
      PgResult verified = admin.exec("VERIFY BUCKET " + std::to_string(b));
      REQUIRE_OK(verified);
      REQUIRE(verified.rows() == 1);
      const std::string where = " FROM orders WHERE shardwire.bucket_of(tenant_id, " +
                                std::to_string(kBuckets) + ") = " + std::to_string(b);
      const std::string direct = s1.value(
          "SELECT count(*) || '|' || coalesce(sum(hashtextextended('orders:' || ROW(id, note, qty, "
          "tenant_id)::text, 0)), "
          "0)" +
          where);
      CHECK(verified.value(0, 0) == std::to_string(b));
      CHECK(verified.value(0, 1) == "s1");
      CHECK(verified.value(0, 2) == "owner");
      CHECK(verified.value(0, 3) + "|" + verified.value(0, 4) == direct);
      CHECK(verified.value(0, 3) == "30");
      CHECK(verified.value(0, 5) == "t");
    }
    // A bucket that did not move: its owner only.
    PgResult other = admin.exec("VERIFY BUCKET 1");
    REQUIRE_OK(other);
    REQUIRE(other.rows() == 1);
    CHECK(other.value(0, 1) + "/" + other.value(0, 2) == "s1/owner");
    CHECK(admin.exec("VERIFY BUCKET " + std::to_string(kBuckets)).sqlstate() == "22023");
  }

}  // TEST_SUITE
