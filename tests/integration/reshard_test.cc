// The reshard scenario: 4096 buckets on 4 shards, a 5th added by RELOAD alone (no restart; see
// harness/reshard_deployment.h), seed rows spread unevenly over the buckets, and REBALANCE (by
// data) moves a fifth of the rows to s4 while clients insert, update (never the table's
// version_column) and delete through two shardwire instances, each recording what it sent and
// what it was told; the history checker
// (harness/reshard_checker.h) then proves every acknowledged write is on its bucket's owner
// exactly once, nothing failed is half-present, nothing was written on a source after its flip,
// no read missed a write acknowledged before it began (clients also read other clients' pairs,
// mostly through the other instance). The plan moves at most 1.05 times the minimum rows (what
// must leave the shards above the planner's tolerance band or reach those below it), only onto
// the added shard; every shard ends within 5% of the mean number of rows.
// reshard_faults_test.cc runs the same scenario under faults.
//
// RESHARD_ROWS_PER_BUCKET (5), RESHARD_CLIENTS (8) and RESHARD_THINK_MS (5, between a client's
// transactions) scale it (tests/bench/reshard.sh).
//
// The suite reshard_scale (not a ctest suite: tests/bench/reshard.sh runs it) is the seeds'
// scale: 16 shards to 20 (RESHARD_OLD_SHARDS, RESHARD_ADDED_SHARDS), 500 rows per bucket on
// average, with the benchmark's figures (harness/reshard_figures.h).
#include <cmath>
#include <regex>

#include "harness/reshard_figures.h"
#include "it_test.h"
#include "reshard_expect.h"

using namespace it;
using namespace it::reshard;

namespace {

// The scenario, from REBALANCE to the checks; returns the checker's report.
Report rebalance_under_load(Deployment& d, Workload& w, MigrationWatch& watch, std::chrono::seconds timeout) {
  PgConn admin = d.admin(0);
  const PlanFigures planned = expect_plan(d, admin.exec("REBALANCE DRY RUN"));
  // The plan is made on the seed rows alone (the clients start as soon as REBALANCE answers,
  // before the mover, which looks for new migrations every second, starts copying).
  // REBALANCE plans again from the same rows: the same plan.
  const PlanFigures started = expect_plan(d, admin.exec("REBALANCE"));
  CHECK(started.buckets == planned.buckets);
  CHECK(started.rows == planned.rows);
  w.start();
  const double from = w.elapsed_s();
  Report report = expect_nothing_lost(d, w, watch, from, timeout, planned.buckets);
  for (const auto& [move, n] : report.moves) CHECK(d.is_added(move.substr(move.find("->") + 2)));
  // Without faults no client sees an error: writes to a moving bucket wait, they do not fail.
  size_t not_ok = 0;
  for (const Op& op : w.ops()) not_ok += op.outcome != Outcome::Ok;
  CHECK(not_ok == 0);
  // Reads of a moving bucket wait with its writes; none fails.
  size_t reads_failed = 0;
  for (const Read& read : w.reads()) reads_failed += !read.ok;
  CHECK(reads_failed == 0);
  CHECK(report.reads > 100);
  // The updates (qty + 1, held to the acknowledged increments by the checker) left the version
  // column alone: the catch-up applied them although no version grew.
  size_t updates_ok = 0;
  for (const Op& op : w.ops()) updates_ok += op.kind == OpKind::Update && op.outcome == Outcome::Ok;
  CHECK(updates_ok > 100);
  for (int s = 0; s < d.all_shards(); ++s)
    CHECK_MESSAGE(d.setup().shard(s).value("SELECT count(*) FROM orders WHERE row_version <> 1") == "0",
                  "s" << s << " holds rows whose row_version changed");

  // Balanced data: every shard within +-5% of the mean number of rows (bucket counts differ).
  const std::vector<long long> rows = d.rows_per_shard();
  long long total = 0;
  for (long long n : rows) total += n;
  const double mean = static_cast<double>(total) / static_cast<double>(rows.size());
  for (size_t s = 0; s < rows.size(); ++s) {
    const double off = (static_cast<double>(rows[s]) - mean) / mean;
    MESSAGE("s" << s << ": " << rows[s] << " rows (" << 100.0 * off << "% from the mean)");
    CHECK(std::abs(off) <= 0.05);
  }
  return report;
}

DeploymentOptions scenario_options(int old_shards, int added_shards, int rows_per_bucket) {
  DeploymentOptions options;
  options.old_shards = old_shards;
  options.added_shards = added_shards;
  options.rows_per_bucket = rows_per_bucket;
  options.skewed_seed = true;
  options.version_column = true;  // row_version, which the workload's updates never touch
  return options;
}

}  // namespace

TEST_SUITE("reshard") {
  TEST_CASE("REBALANCE 4 -> 5 shards under a write load through two instances: nothing lost") {
    PROXY_ONLY();
    Deployment d(scenario_options(4, 1, env_int("RESHARD_ROWS_PER_BUCKET", 5)));
    Workload w({env_int("RESHARD_CLIENTS", 8), kInstances, [&](int i) { return d.conninfo(i); }, 1,
                env_int("RESHARD_THINK_MS", 5)});
    MigrationWatch watch(d);
    const Report report = rebalance_under_load(d, w, watch, std::chrono::seconds(300));
    CHECK(report.moves.size() == 4);  // one migration per old shard
  }
}  // TEST_SUITE

TEST_SUITE("reshard_scale") {
  TEST_CASE("REBALANCE 16 -> 20 shards at the seeds' scale: the benchmark's figures") {
    PROXY_ONLY();
    DeploymentOptions options =
        scenario_options(env_int("RESHARD_OLD_SHARDS", 16), env_int("RESHARD_ADDED_SHARDS", 4),
                         env_int("RESHARD_ROWS_PER_BUCKET", 500));
    options.copy_rows_per_sec = env_int("RESHARD_COPY_ROWS_PER_SEC", 1000000);
    options.copy_streams = env_int("RESHARD_COPY_STREAMS", 0);
    const auto setup_start = std::chrono::steady_clock::now();
    Deployment d(options);
    MESSAGE("deployment: "
            << d.old_shards() << " shards + " << d.all_shards() - d.old_shards() << " added, "
            << d.seed_rows() << " seed rows, set up in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count() << " s");
    PgConn catalog = d.setup().catalog();
    const long long version_before = directory_version(catalog);
    Workload w({env_int("RESHARD_CLIENTS", 8), kInstances, [&](int i) { return d.conninfo(i); }, 1,
                env_int("RESHARD_THINK_MS", 5)});
    MigrationWatch watch(d);
    const Report report =
        rebalance_under_load(d, w, watch, std::chrono::seconds(env_int("RESHARD_TIMEOUT_S", 1800)));
    const long long version_after = directory_version(catalog);

    const CopyFigures mover = mover_copies(d);
    const CopyFigures pipe = plain_copy_pipe(d, 0, d.old_shards());
    // The shape of a migration's copy: a fifth of an old shard's buckets, by the mover's filter.
    const CopyFigures filtered = plain_copy_pipe(d, 1, d.old_shards(), some_buckets_of(d, 1, 51));
    const CleanupFigures cleanup = cleanups(d);
    double cleanup_total = 0;
    for (double s : cleanup.seconds) cleanup_total += s;
    MESSAGE("copy: " << mover.copies << " copies, " << mover.rows << " rows, " << mover.bytes << " bytes in "
                     << mover.seconds << " s summed: " << mover.rows_per_s() << " rows/s, "
                     << mover.mb_per_s() << " MB/s per copy; all copies within " << mover.wall_seconds
                     << " s: " << mover.wall_rows_per_s() << " rows/s; plain COPY TO | COPY FROM pipe: "
                     << pipe.rows << " rows, " << pipe.bytes << " bytes in " << pipe.seconds
                     << " s: " << pipe.rows_per_s() << " rows/s, " << pipe.mb_per_s()
                     << " MB/s; the same pipe of 51 buckets of s1 by the mover's filter: " << filtered.rows
                     << " rows, " << filtered.bytes << " bytes in " << filtered.seconds
                     << " s: " << filtered.rows_per_s() << " rows/s, " << filtered.mb_per_s() << " MB/s");
    MESSAGE("cleanup (rollback window closed to done), "
            << cleanup.seconds.size() << " migrations: p50 " << percentile(cleanup.seconds, 50) << " s, max "
            << percentile(cleanup.seconds, 100) << " s, sum " << cleanup_total << " s; "
            << cleanup.rows_deleted << " rows deleted from the sources");
    MESSAGE("memory: " << instance_memory(d));
    MESSAGE("directory version: " << version_before << " before, " << version_after << " after");
    CHECK(mover.copies >= static_cast<int>(report.moves.size()));  // a copy that failed is redone
    CHECK(version_after > version_before);
  }
}  // TEST_SUITE
