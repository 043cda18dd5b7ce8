// The reshard scenario: 4096 buckets on 4 shards, a 5th added by RELOAD alone (no restart; see
// harness/reshard_deployment.h), seed rows spread unevenly over the buckets, and REBALANCE (by
// data) moves 20% of the rows to s4 while clients insert, update (never the table's
// version_column) and delete through two shardwire instances, each recording what it sent and
// what it was told; the history checker
// (harness/reshard_checker.h) then proves every acknowledged write is on its bucket's owner
// exactly once, nothing failed is half-present, nothing was written on a source after its flip,
// no read missed a write acknowledged before it began (clients also read other clients' pairs,
// mostly through the other instance), 20% +- 1% of the rows moved, and every shard holds the mean number of
// rows +- 5%. reshard_faults_test.cc runs the same scenario under faults.
//
// RESHARD_ROWS_PER_BUCKET (5), RESHARD_CLIENTS (8) and RESHARD_THINK_MS (5, between a client's
// transactions) scale it (tests/bench/reshard.sh).
#include <cmath>
#include <regex>

#include "it_test.h"
#include "reshard_expect.h"

using namespace it;
using namespace it::reshard;

TEST_SUITE("reshard") {
  TEST_CASE("REBALANCE 4 -> 5 shards under a write load through two instances: nothing lost") {
    PROXY_ONLY();
    DeploymentOptions options;
    options.rows_per_bucket = env_int("RESHARD_ROWS_PER_BUCKET", 5);
    options.skewed_seed = true;
    options.version_column = true;  // row_version, which the workload's updates never touch
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
    const std::string spread = plan.value(0, plan.cols() - 1);
    MESSAGE("REBALANCE DRY RUN: " << planned << " buckets; expected spread " << spread);
    // The spread names each shard's expected rows and its distance from the mean: all within 5%.
    static const std::regex shard_spread(R"((s\d) \d+ buckets \d+ rows \d+ B \(([-+][0-9.]+)%\))");
    int shards_in_spread = 0;
    for (std::sregex_iterator it(spread.begin(), spread.end(), shard_spread), end; it != end; ++it) {
      ++shards_in_spread;
      const std::string shard_name = (*it)[1].str();
      const double off = std::stod((*it)[2].str());
      CHECK_MESSAGE(std::abs(off) <= 5.0,
                    "DRY RUN expects " << shard_name << " " << off << "% from the mean");
    }
    CHECK_MESSAGE(shards_in_spread == kAllShards, "DRY RUN spread: " << spread);

    // The plan is made on the seed rows alone (the clients start as soon as REBALANCE answers,
    // before the mover, which looks for new migrations every second, starts copying), so the
    // moved buckets hold 20% of the rows. REBALANCE plans again from the same rows: the same plan.
    PgResult started = admin.exec("REBALANCE");
    REQUIRE_MESSAGE(started.ok(), started.describe());
    int started_buckets = 0;
    for (int i = 0; i < started.rows(); ++i) started_buckets += std::stoi(started.value(i, 2));
    CHECK(started_buckets == planned);
    w.start();
    const double from = w.elapsed_s();
    Report report =
        expect_nothing_lost(d, w, watch, from, std::chrono::seconds(300), static_cast<size_t>(planned));
    CHECK(report.moves.size() == 4);
    for (const auto& [move, n] : report.moves) CHECK(move.substr(move.size() - 2) == "s4");
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
    for (int s = 0; s < kAllShards; ++s)
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
  }

}  // TEST_SUITE
