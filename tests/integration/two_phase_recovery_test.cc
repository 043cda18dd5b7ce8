// Two-phase commit decisions and their recovery against real PostgreSQL 15: `shardwire init`
// creates (and restores) shardwire.transactions; catalog::record_commit_decision /
// record_abort_decision on a real catalog (the first decision wins, ON CONFLICT DO NOTHING); and
// the recovery loop of real shardwire processes resolving transactions prepared directly on the
// shards with shardwire gids (PREPARE TRANSACTION 'shardwire_...'), as a coordinator that died
// after PREPARE would leave them: commit decided, no decision (presumed abort after the grace),
// foreign gids (never touched), two instances (one resolves), a shard down during rounds.
#include <signal.h>

#include "it_test.h"

#include <memory>

#include "catalog/pq.h"
#include "catalog/two_phase.h"
#include "harness/mover_helpers.h"
#include "harness/sharded_cluster.h"
#include "twopc/gid.h"

using namespace it;
using sw::twopc::TwoPhaseDecision;

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

// A deployment of two shards whose proxies run two-phase recovery, the console (admin/adminpw)
// and /metrics; table `ledger` exists directly on both shards (not sharded: the tests write it
// only inside their own prepared transactions).
struct Deployment {
  int metrics_port = 0;
  ShardedSetup setup;
  explicit Deployment(ShardedOptions options = {})
      : setup(shared_cluster(), with_metrics(console_options(std::move(options)), &metrics_port)) {
    setup.init_or_throw();
    for (int i = 0; i < setup.shards(); ++i) {
      PgConn c = setup.shard(i);
      PgResult r = c.exec("CREATE TABLE ledger (gid text, note text)");
      if (!r.ok()) throw std::runtime_error("CREATE TABLE ledger: " + r.describe());
    }
  }
  static ShardedOptions console_options(ShardedOptions options) {
    options.shards = 2;
    options.proxy.users.push_back({"admin", "adminpw"});
    options.proxy.extra_yaml += "admin:\n  users: [admin]\n";
    return options;
  }
  // Writes a ledger row for `gid` on `shard` and prepares the transaction there under
  // leg_gid(gid, shard), as a coordinator does (the shards share a cluster, where gids are
  // unique cluster-wide). A gid without the shardwire prefix is prepared as it is.
  void prepare(int shard, const std::string& gid) const {
    const std::string prepared_as = leg(shard, gid);
    PgConn c = setup.shard(shard);
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO ledger VALUES ('" + gid + "', 'written on s" + std::to_string(shard) + "')"));
    REQUIRE_OK(c.exec("PREPARE TRANSACTION '" + prepared_as + "'"));
  }
  static std::string leg(int shard, const std::string& gid) {
    return sw::twopc::transaction_gid(gid) == gid && !sw::twopc::gid_instance(gid).empty()
               ? sw::twopc::leg_gid(gid, static_cast<size_t>(shard))
               : gid;
  }
  // 1 when `gid`'s leg is prepared in shard's database, else 0.
  int prepared(int shard, const std::string& gid) const {
    PgConn c = setup.shard(shard);
    return std::stoi(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + leg(shard, gid) +
                             "' AND database = current_database()"));
  }
  // Committed ledger rows of `gid` on `shard`.
  int rows(int shard, const std::string& gid) const {
    PgConn c = setup.shard(shard);
    return std::stoi(c.value("SELECT count(*) FROM ledger WHERE gid = '" + gid + "'"));
  }
  std::string decision(const std::string& gid) const {
    PgConn c = setup.catalog();
    return decision_row(c, gid);
  }
  void decide_commit(const std::string& gid) const {
    auto conn = catalog_connection(setup);
    auto r = sw::catalog::record_commit_decision(conn.get(), gid, {"s0", "s1"});
    REQUIRE_MESSAGE(r.is_ok(), r.status().message);
    REQUIRE(*r);
  }
  PgConn console(const ProxyProcess& proxy) const {
    ConnectResult r = connect(proxy.conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    REQUIRE_MESSAGE(r.ok, r.error);
    return std::move(r.conn);
  }
};

// Rolls back whatever `gids` are still prepared on a shard, so a failing case leaves no locks.
void clean_prepared(const Deployment& d, const std::vector<std::string>& gids) {
  for (int i = 0; i < d.setup.shards(); ++i) {
    if (!d.setup.shard_cluster(i).running()) continue;
    PgConn c = d.setup.shard(i);
    for (const auto& gid : gids) (void)c.exec("ROLLBACK PREPARED '" + Deployment::leg(i, gid) + "'");
  }
}

std::string gid_for(const std::string& label) {
  static int seq = 0;
  return "shardwire_00000000000000" + label + "_0_" + std::to_string(++seq);
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
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

  TEST_CASE("a commit decision: recovery commits every leg, then forgets the decision") {
    Deployment d;
    const std::string gid = gid_for("a1");
    d.prepare(0, gid);
    d.prepare(1, gid);
    d.decide_commit(gid);
    // The fault: a coordinator that decided commit and died before COMMIT PREPARED.
    REQUIRE(d.prepared(0, gid) == 1);
    REQUIRE(d.prepared(1, gid) == 1);
    REQUIRE(d.rows(0, gid) == 0);
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    CHECK(wait_until([&] { return d.prepared(0, gid) + d.prepared(1, gid) == 0; }, 15s));
    CHECK(d.rows(0, gid) == 1);
    CHECK(d.rows(1, gid) == 1);
    CHECK(proxy->wait_for_log("COMMIT PREPARED '" + gid + "_0' on shard s0 (decision commit)", 5s));
    CHECK(proxy->wait_for_log("COMMIT PREPARED '" + gid + "_1' on shard s1 (decision commit)", 5s));
    // Every shard reachable and none holds the gid: the decision row goes.
    CHECK(wait_until([&] { return d.decision(gid).empty(); }, 10s));
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_recovered_total{decision=\"commit\"}") == 2);
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_recovered_total{decision=\"abort\"}") == 0);
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_in_doubt") == 0);
    clean_prepared(d, {gid});
  }

  TEST_CASE(
      "no decision: left alone during the grace period, then abort recorded and every leg rolled back") {
    Deployment d;
    const std::string gid = gid_for("b1");
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    REQUIRE(proxy->wait_for_log("this instance resolves in-doubt transactions", 10s));
    d.prepare(0, gid);
    d.prepare(1, gid);
    // While younger than the grace (5 s, measured on the shard), nothing decides it.
    bool seen_young = false;
    for (;;) {
      PgConn c = d.setup.shard(0);
      PgResult r = c.exec(
          "SELECT count(*), coalesce(max(extract(epoch FROM now() - prepared)), 99) FROM "
          "pg_prepared_xacts WHERE gid = '" +
          Deployment::leg(0, gid) + "'");
      REQUIRE_OK(r);
      if (std::stod(r.value(0, 1)) >= 4.0) break;
      seen_young = true;
      CHECK(r.value(0, 0) == "1");
      CHECK(d.decision(gid).empty());
      sleep_ms(250);
    }
    CHECK(seen_young);
    CHECK(wait_until([&] { return d.prepared(0, gid) + d.prepared(1, gid) == 0; }, 15s));
    CHECK(d.rows(0, gid) == 0);
    CHECK(d.rows(1, gid) == 0);
    // The abort stays recorded (a stalled coordinator must still find it) with the legs' shards.
    CHECK(d.decision(gid) == "abort {s0,s1}");
    CHECK(proxy->wait_for_log("'" + gid + "' prepared without a decision for over 5s: abort recorded", 5s));
    CHECK(proxy->wait_for_log("ROLLBACK PREPARED '" + gid + "_1' on shard s1 (decision abort)", 5s));
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_recovered_total{decision=\"abort\"}") == 2);
    // A coordinator arriving now finds the abort: its commit is refused.
    auto conn = catalog_connection(d.setup);
    auto late = sw::catalog::record_commit_decision(conn.get(), gid, {"s0", "s1"});
    REQUIRE(late.is_ok());
    CHECK_FALSE(*late);
    clean_prepared(d, {gid});
  }

  TEST_CASE("gids without the shardwire_ prefix are never touched, however old") {
    Deployment d;
    const std::vector<std::string> foreign = {"app_tx_" + unique_name("g"), "shardwire", "Shardwire_x_0_1",
                                              "shardwirex_0000000000000000_0_1"};
    const std::string witness = gid_for("c1");  // proves rounds ran past the grace
    for (const auto& gid : foreign) d.prepare(1, gid);
    d.prepare(1, witness);
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    CHECK(wait_until([&] { return d.prepared(1, witness) == 0; }, 20s));
    sleep_ms(2500);  // two more rounds
    for (const auto& gid : foreign) {
      CAPTURE(gid);
      CHECK(d.prepared(1, gid) == 1);
      CHECK(d.decision(gid).empty());
      CHECK(occurrences(proxy->log(), "'" + gid + "'") == 0);
    }
    clean_prepared(d, foreign);
    clean_prepared(d, {witness});
  }

  TEST_CASE("two instances: the advisory lock lets one resolve; the other takes over when it stops") {
    Deployment d;
    auto first = d.setup.start_proxy();
    REQUIRE(first->wait_for_log("this instance resolves in-doubt transactions", 10s));
    // The second instance: the same deployment, /metrics on a port of its own.
    ProxyOptions second_options = d.setup.proxy_options();
    const std::string first_metrics = "127.0.0.1:" + std::to_string(d.metrics_port);
    const size_t at = second_options.extra_yaml.find(first_metrics);
    REQUIRE(at != std::string::npos);
    second_options.extra_yaml.replace(at, first_metrics.size(), "127.0.0.1:" + std::to_string(free_port()));
    auto second = std::make_unique<ProxyProcess>(d.setup.cluster().port(), second_options);
    INFO("first log:\n" << first->log_tail(40) << "\nsecond log:\n" << second->log_tail(40));
    std::vector<std::string> gids;
    for (int i = 0; i < 3; ++i) {
      gids.push_back(gid_for("d1"));
      d.prepare(0, gids.back());
      d.prepare(1, gids.back());
      d.decide_commit(gids.back());
    }
    for (const auto& gid : gids)
      CHECK(wait_until([&] { return d.prepared(0, gid) + d.prepared(1, gid) == 0; }, 15s));
    sleep_ms(1500);  // the second instance had rounds too
    CHECK(occurrences(first->log(), "COMMIT PREPARED 'shardwire_") == 6);
    CHECK(occurrences(second->log(), "COMMIT PREPARED 'shardwire_") == 0);
    CHECK(occurrences(second->log(), "this instance resolves") == 0);
    // Both serve clients meanwhile.
    for (ProxyProcess* p : {first.get(), second.get()}) {
      ConnectResult c = connect(p->conninfo());
      REQUIRE_MESSAGE(c.ok, c.error);
      CHECK(c.conn.value("SELECT 1") == "1");
    }
    // The resolver stops: its session (and lock) ends, the second takes over.
    first->signal(SIGTERM);
    REQUIRE(first->wait_exit(15s).has_value());
    REQUIRE(second->wait_for_log("this instance resolves in-doubt transactions", 10s));
    const std::string later = gid_for("d2");
    d.prepare(1, later);
    d.decide_commit(later);
    CHECK(wait_until([&] { return d.prepared(1, later) == 0; }, 10s));
    CHECK(d.rows(1, later) == 1);
    CHECK(second->wait_for_log("COMMIT PREPARED '" + later + "_1' on shard s1", 5s));
    gids.push_back(later);
    clean_prepared(d, gids);
  }

  TEST_CASE(
      "a shard down: its legs wait, decisions are kept, the next round after its restart resolves them") {
    PgCluster s1_cluster;
    ShardedOptions options;
    options.shard_clusters = {nullptr, &s1_cluster};
    Deployment d(options);
    const std::string gid = gid_for("e1");
    d.prepare(0, gid);
    d.prepare(1, gid);
    d.decide_commit(gid);
    s1_cluster.stop();  // the fault: s1 unreachable (its prepared transaction survives)
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    // The reachable leg is resolved; the decision row stays while s1 cannot be read.
    CHECK(wait_until([&] { return d.prepared(0, gid) == 0; }, 15s));
    CHECK(d.rows(0, gid) == 1);
    CHECK(proxy->wait_for_log("two-phase recovery: shard s1 unreachable", 5s));
    sleep_ms(3000);  // three more rounds with s1 down
    CHECK(d.decision(gid) == "commit {s0,s1}");
    CHECK(occurrences(proxy->log(), "two-phase recovery: shard s1 unreachable") == 1);  // once per outage
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_recovered_total{decision=\"commit\"}") == 1);
    s1_cluster.start();
    CHECK(wait_until([&] { return d.prepared(1, gid) == 0; }, 15s));
    CHECK(d.rows(1, gid) == 1);
    CHECK(proxy->wait_for_log("two-phase recovery: shard s1 reachable again", 5s));
    CHECK(wait_until([&] { return d.decision(gid).empty(); }, 10s));
    CHECK(metric_value(d.metrics_port, "shardwire_two_phase_recovered_total{decision=\"commit\"}") == 2);
    clean_prepared(d, {gid});
  }

  TEST_CASE("SHOW TRANSACTIONS lists a real in-doubt transaction until recovery resolves it") {
    Deployment d;
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    REQUIRE(proxy->wait_for_log("this instance resolves in-doubt transactions", 10s));
    const std::string gid = "shardwire_0123456789abcdef_1_77";
    d.prepare(0, gid);
    d.prepare(1, gid);
    PgConn console = d.console(*proxy);
    PgResult shown = console.exec("SHOW TRANSACTIONS");
    REQUIRE_OK(shown);
    REQUIRE(shown.rows() == 2);
    for (int row = 0; row < 2; ++row) {
      CHECK(shown.value(row, 0) == Deployment::leg(row, gid));
      CHECK(shown.value(row, 1) == 's' + std::to_string(row));
      CHECK_FALSE(shown.value(row, 2).empty());
      CHECK(std::stod(shown.value(row, 3)) < 5.0);
      CHECK(shown.value(row, 4) == "none");
      CHECK(shown.value(row, 5) == "0123456789abcdef");
    }
    CHECK(wait_until([&] { return console.exec("SHOW TRANSACTIONS").rows() == 0; }, 15s));
    CHECK(d.decision(gid) == "abort {s0,s1}");
    clean_prepared(d, {gid});
  }

  TEST_CASE("a catalog without shardwire.transactions: logged once with the fix, resolved after init") {
    Deployment d;
    PgConn catalog = d.setup.catalog();
    REQUIRE_OK(
        catalog.exec("DROP TABLE shardwire.transactions"));  // the fault: a catalog of an older version
    auto proxy = d.setup.start_proxy();
    INFO("proxy log:\n" << proxy->log_tail(60));
    const std::string warning = "run shardwire init to add shardwire.transactions";
    REQUIRE(proxy->wait_for_log(warning, 10s));
    sleep_ms(2500);  // more rounds meet the same error
    CHECK(occurrences(proxy->log(), warning) == 1);
    ConnectResult c = connect(proxy->conninfo());
    REQUIRE_MESSAGE(c.ok, c.error);
    CHECK(c.conn.value("SELECT 1") == "1");
    d.setup.init_or_throw();
    const std::string gid = gid_for("f1");
    d.prepare(0, gid);
    d.prepare(1, gid);
    d.decide_commit(gid);
    CHECK(wait_until([&] { return d.prepared(0, gid) + d.prepared(1, gid) == 0; }, 15s));
    CHECK(d.rows(1, gid) == 1);
    CHECK(proxy->wait_for_log("two-phase recovery: catalog reachable again", 5s));
    clean_prepared(d, {gid});
  }
}
