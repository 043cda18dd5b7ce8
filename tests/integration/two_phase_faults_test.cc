// Two-phase commit under faults, with real PostgreSQL clusters and the recovery loop every
// shardwire instance runs. For each fault point (common/failpoint.h) a shardwire armed with it
// dies (SIGKILL, its log says the point fired) at that step of a transfer's COMMIT while a second
// instance keeps running transfers; restarted without it, recovery leaves no prepared transaction
// on any shard, the total balance is unchanged, every acknowledged transfer is applied on both
// sides and the one in doubt on both or on neither: on both exactly when the commit decision was
// recorded. A shard restarted after the decision (before its COMMIT PREPARED) still gives the
// client COMMIT, and recovery commits that shard's leg; the catalog stopped before the decision gives the
// client 08007 naming the gid, and once the catalog is back recovery rolls the legs back.
#include <signal.h>
#include <sys/wait.h>

#include <exception>
#include <functional>
#include <thread>

#include "harness/sharded_fixture.h"
#include "it_test.h"

using namespace it;

namespace {

constexpr int kTwoShards = 2;
constexpr int kBalance = 1000;
constexpr int kAmount = 10;

std::string k(int64_t key) { return std::to_string(key); }
long long balance_on(const ShardedFixture& f, int shard, int64_t tenant) {
  PgConn c = f.setup.shard(shard);
  return std::stoll(c.value("SELECT coalesce(sum(qty), -1) FROM orders WHERE tenant_id = " + k(tenant)));
}

// shardwire's prepared transactions (gid prefix) on shard i.
long long prepared_on(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  return std::stoll(
      c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' AND database = "
              "current_database()"));
}

bool recovered(const ShardedFixture& f) {
  return wait_until([&] { return prepared_on(f, 0) == 0 && prepared_on(f, 1) == 0; }, 60s, 200ms);
}

struct Accounts {
  int64_t debited = tenant_on(0, kTwoShards);
  int64_t credited = tenant_on(1, kTwoShards);
};

Accounts open_accounts(const ShardedFixture& f) {
  Accounts accounts;
  PgConn c = f.client();
  for (int64_t tenant : {accounts.debited, accounts.credited})
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(tenant) + ", 'account', " +
                      std::to_string(kBalance) + ")"));
  return accounts;
}

// One transfer in one transaction: the COMMIT's result, or the first statement's that failed (no
// assertion: it also runs on a thread of its own).
PgResult transfer(PgConn& c, const Accounts& accounts) {
  const std::vector<std::string> statements = {"BEGIN",
                                               "UPDATE orders SET qty = qty - " + std::to_string(kAmount) +
                                                   " WHERE tenant_id = " + k(accounts.debited),
                                               "UPDATE orders SET qty = qty + " + std::to_string(kAmount) +
                                                   " WHERE tenant_id = " + k(accounts.credited)};
  for (const std::string& sql : statements) {
    PgResult r = c.exec(sql, 60s);
    if (!r.ok()) return r;
  }
  return c.exec("COMMIT", 60s);
}

// A transfer whose COMMIT stops the proxy at failpoint `point` (armed with ":stop"): while it is
// stopped `while_stopped` runs, then the proxy goes on and the transfer ends. Whether the point
// fired, and the COMMIT's result.
struct StoppedTransfer {
  bool stopped = false;
  PgResult commit;
};
StoppedTransfer transfer_stopped_at(const ShardedFixture& f, const Accounts& accounts,
                                    const std::string& point, const std::function<void()>& while_stopped) {
  StoppedTransfer result;
  PgConn c = f.client();
  std::thread client([&] { result.commit = transfer(c, accounts); });
  std::exception_ptr failed;
  result.stopped = f.proxy->wait_for_log("failpoint " + point + " fired", 30s);
  try {
    if (result.stopped) while_stopped();
  } catch (...) {
    failed = std::current_exception();
  }
  f.proxy->signal(SIGCONT);
  client.join();
  if (failed) std::rethrow_exception(failed);
  return result;
}

PgConn connect_to(const ProxyProcess& proxy) {
  ConnectResult r = connect(proxy.conninfo());
  if (!r.ok) throw std::runtime_error("connect: " + r.error + "\n" + proxy.log_tail());
  return std::move(r.conn);
}

// The balances say `transfers` transfers were applied, each on both sides.
void check_applied(const ShardedFixture& f, const Accounts& accounts, int transfers) {
  const long long debited = balance_on(f, 0, accounts.debited);
  const long long credited = balance_on(f, 1, accounts.credited);
  CHECK(debited + credited == 2 * kBalance);  // none half-applied
  CHECK(debited == kBalance - kAmount * transfers);
  CHECK(credited == kBalance + kAmount * transfers);
}

}  // namespace

TEST_SUITE("two_phase_faults") {
  TEST_CASE("a coordinator killed at each step of two-phase commit: recovery leaves every transfer whole") {
    PROXY_ONLY();
    struct Point {
      const char* name;
      bool decided;  // the commit decision is recorded when it fires: the transfer in doubt commits
    };
    for (Point point : {Point{"2pc.before_prepare", false}, Point{"2pc.between_prepares", false},
                        Point{"2pc.after_decision", true}, Point{"2pc.between_commit_prepared", true}}) {
      CAPTURE(std::string(point.name));
      ShardedOptions options;
      options.shards = kTwoShards;
      ShardedFixture f(options);
      std::unique_ptr<ProxyProcess> other = f.setup.start_proxy();  // never armed
      INFO("armed proxy log:\n" << f.log_tail() << "\nother proxy log:\n" << other->log_tail());
      const Accounts accounts = open_accounts(f);
      f.proxy->restart({{"SHARDWIRE_FAILPOINT", point.name}});

      int acknowledged = 0;
      PgConn steady = connect_to(*other);
      for (int i = 0; i < 3; ++i) {
        PgResult commit = transfer(steady, accounts);
        REQUIRE_OK(commit);
        ++acknowledged;
      }
      PgConn armed = f.client();
      PgResult lost = transfer(armed, accounts);
      CHECK_FALSE(lost.ok());  // the connection died with the coordinator
      std::optional<int> status = f.proxy->wait_exit(10s);
      REQUIRE(status.has_value());
      CHECK(WIFSIGNALED(*status));
      CHECK(WTERMSIG(*status) == SIGKILL);
      CHECK(contains(f.proxy->log(), std::string("failpoint ") + point.name + " fired"));
      // The other instance goes on (its transfers wait until recovery releases the rows the
      // transfer in doubt holds).
      for (int i = 0; i < 3; ++i) {
        PgResult commit = transfer(steady, accounts);
        REQUIRE_OK(commit);
        ++acknowledged;
      }
      f.proxy->restart({});
      REQUIRE(recovered(f));
      check_applied(f, accounts, acknowledged + (point.decided ? 1 : 0));
      PgConn again = f.client();
      REQUIRE_OK(transfer(again, accounts));
      check_applied(f, accounts, acknowledged + (point.decided ? 1 : 0) + 1);
    }
  }

  TEST_CASE("a shard restarted after the decision, before its COMMIT PREPARED: the client gets COMMIT") {
    PROXY_ONLY();
    PgCluster s1_cluster;
    ShardedOptions options;
    options.shards = kTwoShards;
    options.shard_clusters = {nullptr, &s1_cluster};
    options.proxy.env = {{"SHARDWIRE_FAILPOINT", "2pc.after_decision:stop"}};
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const Accounts accounts = open_accounts(f);
    const StoppedTransfer fault = transfer_stopped_at(f, accounts, "2pc.after_decision", [&] {
      // Commit is decided and both legs are prepared; s1 restarts (its prepared transaction
      // survives) and the proxy's server there is gone when the proxy goes on.
      CHECK(prepared_on(f, 0) == 1);
      CHECK(prepared_on(f, 1) == 1);
      s1_cluster.restart_immediate();
    });
    REQUIRE(fault.stopped);
    const PgResult& commit = fault.commit;
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    REQUIRE(recovered(f));
    check_applied(f, accounts, 1);
  }

  TEST_CASE("the catalog down at the decision: the client gets 08007 naming the gid; recovery rolls back") {
    PROXY_ONLY();
    PgCluster catalog_cluster;
    ShardedOptions options;
    options.shards = kTwoShards;
    options.catalog_cluster = &catalog_cluster;
    options.proxy.env = {{"SHARDWIRE_FAILPOINT", "2pc.between_prepares:stop"}};
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const Accounts accounts = open_accounts(f);
    const StoppedTransfer fault = transfer_stopped_at(f, accounts, "2pc.between_prepares", [&] {
      REQUIRE_OK(catalog_cluster.admin().exec("CHECKPOINT"));
      catalog_cluster.stop();
    });
    REQUIRE(fault.stopped);
    const PgResult& commit = fault.commit;
    CHECK(commit.sqlstate() == "08007");
    CHECK(contains(commit.error(), "shardwire_"));
    CHECK(contains(commit.error(), "recovery"));
    CHECK(prepared_on(f, 0) + prepared_on(f, 1) == 2);  // left prepared for recovery
    catalog_cluster.start();
    REQUIRE(recovered(f));
    check_applied(f, accounts, 0);
    PgConn again = f.client();
    REQUIRE_OK(transfer(again, accounts));
    check_applied(f, accounts, 1);
  }
}  // TEST_SUITE
