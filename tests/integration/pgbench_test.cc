// Real pgbench through shardwire in transaction mode: -i, then -M simple / extended / prepared with
// 32 clients on 2 threads, 0 failed transactions, and the TPC-B invariant holds afterwards.
#include <regex>

#include "it_test.h"

using namespace it;

namespace {

struct Bench {
  std::string db = unique_name("bench");
  std::unique_ptr<Target> target;

  // The tables are created directly on PostgreSQL (`pgbench -i` through the proxy is its own case).
  explicit Bench(int pool_size = 20, bool init_through_proxy = false) {
    shared_cluster().create_database(db);
    ProxyOptions o;
    o.dbname = db;
    o.pool_size = pool_size;
    o.query_wait_timeout = "30s";
    target = std::make_unique<Target>(shared_cluster(), o);
    std::string conninfo = init_through_proxy ? target->conninfo() : shared_cluster().conninfo(db);
    CommandResult init = run_command({pgbench(), "-i", "-s", "1", "-q", conninfo}, "", 120s);
    INFO("pgbench -i: " << init.describe());
    INFO("proxy log:\n" << target->log_tail());
    REQUIRE(init.exit_code == 0);
    REQUIRE(contains(init.err, "done in"));
  }
};

long long grab(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stoll(m[1]);
  return -1;
}

void run_mode(const std::string& mode) {
  Bench b;
  const int clients = 32, per_client = 100;
  CommandResult r = run_command({pgbench(), "-M", mode, "-c", std::to_string(clients), "-j", "2", "-t",
                                 std::to_string(per_client), "-n", b.target->conninfo()},
                                "", 300s);
  INFO("pgbench -M " << mode << ": " << r.describe());
  INFO("proxy log:\n" << b.target->log_tail());
  CHECK(r.exit_code == 0);
  long long processed = grab(r.out, R"(number of transactions actually processed: (\d+))");
  long long failed = grab(r.out, R"(number of failed transactions: (\d+))");
  CHECK(processed == clients * per_client);
  CHECK(failed == 0);
  CHECK(contains(r.out, "query mode: " + mode));
  CHECK_FALSE(contains(r.err, "client 0 aborted"));
  CHECK_FALSE(contains(lower(r.err), "error"));

  // Every transaction of pgbench's TPC-B script wrote exactly one history row and moved the
  // same delta on accounts, tellers and branches.
  PgConn admin = shared_cluster().admin(b.db);
  CHECK(admin.value("SELECT count(*) FROM pgbench_history") == std::to_string(clients * per_client));
  std::string deltas = admin.value(
      "SELECT (SELECT coalesce(sum(delta), 0) FROM pgbench_history) = (SELECT sum(abalance) FROM "
      "pgbench_accounts) "
      "AND (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(bbalance) FROM pgbench_branches) "
      "AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(tbalance) FROM pgbench_tellers)");
  CHECK(deltas == "t");
}

}  // namespace

TEST_SUITE("pgbench") {
  TEST_CASE("pgbench -i through the proxy: DDL, COPY of 100 000 rows, VACUUM") {
    Bench b(20, /*init_through_proxy=*/true);
    PgConn admin = shared_cluster().admin(b.db);
    CHECK(admin.value("SELECT count(*) FROM pgbench_accounts") == "100000");
    CHECK(admin.value("SELECT count(*) FROM pgbench_branches") == "1");
    CHECK(admin.value("SELECT count(*) FROM pgbench_tellers") == "10");
  }

  TEST_CASE("pgbench -M simple, 32 clients, transaction mode: 0 failed") { run_mode("simple"); }

  TEST_CASE("pgbench -M extended, 32 clients, transaction mode: 0 failed") { run_mode("extended"); }

  TEST_CASE("pgbench -M prepared, 32 clients, transaction mode: 0 failed") { run_mode("prepared"); }

  TEST_CASE("pgbench -C: a new connection for every transaction") {
    Bench b(10);
    CommandResult r = run_command({pgbench(), "-C", "-S", "-M", "extended", "-c", "8", "-j", "2", "-t", "50",
                                   "-n", b.target->conninfo()},
                                  "", 300s);
    INFO("pgbench -C: " << r.describe());
    INFO("proxy log:\n" << b.target->log_tail());
    CHECK(r.exit_code == 0);
    CHECK(grab(r.out, R"(number of transactions actually processed: (\d+))") == 400);
    CHECK(grab(r.out, R"(number of failed transactions: (\d+))") == 0);
  }

}  // TEST_SUITE
