// UPDATE and DELETE without a key, through shardwire on 3 real shards with a catalog
// (docs/architecture.md §6.3, "Writes without a key"): every shard writes only the rows of the
// buckets it owns (a copy of another shard's bucket, as a move leaves on its target or source, is
// neither written nor counted, and its fence is never met), the tag sums the shards' counts and
// RETURNING rows come from every shard; the shards commit together by two-phase commit, so an
// error on one shard, or a coordinator killed between the PREPAREs, changes nothing anywhere, and
// one killed after the decision has every shard's part committed by recovery; through a real bucket
// move (copy, cutover, rollback window) a keyless UPDATE loop changes every row exactly once per
// acknowledged UPDATE.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "split_insert_support.h"

using namespace it;
using it::split::shardwire_prepared;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

// Five rows (qty 1..5) for one tenant on each shard, and a second tenant on shard 0.
std::vector<int64_t> seed(const ShardedFixture& f) {
  const std::vector<int64_t> tenants = {tenant_on(0, kShards, 1), tenant_on(1, kShards, 1),
                                        tenant_on(2, kShards, 1),
                                        tenant_on(0, kShards, tenant_on(0, kShards, 1) + 1)};
  PgConn c = f.client();
  for (int64_t tenant : tenants)
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + k(tenant) +
                      ", 'n' || g, g FROM generate_series(1, 5) g"));
  return tenants;
}

// "tenant|note|qty" of every row on shard i (directly, copies included), sorted.
std::vector<std::string> rows_on(const ShardedFixture& f, int shard) {
  PgConn c = f.setup.shard(shard);
  const PgResult r = c.exec("SELECT tenant_id || '|' || note || '|' || qty FROM orders ORDER BY 1");
  REQUIRE_OK(r);
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0));
  return out;
}

// Shard 1 gets a copy of `tenant`'s rows (owned by shard 0), as a move's copy phase writes them.
void copy_onto_shard1(const ShardedFixture& f, int64_t tenant) {
  PgConn target = f.setup.shard(1);
  REQUIRE_OK(mark_fences_holding_rows(target));
  REQUIRE_OK(target.exec("SET session_replication_role = replica"));
  REQUIRE_OK(target.exec("INSERT INTO orders (id, tenant_id, note, qty) SELECT 900000 + g, " + k(tenant) +
                         ", 'copy' || g, 100 FROM generate_series(1, 3) g"));
}

std::vector<std::vector<std::string>> all_rows(const ShardedFixture& f) {
  return {rows_on(f, 0), rows_on(f, 1), rows_on(f, 2)};
}

}  // namespace

TEST_SUITE("keyless_write") {
  TEST_CASE("UPDATE and DELETE without a key: every shard its own rows, tags summed, RETURNING of all") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const std::vector<int64_t> tenants = seed(f);
    copy_onto_shard1(f, tenants[0]);
    PgConn c = f.client();
    PgResult updated = c.exec("UPDATE orders SET qty = qty + 10 WHERE qty >= 4 RETURNING tenant_id, qty");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "UPDATE 8");  // 2 rows of each of the 4 tenants; not the copies
    CHECK(updated.rows() == 8);
    for (const auto& row : updated.data()) CHECK((row.at(1) == "14" || row.at(1) == "15"));
    // The copies on shard 1 are untouched (a write on them would have met the fence: SW001).
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT string_agg(qty::text, ',') FROM orders WHERE tenant_id = " + k(tenants[0])) ==
          "100,100,100");
    // An alias, parameters, no WHERE, the extended protocol.
    PgResult aliased = c.exec_params("UPDATE orders AS o SET note = o.note || $1", {"!"});
    REQUIRE_OK(aliased);
    CHECK(aliased.command_tag() == "UPDATE 20");
    PgResult deleted = c.exec_params("DELETE FROM orders WHERE qty < $1 RETURNING note", {"3"});
    REQUIRE_OK(deleted);
    CHECK(deleted.command_tag() == "DELETE 8");
    CHECK(c.value("SELECT count(*) FROM orders") == "12");
    CHECK(s1.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(tenants[0])) == "3");
    CHECK(s1.value("SELECT count(*) FROM orders WHERE note LIKE 'copy%!'") == "0");
    // A named prepared statement, executed twice; and inside a transaction, rolled back.
    REQUIRE_OK(c.prepare("bump", "UPDATE orders SET qty = qty + $1 WHERE qty > 0 RETURNING qty"));
    for (int i = 0; i < 2; ++i) {
      PgResult bumped = c.exec_prepared("bump", {std::string("1")});
      REQUIRE_OK(bumped);
      CHECK(bumped.command_tag() == "UPDATE 12");
    }
    REQUIRE_OK(c.exec("BEGIN"));
    PgResult in_tx = c.exec_prepared("bump", {std::string("1000")});
    REQUIRE_OK(in_tx);
    CHECK(in_tx.command_tag() == "UPDATE 12");
    CHECK(c.value("SELECT count(*) FROM orders WHERE qty > 1000") == "12");
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(c.value("SELECT count(*) FROM orders WHERE qty > 1000") == "0");
    // The key may be assigned itself; setting it to another value moves the rows (key_move suite).
    REQUIRE_OK(c.exec("UPDATE orders SET tenant_id = tenant_id, qty = qty"));
    PgResult moved = c.exec("UPDATE orders SET tenant_id = " + k(tenants[1]));
    REQUIRE_OK(moved);
    CHECK(moved.command_tag() == "UPDATE 12");
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(tenants[1])) == "12");
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
  }

  TEST_CASE("atomic: a shard's error or a coordinator killed before the decision changes nothing") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    seed(f);
    PgConn c = f.client();
    const std::vector<std::vector<std::string>> before = all_rows(f);
    // Only shard 2 gets a row with qty 0: its division fails there alone.
    PgConn s2 = f.setup.shard(2);
    const std::string zero = s2.value("SELECT tenant_id FROM orders LIMIT 1");
    REQUIRE_OK(c.exec("UPDATE orders SET qty = 0 WHERE tenant_id = " + zero + " AND qty = 1"));
    const std::vector<std::vector<std::string>> with_zero = all_rows(f);
    PgResult failed = c.exec("UPDATE orders SET qty = 100 / qty");
    CHECK(failed.sqlstate() == "22012");
    CHECK(all_rows(f) == with_zero);
    CHECK(shardwire_prepared(f) == 0);

    for (const char* point : {"2pc.between_prepares", "2pc.after_decision"}) {
      CAPTURE(std::string(point));
      const std::vector<std::vector<std::string>> start = all_rows(f);
      const long long sum = std::stoll(f.client().value("SELECT sum(qty) FROM orders"));
      f.proxy->restart({{"SHARDWIRE_FAILPOINT", point}});
      PgConn armed = f.client();
      CHECK_FALSE(armed.exec("UPDATE orders SET qty = qty + 1").ok());  // died with the coordinator
      std::optional<int> status = f.proxy->wait_exit(10s);
      REQUIRE(status.has_value());
      CHECK(WIFSIGNALED(*status));
      f.proxy->restart({});
      REQUIRE(wait_until([&] { return shardwire_prepared(f) == 0; }, 60s, 200ms));
      PgConn after = f.client();
      if (std::string(point) == "2pc.between_prepares") {
        CHECK(all_rows(f) == start);  // no decision: every shard rolled back
      } else {                        // decided: every shard's part committed, each row once
        CHECK(after.value("SELECT count(*) FROM orders") == "20");
        for (int s = 0; s < kShards; ++s) CHECK(rows_on(f, s) != start[static_cast<size_t>(s)]);
        CHECK(after.value("SELECT sum(qty) FROM orders") == std::to_string(sum + 20));
      }
    }
  }

  TEST_CASE("a real bucket move: a keyless UPDATE loop changes every row once per acknowledged UPDATE") {
    PROXY_ONLY();
    ShardedFixture f(mover_options("120s"));  // the source keeps the moved rows until cleanup
    INFO("proxy log:\n" << f.log_tail(60));
    Moving moving = moving_on_s0(3);
    PgConn s0 = f.setup.shard(0);
    for (int64_t key : moving.keys) seed_orders(s0, key, 30);
    for (int64_t key : {tenant_on(1, kShards, 1), tenant_on(2, kShards, 1)}) {
      PgConn owner = f.setup.shard(shard_of_key(key));
      seed_orders(owner, key, 20);
    }
    PgConn app = f.client();
    REQUIRE_OK(app.exec("UPDATE orders SET qty = 0"));
    REQUIRE(app.value("SELECT count(*) FROM orders") == "130");

    std::atomic<bool> stop{false};
    std::atomic<int> acknowledged{0}, refused{0}, wrong{0};
    std::string first_error;
    std::thread writer([&] {
      PgConn c = f.client();
      while (!stop) {
        PgResult r = c.exec("UPDATE orders SET qty = qty + 1");
        if (r.ok()) {
          ++acknowledged;
          if (r.command_tag() != "UPDATE 130") ++wrong;
        } else if (refused++ == 0) {
          first_error = r.describe();
        }
        sleep_ms(10);  // leaves the catch-up room on a busy machine
      }
    });
    PgConn admin = admin_console(f);
    const std::string id = start_move(admin, moving.buckets);
    std::string last;
    const bool cut = wait_for_state(admin, id, "rollback_window", 90s, &last);
    sleep_ms(200);
    stop = true;
    writer.join();
    REQUIRE_MESSAGE(cut, "migration " << id << " is " << last);
    INFO("refused " << refused.load() << ", first: " << first_error);
    CHECK(acknowledged > 0);
    CHECK(wrong == 0);
    // Every row changed exactly once per acknowledged UPDATE; a refused one changed nothing.
    const std::string n = std::to_string(acknowledged.load());
    CHECK(app.value("SELECT count(*) FROM orders WHERE qty = " + n) == "130");
    CHECK(app.value("SELECT count(*) FROM orders") == "130");
    // The source still holds its moved rows (rollback window), fenced and never written after the move.
    const std::string in_moved = "SELECT count(*) FROM orders WHERE " + in_buckets(moving.buckets);
    CHECK(f.setup.shard(1).value(in_moved) == "90");
    CHECK(fenced_on(f, 0, moving.buckets).size() == moving.buckets.size());
    // The source's fenced copies are not written (they would meet its fence: SW001).
    PgResult after = app.exec("UPDATE orders SET qty = qty + 1 RETURNING tenant_id");
    REQUIRE_OK(after);
    CHECK(after.command_tag() == "UPDATE 130");
    CHECK(shardwire_prepared(f) == 0);
  }
}
