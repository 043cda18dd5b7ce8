// An UPDATE that sets the key of a sharded table to a value another shard owns, through shardwire
// on 3 real shards with a catalog (docs/architecture.md §6.3, "Updates that move rows"): the rows
// leave their old shard and arrive on the new key's owner, rows whose new key stays on their shard
// are updated in place, the tag counts every row updated and RETURNING gives the new rows, in
// both pool modes; inside BEGIN ... ROLLBACK nothing moves; an INSERT refused on the new owner
// (unique violation) leaves the old shard's rows in place (the shards commit together).
#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "split_insert_support.h"

using namespace it;
using it::split::shardwire_prepared;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

struct Tenants {
  int64_t a0;   // on shard 0
  int64_t a0b;  // another on shard 0
  int64_t b1;   // on shard 1
  int64_t c2;   // on shard 2
};

// Three rows (qty 1..3, notes n1..n3) for a0, b1 and c2.
Tenants seed(const ShardedFixture& f) {
  const int64_t a0 = tenant_on(0, kShards, 1);
  const Tenants t{a0, tenant_on(0, kShards, a0 + 1), tenant_on(1, kShards, 1), tenant_on(2, kShards, 1)};
  PgConn c = f.client();
  for (int64_t tenant : {t.a0, t.b1, t.c2})
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) SELECT " + k(tenant) +
                      ", 'n' || g, g FROM generate_series(1, 3) g"));
  return t;
}

std::vector<std::vector<std::string>> all_rows(const ShardedFixture& f) {
  return {f.rows_on(0), f.rows_on(1), f.rows_on(2)};
}

void check_every_row_on_its_owner(const ShardedFixture& f) {
  for (int s = 0; s < kShards; ++s) CHECK(f.misplaced_on(s) == 0);
}

void check_clean(const ShardedFixture& f) {
  CHECK(shardwire_prepared(f) == 0);
  for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
}

void moves_rows(const ShardedOptions& options) {
  ShardedFixture f(options);
  INFO("proxy log:\n" << f.log_tail());
  const Tenants t = seed(f);
  PgConn c = f.client();
  // With the key: two of a0's rows go to shard 1, SET evaluated on the old rows.
  PgResult moved =
      c.exec("UPDATE orders SET tenant_id = " + k(t.b1) + ", qty = qty * 10 WHERE tenant_id = " + k(t.a0) +
             " AND qty <= 2 RETURNING tenant_id, note, qty");
  REQUIRE_OK(moved);
  CHECK(moved.command_tag() == "UPDATE 2");
  REQUIRE(moved.rows() == 2);
  CHECK(moved.cols() == 3);
  std::vector<std::string> returned;
  for (const auto& row : moved.data()) returned.push_back(row.at(0) + "|" + row.at(1) + "|" + row.at(2));
  std::sort(returned.begin(), returned.end());
  CHECK(returned == std::vector<std::string>{k(t.b1) + "|n1|10", k(t.b1) + "|n2|20"});
  CHECK(f.rows_on(0) == std::vector<std::string>{row_of(t.a0, "n3")});
  CHECK(f.rows_on(1, "tenant_id = " + k(t.b1)).size() == 5);
  CHECK(c.value("SELECT sum(qty) FROM orders WHERE tenant_id = " + k(t.b1)) == "36");
  // The new key on the same shard: updated in place.
  PgResult same = c.exec("UPDATE orders SET tenant_id = " + k(t.a0b) + " WHERE tenant_id = " + k(t.a0));
  REQUIRE_OK(same);
  CHECK(same.command_tag() == "UPDATE 1");
  CHECK(f.rows_on(0) == std::vector<std::string>{row_of(t.a0b, "n3")});
  // Without the key and without RETURNING: rows of every shard, some moving, some not.
  PgResult keyless = c.exec("UPDATE orders SET tenant_id = " + k(t.c2) + " WHERE qty = 3");
  REQUIRE_OK(keyless);
  CHECK(keyless.command_tag() == "UPDATE 3");
  CHECK(keyless.cols() == 0);
  CHECK(f.rows_on(2, "qty = 3").size() == 3);
  // To an expression of the old row: each row to its own new owner.
  PgResult shifted = c.exec("UPDATE orders SET tenant_id = tenant_id + 1000 RETURNING tenant_id");
  REQUIRE_OK(shifted);
  CHECK(shifted.command_tag() == "UPDATE 9");
  CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id > 1000") == "9");
  check_every_row_on_its_owner(f);
  check_clean(f);
}

}  // namespace

TEST_SUITE("key_move") {
  TEST_CASE("rows move to the new key's shard: counts, RETURNING, in place when they stay") {
    PROXY_ONLY();
    SUBCASE("transaction pooling") { moves_rows(ShardedOptions{}); }
    SUBCASE("session pooling") { moves_rows(session_pooling()); }
  }

  TEST_CASE("in a transaction block the move is the transaction's; ROLLBACK moves nothing") {
    PROXY_ONLY();
    for (const ShardedOptions& options : {ShardedOptions{}, session_pooling()}) {
      CAPTURE(options.proxy.pool_mode);
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const Tenants t = seed(f);
      const auto before = all_rows(f);
      PgConn c = f.client();
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b1)));
      PgResult moved = c.exec("UPDATE orders SET tenant_id = " + k(t.b1) + " WHERE tenant_id = " + k(t.a0));
      REQUIRE_OK(moved);
      CHECK(moved.command_tag() == "UPDATE 3");
      CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b1)) == "6");
      CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a0)) == "0");
      REQUIRE_OK(c.exec("ROLLBACK"));
      CHECK(all_rows(f) == before);
      // Committed: moved.
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec("UPDATE orders SET tenant_id = " + k(t.b1) + " WHERE tenant_id = " + k(t.a0)));
      REQUIRE_OK(c.exec("COMMIT"));
      CHECK(f.rows_on(0).empty());
      CHECK(f.rows_on(1).size() == 6);
      check_every_row_on_its_owner(f);
      check_clean(f);
    }
  }

  TEST_CASE("atomic: an INSERT refused on the new owner deletes nothing on the old one") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t = seed(f);
    // Shard 1 already holds (b1, id of a0's first row): the move's INSERT there violates the key.
    PgConn s0 = f.setup.shard(0);
    const std::string id = s0.value("SELECT min(id) FROM orders WHERE tenant_id = " + k(t.a0));
    PgConn s1 = f.setup.shard(1);
    REQUIRE_OK(s1.exec("INSERT INTO orders (id, tenant_id, note, qty) VALUES (" + id + ", " + k(t.b1) +
                       ", 'taken', 0)"));
    const auto before = all_rows(f);
    PgConn c = f.client();
    PgResult failed = c.exec("UPDATE orders SET tenant_id = " + k(t.b1) + " WHERE tenant_id = " + k(t.a0));
    CHECK(failed.sqlstate() == "23505");
    CHECK(failed.error().find("shard") != std::string::npos);
    CHECK(all_rows(f) == before);
    // In a transaction block the failure aborts the client's transaction, as PostgreSQL's would.
    REQUIRE_OK(c.exec("BEGIN"));
    CHECK(c.exec("UPDATE orders SET tenant_id = " + k(t.b1) + " WHERE tenant_id = " + k(t.a0)).sqlstate() ==
          "23505");
    CHECK(c.exec("SELECT 1").sqlstate() == "25P02");
    REQUIRE_OK(c.exec("ROLLBACK"));
    CHECK(all_rows(f) == before);
    check_clean(f);
  }

  TEST_CASE("extended protocol: Bind values move the rows, text and binary, unnamed, prepared, in BEGIN") {
    PROXY_ONLY();
    for (const ShardedOptions& options : {ShardedOptions{}, session_pooling()}) {
      CAPTURE(options.proxy.pool_mode);
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const Tenants t = seed(f);
      PgConn c = f.client();
      // As ORMs send it, unnamed, text parameters, RETURNING described: a0's qty-1 row to shard 1.
      PgResult moved = c.exec_params(
          "UPDATE orders SET tenant_id = $1 WHERE tenant_id = $2 AND qty = $3 RETURNING tenant_id, note, qty",
          {k(t.b1), k(t.a0), "1"});
      REQUIRE_OK(moved);
      CHECK(moved.command_tag() == "UPDATE 1");
      CHECK(moved.names() == std::vector<std::string>{"tenant_id", "note", "qty"});
      REQUIRE(moved.rows() == 1);
      CHECK(moved.data().front() == std::vector<std::string>{k(t.b1), "n1", "1"});
      CHECK(f.rows_on(0).size() == 2);
      CHECK(f.rows_on(1, "tenant_id = " + k(t.b1)).size() == 4);
      // Prepared, two SET items (the note's parameter typed by its column), no RETURNING.
      REQUIRE_OK(c.prepare("move", "UPDATE orders SET note = $2, tenant_id = $1 WHERE tenant_id = $3"));
      PgResult prepared = c.exec_prepared("move", {k(t.c2), "moved", k(t.a0)});
      REQUIRE_OK(prepared);
      CHECK(prepared.command_tag() == "UPDATE 2");
      CHECK(prepared.cols() == 0);
      CHECK(f.rows_on(0).empty());
      CHECK(f.rows_on(2, "note = 'moved'").size() == 2);
      // Binary key parameters of no declared type, as int8: c2's rows back to a0 (shard 0).
      PgResult binary =
          exec_params_typed(c, "UPDATE orders SET tenant_id = $1 WHERE tenant_id = $2 RETURNING id",
                            {be_int8(t.a0), be_int8(t.c2)}, {0, 0}, {1, 1});
      REQUIRE_OK(binary);
      CHECK(binary.command_tag() == "UPDATE 5");
      CHECK(binary.rows() == 5);
      CHECK(f.rows_on(0).size() == 5);
      CHECK(f.rows_on(2).empty());
      // In a transaction block the move is the transaction's: rolled back, then committed.
      const auto before = all_rows(f);
      const std::string move = "UPDATE orders SET tenant_id = $1 WHERE tenant_id = $2";
      REQUIRE_OK(c.exec("BEGIN"));
      PgResult in_block = c.exec_params(move, {k(t.b1), k(t.a0)});
      REQUIRE_OK(in_block);
      CHECK(in_block.command_tag() == "UPDATE 5");
      CHECK(c.exec_params("SELECT count(*) FROM orders WHERE tenant_id = $1", {k(t.b1)}).value() == "9");
      REQUIRE_OK(c.exec("ROLLBACK"));
      CHECK(all_rows(f) == before);
      REQUIRE_OK(c.exec("BEGIN"));
      REQUIRE_OK(c.exec_params(move, {k(t.b1), k(t.a0)}));
      REQUIRE_OK(c.exec("COMMIT"));
      CHECK(f.rows_on(0).empty());
      CHECK(f.rows_on(1).size() == 9);
      check_every_row_on_its_owner(f);
      check_clean(f);
    }
  }

  TEST_CASE("psycopg 3 and asyncpg: moves by Bind values; RETURNING described as PostgreSQL does") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t = seed(f);
    const std::string url =
        "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
    const std::string script = std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/python/key_move_check.py";
    CommandResult r =
        run_command({"/usr/bin/python3", script, url, f.setup.shard_cluster(0).conninfo(f.setup.shard_db(0)),
                     k(t.a0) + "," + k(t.b1) + "," + k(t.c2)},
                    "", std::chrono::seconds(60));
    INFO(r.describe());
    CHECK(r.exit_code == 0);
    const std::string a = k(t.a0), b = k(t.b1), c = k(t.c2);
    CHECK(r.out == "text_rowcount=1\ntext_rows=[(" + b + ", 'n1', 1)]\ntext_description=True\n" +
                       "binary_rowcount=2\nbinary_rows=[(" + c + ", 'n1', 1), (" + c + ", 'n1', 1)]\n" +
                       "binary_description=True\nprepared_rowcount=1\nprepared_moved=1\n" + "simple_rows=[(" +
                       b + ", 'n3', 3)]\nsimple_description=True\n" +
                       "in_transaction=0\nrolled_back=3\ncommitted_rowcount=3\ncommitted=6\n" +
                       "asyncpg_fetch=[(" + a + ", 'n1', 1), (" + a + ", 'n1', 1), (" + a + ", 'n1', 1)]\n" +
                       "asyncpg_execute=UPDATE 3\nasyncpg_left=3\ndone\n");
    check_every_row_on_its_owner(f);
    check_clean(f);
  }
}
