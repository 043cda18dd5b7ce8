// The reshard scenario (issue 6): 4096 buckets on 4 shards, a 5th added, REBALANCE moves 20% of
// the buckets (819) while clients insert, update and delete through two shardwire instances, each
// recording what it sent and what it was told; the history checker (harness/reshard_checker.h)
// then proves every acknowledged write is on its bucket's owner exactly once, nothing failed is
// half-present, nothing was written on a source after its flip, and 20% +- 1% of the rows moved.
// reshard_faults_test.cc runs the same scenario under faults.
//
// RESHARD_ROWS_PER_BUCKET (5), RESHARD_CLIENTS (8) and RESHARD_THINK_MS (5, between a client's
// transactions) scale it (tests/bench/reshard.sh).
#include "it_test.h"
#include "reshard_expect.h"

using namespace it;
using namespace it::reshard;

TEST_SUITE("reshard") {
  TEST_CASE("REBALANCE 4 -> 5 shards under a write load through two instances: nothing lost") {
    PROXY_ONLY();
    DeploymentOptions options;
    options.rows_per_bucket = env_int("RESHARD_ROWS_PER_BUCKET", 5);
    Deployment d(options);
    Workload w({env_int("RESHARD_CLIENTS", 8), kInstances, [&](int i) { return d.conninfo(i); }, 1,
                env_int("RESHARD_THINK_MS", 5)});
    MigrationWatch watch(d);

    PgConn admin = d.admin(0);
    PgResult plan = admin.exec("REBALANCE DRY RUN");
    REQUIRE_MESSAGE(plan.ok(), plan.describe());
    int planned = 0;
    for (int i = 0; i < plan.rows(); ++i) {
      CHECK(plan.value(i, 1) == "s4");
      planned += std::stoi(plan.value(i, 2));
    }
    CHECK(plan.rows() == 4);  // one migration per old shard
    CHECK(planned == 819);    // 4096 / 5 = 819.2: s4 gets 819, the old shards keep 820, 819, 819, 819

    // The plan is made on the seed rows alone (the same number in every bucket), so the moved
    // 20% of the buckets hold 20% of the rows; the clients start as soon as REBALANCE answers,
    // before the mover (which looks for new migrations every second) starts copying.
    PgResult started = admin.exec("REBALANCE");
    REQUIRE_MESSAGE(started.ok(), started.describe());
    w.start();
    const double from = w.elapsed_s();
    Report report = expect_nothing_lost(d, w, watch, from, std::chrono::seconds(300));
    CHECK(report.moves.size() == 4);
    for (const auto& [move, n] : report.moves) CHECK(move.substr(move.size() - 2) == "s4");
    // Without faults no client sees an error: writes to a moving bucket wait, they do not fail.
    size_t not_ok = 0;
    for (const Op& op : w.ops()) not_ok += op.outcome != Outcome::Ok;
    CHECK(not_ok == 0);
  }

}  // TEST_SUITE

