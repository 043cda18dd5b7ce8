// SQL cursors over several shards, through shardwire on 3 real shards with a catalog
// (docs/architecture.md §5.6, "Cursors merged across shards"): inside a transaction block a DECLARE
// of a keyless read answers DECLARE CURSOR; FETCH 1, FETCH 3, MOVE, FETCH ALL return exactly the
// rows (in the ORDER BY merged across FETCHes) one PostgreSQL holding all the rows returns, with
// its tags; LIMIT/OFFSET, key lists and GROUP BY merge the same way; CLOSE, CLOSE ALL and the
// transaction's end drop the cursor; backward moves of a NO SCROLL one are refused (0A000, the
// transaction failed), a SCROLL one moves every way PostgreSQL's does (rows kept up to
// fanout.max_scroll_bytes, 54000 past it); psycopg's named cursors (DECLARE in the extended protocol, with
// parameters, then FETCH FORWARD n) read every row once, in order. Cursors WITH HOLD (declared in autocommit
// as Django's .iterator() and psycopg's withhold=True do, or in a transaction) outlive their transaction in
// both pool modes, are dropped by its ROLLBACK, and no other client sees them. A cursor over 96 MB
// of wide rows read FETCH 10 at a time keeps shardwire's resident size within a few MB.
#include <algorithm>
#include <thread>

#include "harness/process.h"
#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "merged_transactions_support.h"
#include "resource_bounds/client_swarm.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;
using namespace it::merged_txn;

namespace {

// The rows of orders seeded by seed(f, t, 4) plus `extra` (qty, tenant), as one PostgreSQL orders
// `SELECT qty, tenant_id ... ORDER BY qty DESC, tenant_id`: "qty|tenant" each.
std::vector<std::string> expected_rows(const Tenants& t,
                                       const std::vector<std::pair<int, int64_t>>& extra = {}) {
  std::vector<std::pair<int, int64_t>> rows = extra;
  for (int64_t tenant : {t.a, t.b, t.c})
    for (int qty = 1; qty <= 4; ++qty) rows.emplace_back(qty, tenant);
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  std::vector<std::string> out;
  for (const auto& [qty, tenant] : rows) out.push_back(std::to_string(qty) + "|" + std::to_string(tenant));
  return out;
}

// psycopg 3's named cursors (as Django's .iterator() inside a transaction uses them): DECLARE in
// the extended protocol with the query's parameters, Describe of the cursor's portal, FETCH
// FORWARD itersize, CLOSE. Prints each cursor's rows as "qty|tenant" lines, then "done".
const char* const kPsycopgCursors = R"PY(
import sys, psycopg
url, a, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with psycopg.connect(url) as conn:
    cur = conn.cursor(name="merged")
    cur.itersize = 3
    cur.execute("SELECT qty, tenant_id FROM orders WHERE qty >= %s ORDER BY qty DESC, tenant_id", (2,))
    print("names", ",".join(d.name for d in cur.description))
    for qty, tenant in cur:
        print(f"{qty}|{tenant}")
    cur.close()
    keyed = conn.cursor(name="Keyed Cursor")
    keyed.execute("SELECT qty, tenant_id FROM orders WHERE tenant_id = ANY(%s) ORDER BY qty DESC, tenant_id", ([a, c],))
    print("one", keyed.fetchone())
    print("many", keyed.fetchmany(2))
    print("rest", len(keyed.fetchall()))
    keyed.close()
    conn.commit()
print("done")
)PY";

// psycopg 3's named cursor with withhold=True in autocommit (each FETCH its own transaction), then
// another connection that must not see it. Prints the rows as "qty|tenant" lines, then "done".
const char* const kPsycopgHeld = R"PY(
import sys, psycopg
url = sys.argv[1]
with psycopg.connect(url, autocommit=True) as conn:
    cur = conn.cursor(name="held", withhold=True)
    cur.itersize = 2
    cur.execute("SELECT qty, tenant_id FROM orders WHERE qty >= %s ORDER BY qty DESC, tenant_id", (2,))
    first = cur.fetchone()
    print(f"{first[0]}|{first[1]}")
    with psycopg.connect(url, autocommit=True) as other:
        try:
            other.execute('FETCH 1 FROM "held"')
            print("other sees it")
        except psycopg.errors.InvalidCursorName:
            print("other: no cursor")
    for qty, tenant in cur:
        print(f"{qty}|{tenant}")
    cur.close()
    print("status", conn.info.transaction_status.name)
print("done")
)PY";

std::vector<std::string> rows_of(const PgResult& r) {
  std::vector<std::string> out;
  for (const auto& row : r.data()) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += (i > 0 ? "|" : "") + row[i];
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> slice(const std::vector<std::string>& v, size_t from, size_t n) {
  return {v.begin() + static_cast<std::ptrdiff_t>(std::min(from, v.size())),
          v.begin() + static_cast<std::ptrdiff_t>(std::min(from + n, v.size()))};
}

// `sql` fails with `sqlstate` and a message containing `text`; the transaction is failed after.
void check_refused(PgConn& client, const std::string& sql, const std::string& sqlstate,
                   const std::string& text) {
  INFO(sql);
  PgResult r = client.exec(sql);
  INFO(r.describe());
  CHECK(r.sqlstate() == sqlstate);
  CHECK(contains(r.error(), text));
  CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
  CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
}

}  // namespace

TEST_SUITE("merged_cursors") {
  TEST_CASE("DECLARE over every shard: FETCH 1, 3, MOVE, ALL merged across FETCHes; CLOSE; errors") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);  // qty 1..4 of one tenant on each shard
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.b) + ", 600, 'c', 3)"));
    const auto all = expected_rows(t, {{3, t.b}});
    PgResult declared =
        client.exec("DECLARE c CURSOR FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id");
    REQUIRE_OK(declared);
    CHECK(declared.command_tag() == "DECLARE CURSOR");
    PgResult one = client.exec("FETCH c");
    REQUIRE_OK(one);
    CHECK(one.command_tag() == "FETCH 1");
    CHECK(one.names() == std::vector<std::string>{"qty", "tenant_id"});
    CHECK(rows_of(one) == slice(all, 0, 1));
    PgResult three = client.exec("FETCH 3 FROM c");
    CHECK(three.command_tag() == "FETCH 3");
    CHECK(rows_of(three) == slice(all, 1, 3));
    PgResult moved = client.exec("MOVE FORWARD 2 IN c");
    CHECK(moved.command_tag() == "MOVE 2");
    PgResult forward = client.exec("fetch forward 3 \"c\";");
    CHECK(forward.command_tag() == "FETCH 3");
    CHECK(rows_of(forward) == slice(all, 6, 3));
    PgResult rest = client.exec("FETCH ALL FROM c");
    CHECK(rest.command_tag() == "FETCH 4");
    CHECK(rows_of(rest) == slice(all, 9, 4));
    PgResult after = client.exec("FETCH NEXT FROM c");
    CHECK(after.command_tag() == "FETCH 0");
    CHECK(after.names() == std::vector<std::string>{"qty", "tenant_id"});
    CHECK(client.exec("MOVE ALL IN c").command_tag() == "MOVE 0");
    // Other statements between FETCHes run as usual; the cursor goes on after them.
    REQUIRE_OK(client.exec("DECLARE d CURSOR FOR SELECT qty FROM orders ORDER BY qty LIMIT 4 OFFSET 2"));
    CHECK(client.value("SELECT count(*) FROM orders") == "13");
    CHECK(rows_of(client.exec("FETCH 1 FROM d")) == std::vector<std::string>{"1"});
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "5");
    PgResult rest_d = client.exec("FETCH ALL FROM d");
    CHECK(rows_of(rest_d) == std::vector<std::string>{"2", "2", "2"});
    CHECK(client.exec("CLOSE c").command_tag() == "CLOSE CURSOR");
    CHECK(client.exec("FETCH c").sqlstate() == "34000");  // gone, as on PostgreSQL
    CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
    // The transaction's end dropped d: the name is free again, its rows are the committed ones.
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("DECLARE d CURSOR FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id"));
    CHECK(rows_of(client.exec("FETCH ALL IN d")) == expected_rows(t));
    CHECK(client.exec("CLOSE ALL").command_tag() == "CLOSE CURSOR ALL");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("key lists, plain concatenation and GROUP BY through a cursor; refusals fail the transaction") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("DECLARE k CURSOR FOR SELECT qty, tenant_id FROM orders WHERE tenant_id IN (" +
                           k(t.a) + ", " + k(t.c) + ") ORDER BY qty DESC, tenant_id"));
    std::vector<std::string> keyed;
    for (const std::string& row : expected_rows(t))
      if (row.find("|" + std::to_string(t.b)) == std::string::npos) keyed.push_back(row);
    std::vector<std::string> got;
    for (int i = 0; i < 5; ++i) {
      PgResult two = client.exec("FETCH 2 FROM k");
      REQUIRE_OK(two);
      for (const std::string& row : rows_of(two)) got.push_back(row);
    }
    CHECK(got == keyed);
    REQUIRE_OK(client.exec("DECLARE plain NO SCROLL CURSOR WITHOUT HOLD FOR SELECT note FROM orders"));
    CHECK(client.exec("FETCH 5 plain").rows() == 5);
    CHECK(client.exec("FETCH ALL plain").rows() == 7);
    REQUIRE_OK(client.exec(
        "DECLARE g CURSOR FOR SELECT qty, count(*), sum(id) FROM orders GROUP BY qty ORDER BY qty"));
    CHECK(rows_of(client.exec("FETCH 2 FROM g")) == std::vector<std::string>{"1|3|3", "2|3|6"});
    CHECK(rows_of(client.exec("FETCH ALL FROM g")) == std::vector<std::string>{"3|3|9", "4|3|12"});
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");

    const std::string read = " CURSOR FOR SELECT qty FROM orders ORDER BY qty";
    for (const char* backward : {"FETCH PRIOR FROM c", "FETCH BACKWARD 1 FROM c", "FETCH ABSOLUTE 2 FROM c",
                                 "MOVE LAST IN c", "FETCH -1 FROM c", "FETCH RELATIVE 0 FROM c"}) {
      INFO(backward);
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec("DECLARE c" + read));
      check_refused(client, std::string(backward), "0A000", "moves only forward");
    }
    // Columns the proxy computes from several partial ones (avg, count(DISTINCT), an ordered
    // string_agg, a variance, HAVING's own aggregate): the merged SELECT's names and rows.
    const std::string computed =
        "SELECT qty, avg(id), count(DISTINCT tenant_id), string_agg(tenant_id::text, ',' ORDER BY tenant_id) "
        "AS tenants, var_samp(id) FROM orders GROUP BY qty HAVING max(id) > 1 ORDER BY qty";
    PgResult merged = client.exec(computed);
    REQUIRE_OK(merged);
    REQUIRE(merged.rows() == 3);
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("DECLARE a CURSOR FOR " + computed));
    PgResult first = client.exec("FETCH 1 FROM a");
    PgResult rest = client.exec("FETCH ALL FROM a");
    REQUIRE_OK(rest);
    CHECK(first.names() == merged.names());
    CHECK(rest.names() == merged.names());
    std::vector<std::string> fetched = rows_of(first);
    for (const std::string& row : rows_of(rest)) fetched.push_back(row);
    CHECK(fetched == rows_of(merged));
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    REQUIRE_OK(client.exec("BEGIN"));
    check_refused(client, "DECLARE a CURSOR FOR SELECT qty, json_agg(id) FROM orders GROUP BY qty", "0A000",
                  "needs a merge");
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("DECLARE c" + read));
    check_refused(client, "DECLARE c" + read, "42P03", "already exists");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("a shard's error in a FETCH fails the transaction on every shard; session pooling the same") {
    PROXY_ONLY();
    for (const char* mode : {"transaction", "session"}) {
      INFO("pool mode " << mode);
      ShardedOptions options;
      options.proxy.pool_mode = mode;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const Tenants t;
      seed(f, t, 4);
      PgConn client = f.client();
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(
          client.exec("DECLARE c CURSOR FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id"));
      CHECK(rows_of(client.exec("FETCH 2 FROM c")) == slice(expected_rows(t), 0, 2));
      REQUIRE_OK(client.exec("DECLARE z CURSOR FOR SELECT 100 / (qty - 1) FROM orders ORDER BY 1"));
      PgResult failed = client.exec("FETCH 2 FROM z");
      CHECK(failed.sqlstate() == "22012");
      CHECK(client.exec("FETCH 1 FROM c").sqlstate() == "25P02");
      CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(
          client.exec("DECLARE c CURSOR FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id"));
      CHECK(rows_of(client.exec("FETCH ALL FROM c")) == expected_rows(t));
      CHECK(client.exec("CLOSE c").command_tag() == "CLOSE CURSOR");
      CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(prepared_or_idle(f) == 0);
    }
  }

  TEST_CASE(
      "psycopg named cursors: DECLARE with parameters in the extended protocol, FETCH FORWARD itersize") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);
    const std::string url =
        "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
    CommandResult run =
        run_command({"/usr/bin/python3", "-c", kPsycopgCursors, url, k(t.a), k(t.c)}, {}, 60s);
    INFO(run.describe());
    REQUIRE(run.exit_code == 0);
    std::string want = "names qty,tenant_id\n";
    for (const std::string& row : slice(expected_rows(t), 0, 9)) want += row + "\n";
    std::vector<std::string> keyed;
    for (const std::string& row : expected_rows(t))
      if (row.find("|" + std::to_string(t.b)) == std::string::npos) keyed.push_back(row);
    auto tuple = [](const std::string& row) {
      return "(" + row.substr(0, row.find('|')) + ", " + row.substr(row.find('|') + 1) + ")";
    };
    want += "one " + tuple(keyed[0]) + "\n";
    want += "many [" + tuple(keyed[1]) + ", " + tuple(keyed[2]) + "]\n";
    want += "rest 5\ndone\n";
    CHECK(run.out == want);
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("WITH HOLD in autocommit: FETCHes in their own transactions, both pool modes, unseen by others") {
    PROXY_ONLY();
    for (const char* mode : {"transaction", "session"}) {
      INFO("pool mode " << mode);
      ShardedOptions options;
      options.proxy.pool_mode = mode;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const Tenants t;
      seed(f, t, 4);
      const auto all = expected_rows(t);
      PgConn client = f.client();
      PgConn other = f.client();
      // Django's .iterator() in autocommit: NO SCROLL ... WITH HOLD, then FETCH n each alone.
      const std::string read = " FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id";
      PgResult declared = client.exec("DECLARE h NO SCROLL CURSOR WITH HOLD" + read);
      REQUIRE_OK(declared);
      CHECK(declared.command_tag() == "DECLARE CURSOR");
      CHECK(rows_of(client.exec("FETCH 2 FROM h")) == slice(all, 0, 2));
      // Its rows were read when it was declared (each shard materialized its half at commit).
      REQUIRE_OK(
          client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.b) + ", 700, 'x', 9)"));
      CHECK(other.exec("FETCH 1 FROM h").sqlstate() == "34000");  // another client's servers: no such cursor
      CHECK(rows_of(client.exec("FETCH 3 FROM h")) == slice(all, 2, 3));
      REQUIRE_OK(client.exec("BEGIN"));  // a rolled-back transaction keeps it (and where it is)
      CHECK(rows_of(client.exec("FETCH 1 FROM h")) == slice(all, 5, 1));
      CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
      PgResult rest = client.exec("FETCH ALL FROM h");
      CHECK(rest.command_tag() == "FETCH 6");
      CHECK(rows_of(rest) == slice(all, 6, 6));
      CHECK(client.exec("CLOSE h").command_tag() == "CLOSE CURSOR");
      CHECK(client.exec("FETCH 1 FROM h").sqlstate() == "34000");
      // Declared in a transaction: kept by its COMMIT, dropped by its ROLLBACK.
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec("DECLARE r CURSOR WITH HOLD" + read));
      CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
      CHECK(client.exec("FETCH 1 FROM r").sqlstate() == "34000");
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec("DECLARE w CURSOR WITH HOLD" + read));
      CHECK(rows_of(client.exec("FETCH 1 FROM w")) == std::vector<std::string>{"9|" + k(t.b)});
      CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(client.exec("FETCH 12 FROM w").rows() == 12);
      CHECK(client.exec("CLOSE ALL").command_tag() == "CLOSE CURSOR ALL");
      // A shard's error at its commit (where it materializes its half) reaches the client; the
      // other shards close theirs, so the name is free again.
      CHECK(client.exec("DECLARE z CURSOR WITH HOLD FOR SELECT 1 / (tenant_id - " + k(t.b) + ") FROM orders")
                .sqlstate() == "22012");
      REQUIRE_OK(client.exec("DECLARE z CURSOR WITH HOLD FOR SELECT qty FROM orders"));
      CHECK(client.exec("FETCH 12 FROM z").rows() == 12);
      CHECK(client.exec("FETCH 1 FROM z").rows() == 1);
      CHECK(client.exec("DISCARD ALL").command_tag() == "DISCARD ALL");  // closes it on every shard
      CHECK(client.exec("FETCH 1 FROM z").sqlstate() == "34000");
      REQUIRE_OK(client.exec("DECLARE z CURSOR WITH HOLD FOR SELECT qty FROM orders"));
      CHECK(client.exec("FETCH ALL FROM z").rows() == 13);
      CHECK(client.exec("CLOSE z").command_tag() == "CLOSE CURSOR");
      CHECK(prepared_or_idle(f) == 0);
    }
  }

  TEST_CASE("WITH HOLD pins the client until its last held cursor ends, then frees its servers and slot") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.pool_size = 1;  // one server per shard: a pinned client holds every one
    options.proxy.query_wait_timeout = "1s";
    options.proxy.idle_timeout = "60s\n  max_pinned_clients: 1";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);
    PgConn client = f.client();
    PgConn other = f.client();
    PgConn third = f.client();  // logged in now: later every shard's one server is pinned
    const std::string read =
        " CURSOR WITH HOLD FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id";
    // `other` may pin only once `client` is not pinned (pool.max_pinned_clients: 1).
    auto other_may_pin = [&] {
      PgResult r = other.exec("DECLARE o" + read);
      INFO(r.describe());
      if (!r.ok()) {
        CHECK(r.sqlstate() == "53300");
        return false;
      }
      CHECK(other.exec("CLOSE o").command_tag() == "CLOSE CURSOR");
      return true;
    };
    const std::string count = "SELECT count(*) FROM orders";
    auto other_reads = [&] {  // fails while the shards' only servers are the pinned client's
      PgResult r = other.exec(count);
      INFO(r.describe());
      if (!r.ok()) CHECK(r.sqlstate() == "57014");
      return r.ok();
    };
    REQUIRE_OK(client.exec("DECLARE h" + read));
    REQUIRE_OK(client.exec("DECLARE h2" + read));
    CHECK(client.exec("FETCH 2 FROM h").rows() == 2);
    CHECK_FALSE(other_may_pin());
    CHECK_FALSE(other_reads());
    CHECK(client.exec("CLOSE h").command_tag() == "CLOSE CURSOR");
    CHECK_FALSE(other_may_pin());  // h2 keeps the pin
    CHECK_FALSE(other_reads());
    CHECK(client.exec("FETCH 1 FROM h2").rows() == 1);
    CHECK(client.exec("CLOSE h2").command_tag() == "CLOSE CURSOR");
    CHECK(other_reads());    // the client's servers went back to the pool
    CHECK(other_may_pin());  // and the pin slot is free (other's CLOSE ended its own pin)
    // A ROLLBACK that drops the cursor ends the pin.
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("DECLARE r" + read));
    CHECK_FALSE(other_may_pin());
    CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
    CHECK(other_reads());
    CHECK(other_may_pin());
    // So do DISCARD ALL and CLOSE ALL.
    REQUIRE_OK(client.exec("DECLARE d" + read));
    CHECK(client.exec("DISCARD ALL").command_tag() == "DISCARD ALL");
    CHECK(client.value("SELECT 1") == "1");  // (the other shards' servers ran it after the answer)
    CHECK(other_may_pin());
    REQUIRE_OK(client.exec("DECLARE a" + read));
    REQUIRE_OK(client.exec("DECLARE b" + read));
    CHECK(client.exec("CLOSE ALL").command_tag() == "CLOSE CURSOR ALL");
    CHECK(other_reads());
    CHECK(other_may_pin());
    CHECK(client.value(count) == "12");
    // Another reason to pin (a temporary table) keeps the pin after the cursor closes; so does a
    // cursor WITH HOLD of one shard (it lives on its server, where the proxy does not follow it).
    REQUIRE_OK(client.exec("DECLARE e" + read));
    REQUIRE_OK(client.exec("CREATE TEMP TABLE pinned_too (v int)"));
    CHECK(client.exec("CLOSE e").command_tag() == "CLOSE CURSOR");
    CHECK_FALSE(other_may_pin());
    CHECK_FALSE(other_reads());
    client.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the proxy sees it leave
    REQUIRE_OK(
        other.exec("DECLARE one CURSOR WITH HOLD FOR SELECT qty FROM orders WHERE tenant_id = " + k(t.a)));
    REQUIRE_OK(other.exec("DECLARE e" + read));
    CHECK(other.exec("CLOSE e").command_tag() == "CLOSE CURSOR");
    PgResult refused = third.exec("DECLARE o" + read);
    CHECK(refused.sqlstate() == "53300");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("WITH HOLD in a transaction that writes on several shards: its COMMIT is refused unless closed") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);
    PgConn client = f.client();
    const std::string insert = "INSERT INTO orders (tenant_id, id, note, qty) VALUES ";
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec(insert + "(" + k(t.a) + ", 800, 'x', 5)"));
    REQUIRE_OK(client.exec(insert + "(" + k(t.c) + ", 800, 'x', 5)"));
    REQUIRE_OK(client.exec("DECLARE h CURSOR WITH HOLD FOR SELECT qty FROM orders ORDER BY qty DESC"));
    CHECK(rows_of(client.exec("FETCH 2 FROM h")) == std::vector<std::string>{"5", "5"});
    PgResult commit = client.exec("COMMIT");
    INFO(commit.describe());
    CHECK(commit.sqlstate() == "0A000");
    CHECK(contains(commit.error(), "CLOSE the cursor before COMMIT"));
    CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
    CHECK(client.exec("FETCH 1 FROM h").sqlstate() == "34000");
    CHECK(client.value("SELECT count(*) FROM orders WHERE id = 800") == "0");
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec(insert + "(" + k(t.a) + ", 800, 'x', 5)"));
    REQUIRE_OK(client.exec(insert + "(" + k(t.c) + ", 800, 'x', 5)"));
    REQUIRE_OK(client.exec("DECLARE h CURSOR WITH HOLD FOR SELECT qty FROM orders ORDER BY qty DESC"));
    CHECK(client.exec("CLOSE h").command_tag() == "CLOSE CURSOR");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(client.value("SELECT count(*) FROM orders WHERE id = 800") == "2");
    // The same COMMIT in the extended protocol (pgjdbc, asyncpg): Parse/Bind/Execute of COMMIT,
    // and a Bind of a COMMIT prepared before (a Parse alone is no COMMIT).
    REQUIRE_OK(client.prepare("commit_it", "COMMIT"));
    for (const bool prepared : {false, true}) {
      INFO("prepared COMMIT " << prepared);
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(client.exec(insert + "(" + k(t.a) + ", 801, 'x', 5)"));
      REQUIRE_OK(client.exec(insert + "(" + k(t.c) + ", 801, 'x', 5)"));
      REQUIRE_OK(client.exec("DECLARE h CURSOR WITH HOLD FOR SELECT qty FROM orders ORDER BY qty DESC"));
      REQUIRE_OK(client.prepare("", "COMMIT"));
      PgResult extended = prepared ? client.exec_prepared("commit_it", {}) : client.exec_params("COMMIT", {});
      INFO(extended.describe());
      CHECK(extended.sqlstate() == "0A000");
      CHECK(contains(extended.error(), "CLOSE the cursor before COMMIT"));
      CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
      CHECK(client.exec("FETCH 1 FROM h").sqlstate() == "34000");
      CHECK(client.value("SELECT count(*) FROM orders WHERE id = 801") == "0");
    }
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("psycopg named cursors withhold=True in autocommit, both pool modes") {
    PROXY_ONLY();
    for (const char* mode : {"transaction", "session"}) {
      INFO("pool mode " << mode);
      ShardedOptions options;
      options.proxy.pool_mode = mode;
      ShardedFixture f(options);
      INFO("proxy log:\n" << f.log_tail());
      const Tenants t;
      seed(f, t, 4);
      const std::string url =
          "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
      CommandResult run = run_command({"/usr/bin/python3", "-c", kPsycopgHeld, url}, {}, 60s);
      INFO(run.describe());
      REQUIRE(run.exit_code == 0);
      const auto rows = slice(expected_rows(t), 0, 9);
      std::string want = rows[0] + "\nother: no cursor\n";
      for (size_t i = 1; i < rows.size(); ++i) want += rows[i] + "\n";
      want += "status IDLE\ndone\n";
      CHECK(run.out == want);
      CHECK(prepared_or_idle(f) == 0);
    }
  }

  TEST_CASE("FETCH 10 at a time over 3 x 32 MB of wide rows keeps shardwire's memory bounded") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    // 2000 rows of 16 kB per shard (compressed on the shards, 16 kB each on the wire), their ids
    // interleaved across the shards so the ORDER BY id merge takes from each in turn.
    constexpr int kRowsPerShard = 2000;
    constexpr long kRowBytes = 16000;
    const Tenants t;
    const int64_t tenants[] = {t.a, t.b, t.c};
    for (int s = 0; s < kShards; ++s) {
      REQUIRE_OK(f.setup.shard(s).exec("INSERT INTO orders (tenant_id, id, note, qty) SELECT " +
                                       k(tenants[s]) + ", g * 3 + " + std::to_string(s) + ", repeat('x', " +
                                       std::to_string(kRowBytes) + "), 1 FROM generate_series(0, " +
                                       std::to_string(kRowsPerShard - 1) + ") g"));
    }
    PgConn client = f.client();
    const std::string declare = "DECLARE wide CURSOR FOR SELECT id, note FROM orders ORDER BY id";
    REQUIRE_OK(client.exec("BEGIN"));  // warm the path (narrow rows), then take the size
    REQUIRE_OK(client.exec("DECLARE wide CURSOR FOR SELECT id FROM orders ORDER BY id"));
    REQUIRE_OK(client.exec("FETCH 10 FROM wide"));
    REQUIRE_OK(client.exec("ROLLBACK"));
    const pid_t pid = f.proxy->pid();
    const long baseline = it::rb::rss_kib(pid);
    REQUIRE(baseline > 0);
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec(declare));
    long peak = baseline;
    int64_t rows = 0;
    bool in_order = true;
    for (;;) {
      PgResult ten = client.exec("FETCH 10 FROM wide");
      REQUIRE_OK(ten);
      for (int i = 0; i < ten.rows(); ++i, ++rows)
        in_order = in_order && ten.value(i, 0) == std::to_string(rows);
      peak = std::max(peak, it::rb::rss_kib(pid));
      if (ten.rows() < 10) break;
    }
    REQUIRE_OK(client.exec("COMMIT"));
    CHECK(rows == kRowsPerShard * kShards);
    CHECK(in_order);
    // 96 MB passed through; a cursor holding its rows (or refilling fanout.max_rows_buffered = 1000
    // rows of each shard, 48 MB) would pass 16 MB by far; FETCH 10 holds 10 rows a shard (0.5 MB).
    const long total_kib = kRowsPerShard * kShards * kRowBytes / 1024;
    MESSAGE("shardwire VmRSS " << baseline << " KiB before, peak " << peak << " KiB while " << total_kib
                               << " KiB of rows went through");
    // The bound is the release allocator's: under ASan every freed buffer waits in the quarantine
    // (256 MB) before reuse, so the sanitized run checks the rows, not the RSS (as merged_memory).
    if (!sanitized_mode()) CHECK(peak - baseline < 16 * 1024);
  }

  TEST_CASE("SCROLL: PRIOR, BACKWARD, ABSOLUTE, RELATIVE, FIRST, LAST as one PostgreSQL; bounded") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.extra_yaml = "fanout: { max_scroll_bytes: 2000 }\n";
    ShardedFixture f(options);
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);
    const auto all = expected_rows(t);  // 12 rows
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec(
        "DECLARE s SCROLL CURSOR FOR SELECT qty, tenant_id FROM orders ORDER BY qty DESC, tenant_id"));
    auto fetch = [&](const std::string& how, const std::string& tag) {
      PgResult r = client.exec(how + " s");
      INFO(how << ": " << r.describe());
      CHECK(r.command_tag() == tag);
      return rows_of(r);
    };
    auto at = [&](size_t i) { return std::vector<std::string>{all[i]}; };
    CHECK(fetch("FETCH 3 FROM", "FETCH 3") == slice(all, 0, 3));
    CHECK(fetch("FETCH PRIOR FROM", "FETCH 1") == at(1));
    CHECK(fetch("FETCH RELATIVE 0 FROM", "FETCH 1") == at(1));
    CHECK(fetch("FETCH BACKWARD 5 FROM", "FETCH 1") == at(0));  // then before the first row
    CHECK(fetch("FETCH NEXT FROM", "FETCH 1") == at(0));
    CHECK(fetch("FETCH ABSOLUTE 7 FROM", "FETCH 1") == at(6));
    CHECK(fetch("FETCH RELATIVE -2 FROM", "FETCH 1") == at(4));
    CHECK(fetch("MOVE FORWARD 2 IN", "MOVE 2").empty());
    CHECK(fetch("FETCH LAST FROM", "FETCH 1") == at(11));
    CHECK(fetch("FETCH NEXT FROM", "FETCH 0").empty());  // past the last row
    std::vector<std::string> back(all.rbegin(), all.rbegin() + 3);
    CHECK(fetch("FETCH BACKWARD 3 FROM", "FETCH 3") == back);
    CHECK(fetch("FETCH FIRST FROM", "FETCH 1") == at(0));
    CHECK(fetch("FETCH ABSOLUTE -12 FROM", "FETCH 1") == at(0));
    CHECK(fetch("FETCH ABSOLUTE 20 FROM", "FETCH 0").empty());
    CHECK(fetch("MOVE ABSOLUTE 0 IN", "MOVE 0").empty());
    CHECK(fetch("FETCH ALL FROM", "FETCH 12") == all);
    std::vector<std::string> reversed(all.rbegin(), all.rend());
    CHECK(fetch("FETCH BACKWARD ALL FROM", "FETCH 12") == reversed);
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    // The rows kept to move back are bounded: 2000 bytes hold some of 3 x 200 rows, not all.
    for (int s = 0; s < kShards; ++s)
      REQUIRE_OK(f.setup.shard(s).exec("INSERT INTO orders (tenant_id, id, note, qty) SELECT " +
                                       k(s == 0   ? t.a
                                         : s == 1 ? t.b
                                                  : t.c) +
                                       ", g, 'wide', 0 FROM generate_series(100, 299) g"));
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("DECLARE s SCROLL CURSOR FOR SELECT id, note FROM orders ORDER BY id"));
    CHECK(client.exec("FETCH 10 FROM s").rows() == 10);
    CHECK(client.exec("FETCH BACKWARD 2 FROM s").rows() == 2);
    check_refused(client, "FETCH LAST FROM s", "54000", "fanout.max_scroll_bytes");
    CHECK(prepared_or_idle(f) == 0);
  }
}
