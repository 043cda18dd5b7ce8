// An UPDATE that moves rows, in the forms beyond `SET key = expression`, through shardwire on 3
// real shards with a catalog (docs/architecture.md §6.3, "Updates that move rows"): FROM a
// reference table and FROM a co-located table joined on the key (several of its rows per target
// row: each row moved once), every row on the owner of its new key (checked on each shard), a
// unique violation on the new owner moving nothing; and a key-moving UPDATE ... RETURNING under
// Execute row limits (extended protocol, raw messages) answered message for message as plain
// PostgreSQL answers the same UPDATE (rows, PortalSuspended, later Executes of the batch, each
// Execute's own count), every row moved whatever the limit; inside BEGIN the portal's later
// Executes after the Sync continue it, as PostgreSQL's.
#include <algorithm>

#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "merged_transactions_support.h"

using namespace it;
using it::merged_txn::kinds;
using it::merged_txn::raw_batch;
using it::split::shardwire_prepared;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

ShardedOptions with_plans_and_moves() {
  ShardedOptions options;
  options.reference_tables = "[plans]";
  options.tables_yaml += "    - name: moves\n      key: tenant_id\n      type: bigint\n";
  return options;
}

// Three rows (qty 1..3, notes n1..n3) of each tenant.
void seed(const ShardedFixture& f, const std::vector<int64_t>& tenants) {
  PgConn c = f.client();
  for (int64_t tenant : tenants)
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(tenant) + ", 'n1', 1), (" +
                      k(tenant) + ", 'n2', 2), (" + k(tenant) + ", 'n3', 3)"));
}

std::vector<std::vector<std::string>> all_rows(const ShardedFixture& f) {
  return {f.rows_on(0), f.rows_on(1), f.rows_on(2)};
}

void check_placed_and_clean(const ShardedFixture& f) {
  for (int s = 0; s < kShards; ++s) {
    CHECK(f.misplaced_on(s) == 0);
    CHECK(f.idle_in_transaction(s) == 0);
  }
  CHECK(shardwire_prepared(f) == 0);
}

// Parse, Bind (unnamed portal, text results), Describe portal, an Execute per row limit, Sync.
std::string limited_batch(const std::string& sql, const std::vector<uint32_t>& limits) {
  std::string out = wire::message('P', std::string(1, '\0') + sql + std::string(3, '\0'));
  out += wire::message('B', std::string(2, '\0') + std::string(6, '\0'));
  out += wire::message('D', std::string("P") + std::string(1, '\0'));
  for (uint32_t limit : limits) out += wire::message('E', std::string(1, '\0') + wire::be32(limit));
  out += wire::message('S', "");
  return out;
}

// The answer's message kinds with each CommandComplete's tag, and its DataRows sorted (the
// shards' rows come in no defined order, as PostgreSQL's own UPDATE gives them).
std::string described(const std::vector<wire::Message>& answer) {
  std::string out;
  std::vector<std::string> rows;
  for (const wire::Message& m : answer) {
    out += m.type;
    if (m.type == 'C') out += "(" + m.body.substr(0, m.body.size() - 1) + ")";
    if (m.type == 'D') rows.push_back(m.body);
  }
  std::sort(rows.begin(), rows.end());
  return out + " rows " + std::to_string(rows.size());
}

}  // namespace

TEST_SUITE("key_move_forms") {
  TEST_CASE("UPDATE ... FROM a reference table or a co-located table: rows on their new owners, atomic") {
    PROXY_ONLY();
    ShardedFixture f(with_plans_and_moves());
    INFO("proxy log:\n" << f.log_tail());
    const int64_t a0 = tenant_on(0, kShards, 1), a0b = tenant_on(0, kShards, a0 + 1);
    const int64_t b1 = tenant_on(1, kShards, 1), c2 = tenant_on(2, kShards, 1);
    seed(f, {a0, b1});
    PgConn c = f.client();
    REQUIRE_OK(c.exec("CREATE TABLE plans (qty integer PRIMARY KEY, dest bigint NOT NULL)"));
    REQUIRE_OK(
        c.exec("INSERT INTO plans VALUES (1, " + k(b1) + "), (2, " + k(c2) + "), (3, " + k(a0b) + ")"));
    REQUIRE_OK(
        c.exec("CREATE TABLE moves (tenant_id bigint NOT NULL, seq integer NOT NULL, dest bigint, "
               "PRIMARY KEY (tenant_id, seq))"));
    // A reference table: each of a0's rows to the tenant its qty's plan names, SET reading the plan.
    PgResult planned = c.exec(
        "UPDATE orders o SET tenant_id = p.dest, note = o.note || '@' || p.qty FROM plans p "
        "WHERE p.qty = o.qty AND o.tenant_id = " +
        k(a0));
    REQUIRE_OK(planned);
    CHECK(planned.command_tag() == "UPDATE 3");
    CHECK(f.rows_on(0) == std::vector<std::string>{k(a0b) + "|n3@3"});
    CHECK(f.rows_on(1, "note LIKE '%@%'") == std::vector<std::string>{k(b1) + "|n1@1"});
    CHECK(f.rows_on(2) == std::vector<std::string>{k(c2) + "|n2@2"});
    // A co-located table joined on the key, two of its rows per target row: each row moves once.
    REQUIRE_OK(c.exec("INSERT INTO moves (tenant_id, seq, dest) VALUES (" + k(b1) + ", 1, " + k(c2) + "), (" +
                      k(b1) + ", 2, " + k(c2) + ")"));
    PgResult joined = c.exec(
        "UPDATE orders SET tenant_id = moves.dest FROM moves "
        "WHERE moves.tenant_id = orders.tenant_id AND orders.qty < 3");
    REQUIRE_OK(joined);
    CHECK(joined.command_tag() == "UPDATE 3");  // b1's qty 1 and 2 rows and the one from a0
    CHECK(f.rows_on(1) == std::vector<std::string>{k(b1) + "|n3"});
    CHECK(f.rows_on(2) ==
          std::vector<std::string>{k(c2) + "|n1", k(c2) + "|n1@1", k(c2) + "|n2", k(c2) + "|n2@2"});
    check_placed_and_clean(f);
    // Atomic: the new owner (shard 0) already has b1's last row's id under a0b: 23505, nothing moved.
    PgConn s1 = f.setup.shard(1);
    const std::string id = s1.value("SELECT id FROM orders WHERE tenant_id = " + k(b1));
    PgConn s0 = f.setup.shard(0);
    REQUIRE_OK(s0.exec("INSERT INTO orders (id, tenant_id, note, qty) VALUES (" + id + ", " + k(a0b) +
                       ", 'taken', 0)"));
    const auto before = all_rows(f);
    PgResult failed = c.exec(
        "UPDATE orders o SET tenant_id = p.dest FROM plans p WHERE p.qty = 3 AND o.qty = 3 "
        "AND o.tenant_id = " +
        k(b1));
    CHECK(failed.sqlstate() == "23505");
    CHECK(all_rows(f) == before);
    check_placed_and_clean(f);
  }

  TEST_CASE("RETURNING under Execute row limits: as PostgreSQL answers, every row moved") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const int64_t a0 = tenant_on(0, kShards, 1), b1 = tenant_on(1, kShards, 1), c2 = tenant_on(2, kShards, 1);
    // The same rows in a plain table directly on shard 0: plain PostgreSQL's answer.
    PgConn plain = f.setup.shard(0);
    REQUIRE_OK(plain.exec("CREATE TABLE plain_orders (tenant_id bigint, note text, qty integer)"));
    PgConn c = f.client();
    const std::vector<std::vector<uint32_t>> cases = {{2}, {3}, {5}, {2, 2}, {1, 1, 1, 1}, {2, 0}};
    for (const auto& limits : cases) {
      std::string name;
      for (uint32_t limit : limits) name += " " + std::to_string(limit);
      CAPTURE(name);
      REQUIRE_OK(c.exec("DELETE FROM orders"));
      seed(f, {a0});
      REQUIRE_OK(plain.exec("TRUNCATE plain_orders"));
      REQUIRE_OK(plain.exec("INSERT INTO plain_orders VALUES (" + k(a0) + ", 'n1', 1), (" + k(a0) +
                            ", 'n2', 2), (" + k(a0) + ", 'n3', 3)"));
      const std::string set = " SET tenant_id = CASE qty WHEN 1 THEN " + k(b1) + " ELSE " + k(c2) +
                              " END RETURNING tenant_id, note";
      const auto expected = raw_batch(plain, limited_batch("UPDATE plain_orders" + set, limits));
      const auto actual = raw_batch(c, limited_batch("UPDATE orders" + set, limits));
      CHECK(described(actual) == described(expected));
      CHECK(kinds(expected).substr(0, 3) == "12T");
      CHECK(f.rows_on(0).empty());
      CHECK(f.rows_on(1) == std::vector<std::string>{k(b1) + "|n1"});
      CHECK(f.rows_on(2) == std::vector<std::string>{k(c2) + "|n2", k(c2) + "|n3"});
    }
    // Inside BEGIN the portal outlives the Sync, as PostgreSQL's: Execute + Sync fetches (pgjdbc's
    // fetch size) continue it, each answered as plain PostgreSQL answers, status T; another
    // statement closes it (a later Execute fails, 34000, as there). ROLLBACK moves nothing.
    const std::string back = " SET tenant_id = " + k(a0) + " RETURNING note";
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(plain.exec("BEGIN"));
    auto fetch = [](PgConn& conn, uint32_t limit) {
      return raw_batch(conn,
                       wire::message('E', std::string(1, '\0') + wire::be32(limit)) + wire::message('S', ""));
    };
    const auto first = raw_batch(c, limited_batch("UPDATE orders" + back, {1}));
    CHECK(described(first) == described(raw_batch(plain, limited_batch("UPDATE plain_orders" + back, {1}))));
    CHECK(first.back().body == "T");
    for (uint32_t limit : {1u, 2u, 2u}) {
      CAPTURE(limit);
      const auto next = fetch(c, limit);
      CHECK(described(next) == described(fetch(plain, limit)));
      CHECK(next.back().body == "T");
    }
    CHECK(c.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(a0)) == "3");
    const auto closed = fetch(c, 1);
    REQUIRE(!closed.empty());
    CHECK(closed.front().type == 'E');
    CHECK(wire::parse_error(closed.front().body).sqlstate() == "34000");
    REQUIRE_OK(c.exec("ROLLBACK"));
    REQUIRE_OK(plain.exec("ROLLBACK"));
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(2).size() == 2u);
    check_placed_and_clean(f);
  }
}
