// COPY ... TO STDOUT of a sharded table, and of a keyless query over one, inside a client's
// transaction block and in session pooling, through shardwire on 3 real shards with a catalog
// (docs/architecture.md §5.6): the copy runs on the session's servers (the transaction's legs,
// lent, or new ones joining with its BEGIN), so it shows the transaction's own uncommitted rows,
// which another client's copy does not; text, CSV with one HEADER line and binary with one header
// and one trailer, `COPY n` with the total; a shard failing mid-copy (division by zero on s2 after
// s0 and s1 sent their rows) fails the transaction on every shard: 25P02 after it, COMMIT answers
// ROLLBACK, nothing committed, no server left idle in a transaction; in session pooling outside a
// transaction the same failure leaves the session idle and usable.
#include "it_test.h"

#include <algorithm>

#include "harness/sharded_fixture.h"
#include "merged_transactions_support.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;
using namespace it::merged_txn;

namespace {

struct CopyOut {
  bool started = false;             // the client got CopyOutResponse
  std::string sqlstate;             // "" when the copy succeeded
  std::vector<std::string> chunks;  // CopyData payloads, as received
  std::string tag;
};

CopyOut copy_out(PgConn& conn, const std::string& sql) {
  CopyOut out;
  PGresult* started = PQexec(conn.get(), sql.c_str());
  out.started = PQresultStatus(started) == PGRES_COPY_OUT;
  if (!out.started) {
    const char* state = PQresultErrorField(started, PG_DIAG_SQLSTATE);
    out.sqlstate = state != nullptr ? state : "none";
    PQclear(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return out;
  }
  PQclear(started);
  char* buffer = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(conn.get(), &buffer, 0)) > 0) {
    out.chunks.emplace_back(buffer, static_cast<size_t>(n));
    PQfreemem(buffer);
  }
  while (PGresult* result = PQgetResult(conn.get())) {
    if (PQresultStatus(result) != PGRES_COMMAND_OK) {
      const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
      out.sqlstate = state != nullptr ? state : "none";
    }
    out.tag = PQcmdStatus(result);
    PQclear(result);
  }
  return out;
}

size_t count_containing(const std::vector<std::string>& chunks, const std::string& needle) {
  return static_cast<size_t>(
      std::count_if(chunks.begin(), chunks.end(), [&](const std::string& c) { return contains(c, needle); }));
}

int32_t be32_at(const std::string& s, size_t at) {
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
                              (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
                              (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
                              static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3])));
}

// A one-column binary copy's values (sorted); {"bad: ..."} unless the stream is one PGCOPY header,
// whole tuples and one -1 trailer at its very end.
std::vector<std::string> binary_values(const CopyOut& copy) {
  std::string s;
  for (const std::string& chunk : copy.chunks) s += chunk;
  const std::string signature("PGCOPY\n\377\r\n\0", 11);
  if (s.size() < 19 || s.compare(0, 11, signature) != 0) return {"bad: no header"};
  size_t at = 19 + static_cast<size_t>(be32_at(s, 15));
  std::vector<std::string> values;
  while (at + 2 <= s.size()) {
    const int fields = static_cast<int16_t>((static_cast<unsigned char>(s[at]) << 8) |
                                            static_cast<unsigned char>(s[at + 1]));
    at += 2;
    if (fields == -1) {
      if (at != s.size()) return {"bad: bytes after the trailer"};
      std::sort(values.begin(), values.end());
      return values;
    }
    if (fields != 1 || at + 4 > s.size()) return {"bad: tuple"};
    const int32_t length = be32_at(s, at);
    at += 4;
    if (length < 0 || at + static_cast<size_t>(length) > s.size()) return {"bad: field"};
    values.push_back(s.substr(at, static_cast<size_t>(length)));
    at += static_cast<size_t>(length);
  }
  return {"bad: no trailer"};
}

// The three formats of one transaction's copy: `rows` rows in all, `mine` of them noted 'mine'.
void check_copies(PgConn& client, size_t rows, size_t mine) {
  const std::string total = "COPY " + std::to_string(rows);
  const CopyOut text = copy_out(client, "COPY orders TO STDOUT");
  INFO("text: " << text.sqlstate << " " << text.tag);
  REQUIRE(text.started);
  CHECK(text.sqlstate.empty());
  CHECK(text.tag == total);
  CHECK(text.chunks.size() == rows);
  CHECK(count_containing(text.chunks, "\tmine\t") == mine);
  const CopyOut csv =
      copy_out(client, "COPY (SELECT note, qty FROM orders WHERE qty > 0) TO STDOUT (FORMAT csv, HEADER)");
  INFO("csv: " << csv.sqlstate << " " << csv.tag);
  REQUIRE(csv.started);
  CHECK(csv.sqlstate.empty());
  CHECK(csv.tag == total);
  REQUIRE(csv.chunks.size() == rows + 1);
  CHECK(csv.chunks.front() == "note,qty\n");  // one header line, the first shard's
  CHECK(count_containing(csv.chunks, "note,qty") == 1);
  CHECK(count_containing(csv.chunks, "mine,1000\n") == mine);
  const CopyOut binary = copy_out(client, "COPY orders (note) TO STDOUT (FORMAT binary)");
  INFO("binary: " << binary.sqlstate << " " << binary.tag);
  REQUIRE(binary.started);
  CHECK(binary.sqlstate.empty());
  CHECK(binary.tag == total);
  const std::vector<std::string> notes = binary_values(binary);
  REQUIRE(notes.size() == rows);
  CHECK(std::count(notes.begin(), notes.end(), "mine") == static_cast<long>(mine));
  CHECK(std::count(notes.begin(), notes.end(), "base") == static_cast<long>(rows - mine));
}

// Inside BEGIN (after writes on s0 and s1 when `write_first`, else with the BEGIN deferred), a copy
// fails on s2 after s0 and s1 sent their `per_shard` rows each (qty 0 on s2's last row): the whole
// transaction fails, and its writes are nowhere.
void check_copy_failing_on_s2(const ShardedFixture& f, PgConn& client, const Tenants& t, int per_shard,
                              bool write_first) {
  INFO("write_first " << write_first);
  REQUIRE_OK(client.exec("BEGIN"));
  const std::string lost = "INSERT INTO orders (tenant_id, note, qty) VALUES (";
  if (write_first) {
    REQUIRE_OK(client.exec(lost + k(t.a) + ", 'lost', 5)"));
    REQUIRE_OK(client.exec(lost + k(t.b) + ", 'lost', 5)"));
  }
  const CopyOut failed = copy_out(client, "COPY (SELECT id, 100 / qty FROM orders) TO STDOUT");
  CHECK(failed.started);
  CHECK(failed.sqlstate == "22012");  // the fault fired, on s2 ...
  // ... after s0's and s1's rows: mid-copy
  CHECK(failed.chunks.size() >= static_cast<size_t>(2 * (per_shard + (write_first ? 1 : 0))));
  CHECK(PQtransactionStatus(client.get()) == PQTRANS_INERROR);
  if (!write_first) CHECK(client.exec(lost + k(t.a) + ", 'lost', 5)").sqlstate() == "25P02");
  CHECK(client.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)).sqlstate() == "25P02");
  check_transaction_failed(f, client, "lost");
}

void zero_qty_on_s2(const ShardedFixture& f) {
  PgConn shard2 = f.setup.shard(2);
  REQUIRE_OK(shard2.exec("UPDATE orders SET qty = 0 WHERE id = (SELECT max(id) FROM orders)"));
}

}  // namespace

TEST_SUITE("copy_out_transactions") {
  TEST_CASE(
      "inside BEGIN a COPY TO of every shard shows the transaction's writes; another client's does not") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 2);  // 6 rows, qty 1 and 2
    PgConn client = f.client();
    PgConn other = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(t.a) + ", 'mine', 1000)"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(t.b) + ", 'mine', 1000)"));
    check_copies(client, 8, 2);
    const CopyOut outside = copy_out(other, "COPY orders TO STDOUT");
    CHECK(outside.tag == "COPY 6");
    CHECK(count_containing(outside.chunks, "\tmine\t") == 0);
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_INTRANS);
    CHECK(client.value("SELECT count(*) FROM orders WHERE note = 'mine'") == "2");
    PgResult commit = client.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    CHECK(f.rows_on(0, "note = 'mine'").size() == 1u);
    CHECK(f.rows_on(1, "note = 'mine'").size() == 1u);
    CHECK(prepared_or_idle(f) == 0);
    CHECK(copy_out(other, "COPY orders TO STDOUT").tag == "COPY 8");
    // The copy first, with the BEGIN still deferred: every shard joins for it; a write after it
    // is seen by the next copy, and ROLLBACK undoes it.
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(copy_out(client, "COPY orders TO STDOUT").tag == "COPY 8");
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(t.c) + ", 'mine', 1000)"));
    check_copies(client, 9, 3);
    REQUIRE_OK(client.exec("ROLLBACK"));
    CHECK(f.rows_on(2, "note = 'mine'").empty());
    CHECK(prepared_or_idle(f) == 0);
    CHECK(copy_out(client, "COPY orders TO STDOUT").tag == "COPY 8");
    // With other statements in its Query it is refused (the BEGIN deferred, or a leg attached),
    // failing the transaction.
    for (bool attached : {false, true}) {
      INFO("attached " << attached);
      REQUIRE_OK(client.exec("BEGIN"));
      if (attached) CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)) == "3");
      const CopyOut refused = copy_out(client, "COPY orders TO STDOUT; SELECT 1");
      CHECK(refused.sqlstate == "0A000");
      CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
      CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
    }
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE(
      "under cross_shard_transactions: refuse a COPY TO of every shard inside BEGIN is refused, naming it") {
    PROXY_ONLY();
    ShardedFixture f(refusing_cross_shard_transactions());
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 1);
    PgConn client = f.client();
    CHECK(copy_out(client, "COPY orders TO STDOUT").tag == "COPY 3");  // outside a transaction it runs
    check_refused_in_transaction(f, client, t, [&] {
      PGresult* refused = PQexec(client.get(), "COPY orders TO STDOUT");
      const char* state = PQresultErrorField(refused, PG_DIAG_SQLSTATE);
      std::pair<std::string, std::string> out(state != nullptr ? state : "", PQresultErrorMessage(refused));
      PQclear(refused);
      return out;
    });
  }

  TEST_CASE("a shard failing mid-COPY fails the transaction on every shard: 25P02, COMMIT rolls back") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 3);
    zero_qty_on_s2(f);
    PgConn client = f.client();
    check_copy_failing_on_s2(f, client, t, 3, true);
    check_copy_failing_on_s2(f, client, t, 3, false);
    // The session goes on, in and out of a transaction.
    CHECK(copy_out(client, "COPY (SELECT id FROM orders WHERE qty > 0) TO STDOUT").tag == "COPY 8");
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(copy_out(client, "COPY (SELECT id FROM orders WHERE qty > 0) TO STDOUT").tag == "COPY 8");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("session pooling: COPY TO on the session's servers, in and out of BEGIN, and a failing one") {
    PROXY_ONLY();
    ShardedFixture f(session_pooling());
    INFO("proxy log:\n" << f.log_tail(40));
    const Tenants t;
    seed(f, t, 2);
    PgConn client = f.client();
    // The session's server on s0 (a statement naming no table runs on whichever leg is active).
    const std::string s0_pid = "SELECT pg_backend_pid() FROM orders WHERE tenant_id = " + k(t.a) + " LIMIT 1";
    const std::string pid = client.value(s0_pid);
    check_copies(client, 6, 0);
    CHECK(client.value(s0_pid) == pid);  // the session's server, kept
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, note, qty) VALUES (" + k(t.c) + ", 'mine', 1000)"));
    check_copies(client, 7, 1);
    REQUIRE_OK(client.exec("ROLLBACK"));
    CHECK(f.rows_on(2, "note = 'mine'").empty());
    CHECK(copy_out(client, "COPY orders TO STDOUT").tag == "COPY 6");
    // A copy failing on s2 outside a transaction: the session's servers are rolled back and kept.
    zero_qty_on_s2(f);
    const CopyOut failed = copy_out(client, "COPY (SELECT id, 100 / qty FROM orders) TO STDOUT");
    CHECK(failed.sqlstate == "22012");
    CHECK(failed.chunks.size() >= 4u);  // s0's and s1's rows came first
    CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    CHECK(copy_out(client, "COPY (SELECT id FROM orders WHERE qty > 0) TO STDOUT").tag == "COPY 5");
    CHECK(client.value(s0_pid) == pid);
    // Inside BEGIN, after writes on s0 and s1: the transaction fails on every shard.
    check_copy_failing_on_s2(f, client, t, 2, true);
    CHECK(client.value("SELECT count(*) FROM orders") == "6");
  }
}
