// The memory bound of a merged read (docs/architecture.md §5.6): a merge holds at most
// `fanout.max_rows_buffered` rows per shard, and a client slower than the shards pushes back
// through the proxy to the shards' sockets, so a merge of 3 × 1 million rows read slowly keeps
// shardwire's RSS near its idle size; a GROUP BY past `fanout.max_groups` fails with 54000 and the
// connection stays usable, unless the shards sort by the group key (then the groups stream).
// The RSS bounds of this suite and of merged_cursors are checked by a release shardwire
// (ctest `integration.memory_bounds`, which scripts/test.sh runs in its release stage).
#include "it_test.h"

#include <poll.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

// The release run reads 3 x 1 M rows and checks the RSS bound; the sanitized run (ASan's
// quarantine hides the bound, below) checks the rows, order and push-back over 3 x 300 000.
int64_t rows_per_shard() { return sanitized_mode() ? 300'000 : 1'000'000; }
int64_t total_rows() { return rows_per_shard() * kShards; }
// The client pauses 1 ms every kRowsPerPause rows: at most ~1 M rows/s, slower than 3 shards.
constexpr int64_t kRowsPerPause = 1'000;
constexpr long kMiB = 1024 * 1024;
// The allowance over the idle proxy's RSS. Each DataRow of the read is ~75 bytes on the wire
// (id, tenant_id, a 40-byte note), so the result is ~225 MB; a proxy that buffered it would pass
// this by far.
constexpr long kAllowance = 64 * kMiB;

// A "VmRSS:"/"VmHWM:" line of /proc/<pid>/status, in bytes; -1 when the process is gone.
long status_bytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size())) * 1024;
  return -1;
}

// What the slow reader saw.
struct ReadOutcome {
  int64_t rows = 0;
  int64_t out_of_place = 0;  // rows whose id is not their position (ids are 0 .. total_rows()-1)
  std::string error;         // the first error, or a timeout
};

// Waits (up to 30 s of silence) until libpq holds a whole result or row.
bool wait_readable(PGconn* conn) {
  while (PQisBusy(conn)) {
    pollfd pfd{PQsocket(conn), POLLIN, 0};
    if (poll(&pfd, 1, 30'000) <= 0 || !PQconsumeInput(conn)) return false;
  }
  return true;
}

// Reads `sql` row by row (libpq single-row mode), pausing 1 ms every kRowsPerPause rows.
ReadOutcome read_slowly(PgConn& conn, const std::string& sql) {
  ReadOutcome out;
  PGconn* pg = conn.get();
  if (!PQsendQuery(pg, sql.c_str()) || !PQsetSingleRowMode(pg)) {
    out.error = PQerrorMessage(pg);
    return out;
  }
  for (;;) {
    if (!wait_readable(pg)) {
      out.error = "no row for 30 s or connection lost: " + std::string(PQerrorMessage(pg));
      return out;
    }
    PGresult* r = PQgetResult(pg);
    if (!r) break;
    if (PQresultStatus(r) == PGRES_SINGLE_TUPLE) {
      if (std::stoll(PQgetvalue(r, 0, 0)) != out.rows) ++out.out_of_place;
      if (++out.rows % kRowsPerPause == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else if (PQresultStatus(r) != PGRES_TUPLES_OK && out.error.empty()) {
      out.error = PQresultErrorMessage(r);
    }
    PQclear(r);
  }
  return out;
}

// On shard i: rows_per_shard() rows with ids i, i+3, i+6, ... over 4 tenants the shard owns, so
// ORDER BY id interleaves every shard's rows and the ids of the merge are 0 .. total_rows()-1.
std::string load_sql(int shard) {
  std::string tenants;
  int64_t from = 1;
  for (int t = 0; t < 4; ++t) {
    from = tenant_on(shard, kShards, from);
    if (t > 0) tenants += ',';
    tenants += std::to_string(from++);
  }
  return "INSERT INTO orders (id, tenant_id, note) SELECT g * " + std::to_string(kShards) + " + " +
         std::to_string(shard) + ", (ARRAY[" + tenants + "]::bigint[])[g % 4 + 1], lpad(g::text, 40, 'x') " +
         "FROM generate_series(0, " + std::to_string(rows_per_shard() - 1) + ") AS g";
}

}  // namespace

TEST_SUITE("merged_memory") {
  TEST_CASE("a merge of 3 x 1 M rows read by a slow client keeps shardwire's RSS bounded") {
    PROXY_ONLY();
    ShardedFixture f;
    {
      std::vector<PgConn> loaders;
      for (int i = 0; i < kShards; ++i) {
        loaders.push_back(f.setup.shard(i));
        REQUIRE(loaders.back().send(load_sql(i)));
      }
      for (auto& loader : loaders) REQUIRE_OK(loader.wait_result(std::chrono::minutes(3)));
    }
    PgConn c = f.client();
    REQUIRE_OK(c.exec("CREATE INDEX orders_id ON orders (id)", std::chrono::minutes(3)));
    for (int i = 0; i < kShards; ++i)
      REQUIRE_OK(f.setup.shard(i).exec("ANALYZE orders", std::chrono::minutes(1)));
    // Warm the merge path, then take the idle size.
    REQUIRE_OK(c.exec("SELECT id, tenant_id, note FROM orders WHERE id < 30000 ORDER BY id"));
    const pid_t pid = f.proxy->pid();
    const long baseline = status_bytes(pid, "VmRSS:");
    REQUIRE(baseline > 0);
    const long bound = baseline + kAllowance;

    // Sampled alongside the read: the proxy's RSS, and whether a shard's backend waited to write
    // to shardwire (wait_event ClientWrite) -- the push-back reached the shards.
    std::atomic<bool> reading{true};
    std::atomic<long> peak_sampled{baseline};
    std::atomic<int> shards_blocked{0};
    std::thread sampler([&] {
      PgConn watch = f.setup.shard(0);  // the shards share one cluster: pg_stat_activity sees all
      while (reading) {
        peak_sampled = std::max(peak_sampled.load(), status_bytes(pid, "VmRSS:"));
        PgResult r = watch.exec(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ClientWrite' AND query LIKE "
            "'%ORDER BY id%' AND pid <> pg_backend_pid()");
        if (r.ok()) shards_blocked = std::max(shards_blocked.load(), std::stoi(r.value(0, 0)));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    const auto started = std::chrono::steady_clock::now();
    ReadOutcome read = read_slowly(c, "SELECT id, tenant_id, note FROM orders ORDER BY id");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    reading = false;
    sampler.join();
    const long high_water = status_bytes(pid, "VmHWM:");

    MESSAGE("baseline RSS " << baseline / kMiB << " MiB, peak sampled " << peak_sampled / kMiB
                            << " MiB, VmHWM " << high_water / kMiB << " MiB, bound " << bound / kMiB
                            << " MiB, " << read.rows << " rows in " << seconds
                            << " s, shard backends seen in "
                            << "ClientWrite: " << shards_blocked.load());
    INFO(f.log_tail());
    CHECK(read.error == "");
    CHECK(read.rows == total_rows());
    CHECK(read.out_of_place == 0);
    CHECK(shards_blocked.load() > 0);
    // The bound is the release allocator's: under ASan every freed buffer waits in the
    // quarantine (and its shadow) before reuse, so the sanitized run checks the read, not the RSS.
    if (!sanitized_mode()) {
      CHECK(peak_sampled.load() < bound);
      CHECK(high_water < bound);  // the kernel's high-water mark: no spike between samples either
    }
    CHECK(c.value("SELECT count(*) FROM orders") == std::to_string(total_rows()));
  }

  TEST_CASE("GROUP BY past fanout.max_groups fails with 54000 unless sorted by its key (streamed)") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.extra_yaml += "fanout:\n  max_groups: 50\n  max_rows_buffered: 4\n";
    ShardedFixture f(options);
    PgConn c = f.client();
    std::set<int64_t> notes, quantities;
    for (int64_t key : spread_keys(120, 5)) {
      const int64_t note = (key % 80 + 80) % 80, qty = (key % 9 + 9) % 9;
      notes.insert(note);
      quantities.insert(qty);
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + std::to_string(key) + ", 'n" +
                        std::to_string(note) + "', " + std::to_string(qty) + ")"));
    }
    REQUIRE(notes.size() > 50);
    PgResult many = c.exec("SELECT note, count(*) FROM orders GROUP BY note");
    INFO(many.describe());
    CHECK(many.sqlstate() == "54000");
    CHECK(many.error().find("fanout.max_groups") != std::string::npos);
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    // A merge through buffers of 4 rows per shard still returns every row, in order.
    PgResult sorted = c.exec("SELECT tenant_id FROM orders ORDER BY tenant_id DESC");
    REQUIRE_OK(sorted);
    CHECK(sorted.rows() == 120);
    for (int r = 1; r < sorted.rows(); ++r)
      CHECK(std::stoll(sorted.value(r - 1)) > std::stoll(sorted.value(r)));
    // Sorted by exactly the group key, the shards' groups stream through the merge one at a time:
    // more groups than fanout.max_groups, every one, in order.
    PgResult streamed = c.exec("SELECT note, count(*) FROM orders GROUP BY note ORDER BY note DESC");
    REQUIRE_OK(streamed);
    CHECK(streamed.rows() == static_cast<int>(notes.size()));
    int64_t streamed_total = 0;
    for (int r = 0; r < streamed.rows(); ++r) {
      streamed_total += std::stoll(streamed.value(r, 1));
      if (r > 0) CHECK(streamed.value(r - 1) > streamed.value(r));
    }
    CHECK(streamed_total == 120);
    PgResult few = c.exec("SELECT qty, count(*) FROM orders GROUP BY qty ORDER BY qty");
    REQUIRE_OK(few);
    CHECK(few.rows() == static_cast<int>(quantities.size()));
    int64_t total = 0;
    for (int r = 0; r < few.rows(); ++r) total += std::stoll(few.value(r, 1));
    CHECK(total == 120);
  }
}
