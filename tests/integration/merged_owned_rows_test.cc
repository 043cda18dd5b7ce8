// Keyless reads of a sharded table (sent to every shard) while a shard holds rows of a bucket it
// does not own, as a bucket move leaves them: the target holds the copied rows before cutover, the
// source keeps the moved rows through the rollback window. Each shard must return only the rows
// of the buckets it owns (those not in its shardwire.fenced_buckets), so every scatter read
// (count, plain rows, ORDER BY LIMIT, GROUP BY, the extended protocol, COPY TO STDOUT of the table
// and of a query) answers as it did before the copy was made.
#include "it_test.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

// The rows of a result, one "a|b|..." line each; sorted unless `ordered`.
std::vector<std::string> lines_of(const PgResult& r, bool ordered) {
  std::vector<std::string> out;
  for (int row = 0; row < r.rows(); ++row) {
    std::string line;
    for (int c = 0; c < r.cols(); ++c)
      line += (c ? "|" : "") + (r.is_null(row, c) ? "<null>" : r.value(row, c));
    out.push_back(std::move(line));
  }
  if (!ordered) std::sort(out.begin(), out.end());
  return out;
}

// COPY ... TO STDOUT through libpq: its data lines, sorted, then the command tag; the error
// when it fails.
std::vector<std::string> copied(PgConn& conn, const std::string& sql) {
  std::vector<std::string> lines;
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_OUT) {
    lines.push_back(std::string("error: ") + PQresultErrorMessage(started));
    PQclear(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return lines;
  }
  PQclear(started);
  char* buffer = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(conn.get(), &buffer, 0)) > 0) {
    lines.emplace_back(buffer, static_cast<size_t>(n));
    PQfreemem(buffer);
  }
  std::sort(lines.begin(), lines.end());
  while (PGresult* result = PQgetResult(conn.get())) {
    lines.push_back(std::string("tag: ") + PQcmdStatus(result) + PQresultErrorMessage(result));
    PQclear(result);
  }
  return lines;
}

}  // namespace

TEST_SUITE("merged_owned_rows") {
  TEST_CASE("keyless reads do not count the rows a shard holds of buckets it does not own") {
    PROXY_ONLY();
    ShardedFixture f;
    // A fresh init of empty shards: every fence says its bucket holds no rows there, so the
    // owned-rows filter joins no fence at all.
    for (int s = 0; s < f.setup.shards(); ++s)
      CHECK(f.setup.shard(s).value("SELECT count(*) FILTER (WHERE holds_rows) || '/' || (count(*) > 0) "
                                   "FROM shardwire.fenced_buckets") == "0/true");
    PgConn c = f.client();
    const int64_t moved = tenant_on(0, kShards, 1);  // owned by shard 0; its rows copied onto shard 1
    std::vector<int64_t> tenants = {moved, tenant_on(0, kShards, moved + 1), tenant_on(1, kShards, 1),
                                    tenant_on(2, kShards, 1)};
    for (int n = 0; n < 5; ++n) {
      for (int64_t tenant : tenants)
        REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'n" +
                          std::to_string(n) + "')"));
    }
    const std::vector<std::pair<std::string, bool>> reads = {
        {"SELECT count(*) FROM orders", true},
        {"SELECT tenant_id, note FROM orders", false},
        {"SELECT o.tenant_id, o.note FROM orders AS o WHERE o.note <> 'x'", false},
        {"SELECT tenant_id, note FROM orders ORDER BY tenant_id, note LIMIT 7", true},
        {"SELECT note, count(*), sum(tenant_id) FROM orders GROUP BY note ORDER BY note", true},
        {"SELECT tenant_id, count(*) FROM orders GROUP BY tenant_id ORDER BY 1", true},
        {"SELECT DISTINCT note FROM orders ORDER BY 1", true},
    };
    const std::vector<std::string> copies = {
        "COPY orders TO STDOUT", "COPY orders (tenant_id, note) TO STDOUT",
        "COPY (SELECT tenant_id, note FROM orders WHERE note <> 'x') TO STDOUT",
        "COPY orders (tenant_id, note) TO STDOUT WITH (FORMAT csv, HEADER)"};
    // The reference: the answers before any shard holds a row it does not own.
    std::vector<std::vector<std::string>> expected;
    for (const auto& [sql, ordered] : reads) {
      PgResult r = c.exec(sql);
      REQUIRE_OK(r);
      expected.push_back(lines_of(r, ordered));
    }
    CHECK(expected[0] == std::vector<std::string>{"20"});
    std::vector<std::vector<std::string>> expected_copies;
    for (const std::string& sql : copies) expected_copies.push_back(copied(c, sql));
    CHECK(expected_copies[1].size() == 21);  // 20 rows and the tag

    // The fault: shard 1 gets a copy of the moved tenant's rows, as a move's copy phase writes
    // them (replication role replica: the fence trigger does not fire). Shard 1 fences that
    // bucket, and as the mover does before its copy, its fence now says it holds rows.
    PgConn target = f.setup.shard(1);
    const std::string moved_bucket = std::to_string(bucket_of_key(moved));
    REQUIRE(target.value("UPDATE shardwire.fenced_buckets SET holds_rows = true WHERE bucket = " +
                         moved_bucket + " RETURNING version") != "");
    REQUIRE_OK(target.exec("SET session_replication_role = replica"));
    REQUIRE_OK(
        target.exec("INSERT INTO orders (id, tenant_id, note) SELECT id, tenant_id, note FROM (VALUES "
                    "(900001, " +
                    std::to_string(moved) + ", 'n0'), (900002, " + std::to_string(moved) +
                    ", 'n1'), (900003, " + std::to_string(moved) + ", 'n2')) v(id, tenant_id, note)"));
    CHECK(target.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(moved)) == "3");
    CHECK(target.value("SELECT count(*) FROM shardwire.fenced_buckets WHERE bucket = shardwire.bucket_of(" +
                       std::to_string(moved) + "::bigint, " + std::to_string(kBuckets) + ")") == "1");

    for (size_t i = 0; i < reads.size(); ++i) {
      PgResult r = c.exec(reads[i].first);
      REQUIRE_OK(r);
      CHECK_MESSAGE(lines_of(r, reads[i].second) == expected[i], reads[i].first);
    }
    PgResult extended = c.exec_params("SELECT count(*) FROM orders WHERE note <> $1", {"x"});
    REQUIRE_OK(extended);
    CHECK(extended.value() == "20");
    PgResult extended_rows = c.exec_params("SELECT tenant_id, note FROM orders WHERE note <> $1", {"x"});
    REQUIRE_OK(extended_rows);
    CHECK(lines_of(extended_rows, false) == expected[1]);
    for (size_t i = 0; i < copies.size(); ++i)
      CHECK_MESSAGE(copied(c, copies[i]) == expected_copies[i], copies[i]);

    // Forms the owned-rows rewrite cannot express are refused, never answered with the copies.
    PgResult only = c.exec("SELECT count(*) FROM ONLY orders");
    CHECK(only.sqlstate() == "0A000");
    PgResult qualified = c.exec("SELECT public.orders.note FROM public.orders");
    CHECK(qualified.sqlstate() == "0A000");
    // Keyed reads keep their single-shard route and the owner's rows.
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(moved)) == "5");
  }

  TEST_CASE(
      "a real bucket move: keyless counts stay exact through the copy, the cutover and the rollback window") {
    PROXY_ONLY();
    ShardedFixture f(mover_options("120s"));  // the source keeps the moved rows until cleanup
    INFO("proxy log:\n" << f.log_tail(60));
    Moving moving = moving_on_s0(3);
    PgConn app = f.client();
    PgConn s0 = f.setup.shard(0);
    for (int64_t k : moving.keys) seed_orders(s0, k, 200);
    for (int64_t k : {tenant_on(1, kShards, 1), tenant_on(2, kShards, 1)}) {
      PgConn owner = f.setup.shard(shard_of_key(k));
      seed_orders(owner, k, 100);
    }
    const std::string total = "800";
    REQUIRE(app.value("SELECT count(*) FROM orders") == total);

    // A reader counts through the whole move; every answer must be the total.
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0}, wrong{0};
    std::string first_wrong;
    std::thread reader([&] {
      PgConn c = f.client();
      while (!stop) {
        PgResult r = c.exec("SELECT count(*) FROM orders");
        ++reads;
        if (!r.ok() || r.value() != total) {
          if (wrong++ == 0) first_wrong = r.ok() ? r.value() : r.describe();
        }
      }
    });
    // And every shard is watched: no fence says "no rows" while its bucket has rows there.
    FenceInvariantWatch watch(f);
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, moving.buckets);
    std::string last;
    const bool cut = wait_for_state(admin, id, "rollback_window", 60s, &last);
    sleep_ms(200);
    stop = true;
    reader.join();
    const std::string hidden = watch.stop();
    REQUIRE_MESSAGE(cut, "migration " << id << " is " << last);
    CHECK(reads > 0);
    CHECK_MESSAGE(wrong == 0, wrong.load()
                                  << " of " << reads.load() << " counts wrong, first " << first_wrong);
    CHECK_MESSAGE(hidden == "", "a fence said no rows over rows (" << hidden << "), polls " << watch.polls());

    // The source still holds the moved rows (the rollback window), fenced; the target owns them.
    const std::string in_moved = "SELECT count(*) FROM orders WHERE " + in_buckets(moving.buckets);
    CHECK(f.setup.shard(0).value(in_moved) == "600");
    CHECK(f.setup.shard(1).value(in_moved) == "600");
    CHECK(fenced_on(f, 0, moving.buckets).size() == moving.buckets.size());
    CHECK(holds_rows_on(f, 0, moving.buckets) == repeated("t", moving.buckets.size()));
    CHECK(holds_rows_on(f, 1, moving.buckets) == repeated("-", moving.buckets.size()));
    CHECK(app.value("SELECT count(*) FROM orders") == total);
    PgResult rows = app.exec("SELECT tenant_id, note FROM orders");
    REQUIRE_OK(rows);
    CHECK(rows.rows() == 800);
    std::vector<std::string> copy = copied(app, "COPY orders (tenant_id, note) TO STDOUT");
    CHECK(copy.size() == 801);
    CHECK(copy.back() == "tag: COPY 800");
  }

  // The mover's order, taken by hand: publish MIGRATING, wait for the router's acknowledgement,
  // fence the source. A keyless read routed before MIGRATING whose source leg is still waiting for
  // a server (the pool's only one is busy) must not start that leg after the acknowledgement:
  // there it would read the source after the fence while the target does not hold the rows, and
  // count the moving bucket nowhere. The router holds its acknowledgement for such a read and
  // then fails it with 40001; before, it acknowledged at once and the read answered 10 of 15.
  TEST_CASE("a keyless read still waiting for a server fails rather than start after the acknowledgement") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;
    options.proxy.workers = 1;  // one worker: one pool per shard
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail(40));
    const int64_t moved = tenant_on(0, kShards, 1);
    const int64_t stays = tenant_on(0, kShards, moved + 1);
    REQUIRE(bucket_of_key(stays) != bucket_of_key(moved));
    PgConn app = f.client();
    for (int64_t tenant : {moved, tenant_on(1, kShards, 1), tenant_on(2, kShards, 1)}) {
      for (int n = 0; n < 5; ++n)
        REQUIRE_OK(
            app.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'n')"));
    }
    REQUIRE(app.value("SELECT count(*) FROM orders") == "15");

    // Shard 0's only server joins a transaction; the keyless read then waits for it.
    PgConn holder = f.client();
    REQUIRE_OK(holder.exec("BEGIN"));
    REQUIRE(holder.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(stays)) == "0");
    PgConn reader = f.client();
    REQUIRE(reader.send("SELECT count(*) FROM orders"));
    sleep_ms(300);
    REQUIRE(PQconsumeInput(reader.get()) == 1);
    REQUIRE_MESSAGE(PQisBusy(reader.get()) == 1, "the read did not wait for shard 0's server");

    PgConn catalog = f.setup.catalog();
    const std::string bucket = std::to_string(bucket_of_key(moved));
    const std::string version = catalog.value(
        "UPDATE shardwire.buckets SET state = 'MIGRATING' WHERE bucket = " + bucket + " RETURNING version");
    const std::string behind = "SELECT count(*) FROM shardwire.routers WHERE directory_version < " + version;
    REQUIRE_MESSAGE(wait_until([&] { return catalog.value(behind) == "0"; }, 10s, 5ms),
                    "the router never acknowledged version " << version);
    PgConn source = f.setup.shard(0);
    REQUIRE_OK(source.exec("INSERT INTO shardwire.fenced_buckets (bucket, version, fenced_at) VALUES (" +
                           bucket + ", " + version + ", now())"));
    REQUIRE_OK(holder.exec("COMMIT"));  // shard 0's server is free: a waiting leg would start now

    PgResult counted = reader.wait_result(10s);
    CHECK_MESSAGE(counted.sqlstate() == "40001",
                  "the read answered " << (counted.ok() ? counted.value() + " of 15" : counted.describe()));
    CHECK_MESSAGE(counted.describe().find("cutover") != std::string::npos, counted.describe());
    CHECK(reader.value("SELECT 'usable'") == "usable");
  }
}
