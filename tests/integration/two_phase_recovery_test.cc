// Two-phase commit decisions and their recovery against real PostgreSQL 15: `shardwire init`
// creates (and restores) shardwire.transactions; catalog::record_commit_decision /
// record_abort_decision on a real catalog (the first decision wins, ON CONFLICT DO NOTHING).
#include "it_test.h"

#include "catalog/pq.h"
#include "catalog/two_phase.h"
#include "harness/sharded_cluster.h"

using namespace it;
using sw::catalog::TwoPhaseDecision;

namespace {

sw::catalog::PgConnPtr catalog_connection(const ShardedSetup& setup) {
  auto conn = sw::catalog::connect(setup.catalog_dsn(), "catalog");
  REQUIRE_MESSAGE(conn.is_ok(), conn.status().message);
  return std::move(*conn);
}

std::string decision_row(PgConn& catalog, const std::string& gid) {
  PgResult r = catalog.exec(
      "SELECT decision || ' ' || shards::text FROM shardwire.transactions WHERE gid = " + std::string("'") +
      gid + "'");
  REQUIRE_MESSAGE(r.ok(), r.describe());
  return r.rows() == 0 ? "" : r.value(0, 0);
}

}  // namespace

TEST_SUITE("two_phase_recovery") {
  TEST_CASE("shardwire init creates shardwire.transactions and restores it on an existing catalog") {
    ShardedSetup setup(shared_cluster());
    setup.init_or_throw();
    PgConn catalog = setup.catalog();
    CHECK(catalog.value("SELECT to_regclass('shardwire.transactions') IS NOT NULL") == "t");
    REQUIRE_OK(catalog.exec("DROP TABLE shardwire.transactions"));
    CHECK(catalog.value("SELECT to_regclass('shardwire.transactions') IS NOT NULL") == "f");
    setup.init_or_throw();  // an existing catalog of an older version: upgraded in place
    CHECK(catalog.value("SELECT to_regclass('shardwire.transactions') IS NOT NULL") == "t");
    PgResult bad = catalog.exec(
        "INSERT INTO shardwire.transactions (gid, shards, decision) VALUES ('shardwire_x_0_1', '{s0}', "
        "'maybe')");
    CHECK(bad.sqlstate() == "23514");
  }

  TEST_CASE("record_commit_decision: the first decision wins; an abort recorded first makes it false") {
    ShardedSetup setup(shared_cluster());
    setup.init_or_throw();
    auto conn = catalog_connection(setup);
    PgConn catalog = setup.catalog();
    // Shard names are config names; the literal must survive quotes, commas and backslashes.
    const std::vector<std::string> shards = {"s0", "s\"1,x", "s\\2 {y}"};

    const std::string committed = "shardwire_00000000000000aa_0_1";
    auto first = sw::catalog::record_commit_decision(conn.get(), committed, shards);
    REQUIRE_MESSAGE(first.is_ok(), first.status().message);
    CHECK(*first);
    CHECK(decision_row(catalog, committed) == "commit {s0,\"s\\\"1,x\",\"s\\\\2 {y}\"}");
    CHECK(catalog.value("SELECT shards[2] || '|' || shards[3] FROM shardwire.transactions WHERE gid = '" +
                        committed + "'") == "s\"1,x|s\\2 {y}");
    // Recovery arriving later reads the commit back instead of overriding it.
    auto late_abort = sw::catalog::record_abort_decision(conn.get(), committed, shards);
    REQUIRE_MESSAGE(late_abort.is_ok(), late_abort.status().message);
    CHECK(*late_abort == TwoPhaseDecision::Commit);
    CHECK(decision_row(catalog, committed).starts_with("commit "));

    const std::string aborted = "shardwire_00000000000000aa_0_2";
    auto abort = sw::catalog::record_abort_decision(conn.get(), aborted, {"s0", "s1"});
    REQUIRE_MESSAGE(abort.is_ok(), abort.status().message);
    CHECK(*abort == TwoPhaseDecision::Abort);
    auto late_commit = sw::catalog::record_commit_decision(conn.get(), aborted, {"s0", "s1"});
    REQUIRE_MESSAGE(late_commit.is_ok(), late_commit.status().message);
    CHECK_FALSE(*late_commit);
    CHECK(decision_row(catalog, aborted) == "abort {s0,s1}");
    // A gid with a quote is a parameter, not SQL text.
    const std::string quoted = "shardwire_'; DROP TABLE shardwire.transactions; --";
    auto odd = sw::catalog::record_commit_decision(conn.get(), quoted, {"s0"});
    REQUIRE_MESSAGE(odd.is_ok(), odd.status().message);
    CHECK(*odd);
    CHECK(catalog.value("SELECT count(*) FROM shardwire.transactions") == "3");
  }

  TEST_CASE("record_commit_decision without the table fails with the server's SQLSTATE and the gid") {
    ShardedSetup setup(shared_cluster());
    setup.init_or_throw();
    PgConn catalog = setup.catalog();
    REQUIRE_OK(catalog.exec("DROP TABLE shardwire.transactions"));
    auto conn = catalog_connection(setup);
    auto r = sw::catalog::record_commit_decision(conn.get(), "shardwire_00000000000000bb_1_7", {"s0", "s1"});
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().sqlstate == "42P01");
    CHECK(contains(r.status().message, "shardwire_00000000000000bb_1_7"));
  }
}
