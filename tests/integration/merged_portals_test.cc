// A keyless read's portal inside a client's transaction block, through shardwire on 3 real shards
// with a catalog (docs/architecture.md §5.6): an Execute with a row limit answers PortalSuspended
// and ReadyForQuery `T`, and the portal's next Executes (pgjdbc's fetch size: Execute + Sync each)
// continue the merge where it stopped, across the Syncs, until CommandComplete with that
// Execute's row count (PortalSuspended when exactly the rows left were asked, as PostgreSQL); the
// transaction's own rows are in it; 60 000 rows paged 1000 at a time come once each, in order;
// another statement before the next Execute ends the portal (its rows dropped) and that Execute is
// then refused (0A000, the transaction failed); an error in a later fetch fails the transaction
// on every shard, and one among the rows a left portal drops fails it too (25P02 next); session
// pooling the same.
#include "it_test.h"

#include "harness/sharded_fixture.h"
#include "merged_transactions_support.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;
using namespace it::merged_txn;

namespace {

const std::string kPortal = "p1";

// Parse, Bind (portal p1, text results), Describe portal, Execute(max_rows), Sync.
std::string first_batch(const std::string& sql, uint32_t max_rows) {
  std::string out = wire::message('P', std::string(1, '\0') + sql + std::string(3, '\0'));
  out += wire::message('B', kPortal + std::string(1, '\0') + std::string(1, '\0') + std::string(6, '\0'));
  out += wire::message('D', "P" + kPortal + std::string(1, '\0'));
  out += wire::message('E', kPortal + std::string(1, '\0') + wire::be32(max_rows));
  out += wire::message('S', "");
  return out;
}

// The portal's next Execute, then Sync.
std::vector<wire::Message> execute(PgConn& client, uint32_t max_rows) {
  return raw_batch(client, wire::message('E', kPortal + std::string(1, '\0') + wire::be32(max_rows)) +
                               wire::message('S', ""));
}

// The one-column DataRows' text values, comma-separated.
std::string values(const std::vector<wire::Message>& answer) {
  std::string out;
  for (const wire::Message& m : answer) {
    if (m.type == 'D') {
      if (!out.empty()) out += ',';
      out += m.body.substr(6);
    }
  }
  return out;
}

long count_rows(const std::vector<wire::Message>& answer) {
  long n = 0;
  for (const wire::Message& m : answer) n += m.type == 'D' ? 1 : 0;
  return n;
}

}  // namespace

TEST_SUITE("merged_portals") {
  TEST_CASE(
      "an Execute row limit inside BEGIN: PortalSuspended, the portal's next Executes continue the merge") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 4);  // qty 1..4 on each shard
    PgConn client = f.client();
    for (bool interrupted : {false, true}) {
      INFO("interrupted " << interrupted);
      REQUIRE_OK(client.exec("BEGIN"));
      REQUIRE_OK(
          client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.b) + ", 600, 'p', 50)"));
      const auto answer = raw_batch(client, first_batch("SELECT qty FROM orders ORDER BY qty DESC", 2));
      INFO("first: " << kinds(answer));
      REQUIRE(kinds(answer) == "12TDDsZ");
      CHECK(values(answer) == "50,4");  // the transaction's own row first
      CHECK(answer.back().body == "T");
      if (interrupted) {
        // Another statement first: the portal ends (the legs' rows are read and dropped), the
        // statement runs on the legs, and a later Execute of the portal is refused.
        CHECK(client.value("SELECT count(*) FROM orders") == "13");
        const auto next = execute(client, 2);
        INFO("next: " << kinds(next));
        REQUIRE(!next.empty());
        CHECK(next.front().type == 'E');
        CHECK(wire::parse_error(next.front().body).sqlstate() == "0A000");
        CHECK(contains(wire::parse_error(next.front().body).message(), "continues a portal"));
        CHECK(next.back().body == "E");
        CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
        CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
        CHECK(f.rows_on(1, "note = 'p'").empty());
        continue;
      }
      // pgjdbc's next fetches: Execute of the same portal, Sync; the merge goes on where it
      // stopped, across the Syncs, until CommandComplete (with that Execute's row count).
      const auto second = execute(client, 2);
      INFO("second: " << kinds(second));
      CHECK(kinds(second) == "DDsZ");
      CHECK(values(second) == "4,4");
      CHECK(second.back().body == "T");
      const auto third = execute(client, 9);  // exactly the rows left: PortalSuspended, as PostgreSQL
      INFO("third: " << kinds(third));
      CHECK(kinds(third) == "DDDDDDDDDsZ");
      CHECK(values(third) == "3,3,3,2,2,2,1,1,1");
      const auto last = execute(client, 5);
      INFO("last: " << kinds(last));
      REQUIRE(kinds(last) == "CZ");
      CHECK(last.front().body == std::string("SELECT 0") + std::string(1, '\0'));
      CHECK(last.back().body == "T");
      CHECK(client.value("SELECT count(*) FROM orders WHERE note = 'p'") == "1");
      CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
      CHECK(f.rows_on(1, "note = 'p'").size() == 1u);
      CHECK(prepared_or_idle(f) == 0);
      REQUIRE_OK(client.exec("DELETE FROM orders WHERE tenant_id = " + k(t.b) + " AND note = 'p'"));
    }
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE(
      "60 000 rows paged 1000 at a time inside BEGIN: each once, in order; a failing later fetch fails it") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    seed(f, t, 20000);  // more than fanout.max_rows_buffered per leg: legs wait paused between fetches
    PgConn client = f.client();
    REQUIRE_OK(client.exec("BEGIN"));
    auto answer = raw_batch(client, first_batch("SELECT qty FROM orders ORDER BY qty", 1000));
    REQUIRE(kinds(answer).substr(0, 3) == "12T");
    long rows = count_rows(answer);
    long previous = 0;
    bool ordered = true;
    int fetches = 1;
    std::string last_kinds = kinds(answer);
    while (!last_kinds.empty() && last_kinds.find('C') == std::string::npos && fetches < 100) {
      for (const wire::Message& m : answer) {
        if (m.type != 'D') continue;
        const long qty = std::stol(m.body.substr(6));
        ordered = ordered && qty >= previous;
        previous = qty;
      }
      answer = execute(client, 1000);
      last_kinds = kinds(answer);
      rows += count_rows(answer);
      ++fetches;
      INFO("fetch " << fetches << ": " << kinds(answer));
      REQUIRE(!answer.empty());
      REQUIRE(answer.back().type == 'Z');
      CHECK(answer.back().body == "T");
    }
    CHECK(ordered);
    CHECK(rows == 60000);
    CHECK(fetches == 61);  // 60 full fetches (the last one exactly the rows left), then SELECT 0
    CHECK(answer.front().body == std::string("SELECT 0") + std::string(1, '\0'));
    CHECK(client.value("SELECT count(*) FROM orders") == "60000");  // every leg usable after it
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(prepared_or_idle(f) == 0);
    // Another statement after the first fetch: the legs' 59 000 other rows are read and dropped.
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(kinds(raw_batch(client, first_batch("SELECT qty FROM orders ORDER BY qty", 1000))).substr(0, 3) ==
          "12T");
    CHECK(client.value("SELECT count(*) FROM orders WHERE qty > 19999") == "3");
    CHECK(client.exec("COMMIT").command_tag() == "COMMIT");
    CHECK(prepared_or_idle(f) == 0);
    // qty 0 on s2's last row: the first fetch has its rows, the next one reaches it.
    {
      PgConn shard2 = f.setup.shard(2);
      REQUIRE_OK(shard2.exec("UPDATE orders SET qty = 0 WHERE id = 20000"));
    }
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.a) +
                           ", 30000, 'lost', 5)"));
    const auto first = raw_batch(client, first_batch("SELECT 100 / qty FROM orders", 2));
    INFO("first: " << kinds(first));
    CHECK(kinds(first) == "12TDDsZ");
    const auto rest = execute(client, 0);
    REQUIRE(rest.size() >= 2);
    const wire::Message& error = rest[rest.size() - 2];
    REQUIRE(error.type == 'E');
    CHECK(wire::parse_error(error.body).sqlstate() == "22012");  // the fault fired, in the later fetch
    CHECK(rest.back().body == "E");
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
    CHECK(f.rows_on(0, "note = 'lost'").empty());
    CHECK(prepared_or_idle(f) == 0);
    // The same error among the rows a left portal drops: the statement after it finds the
    // transaction failed (25P02), and the proxy says why.
    REQUIRE_OK(client.exec("BEGIN"));
    CHECK(kinds(raw_batch(client, first_batch("SELECT 100 / qty FROM orders", 2))) == "12TDDsZ");
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
    CHECK(f.proxy->wait_for_log("rows of a portal the client left were dropped", 5s));
    CHECK(prepared_or_idle(f) == 0);
  }

  TEST_CASE("session pooling: a portal paged inside BEGIN on the session's servers") {
    PROXY_ONLY();
    ShardedFixture f(session_pooling());
    INFO("proxy log:\n" << f.log_tail(40));
    const Tenants t;
    seed(f, t, 3);  // qty 1..3 on each shard
    PgConn client = f.client();
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)) == "3");  // a server on s0
    REQUIRE_OK(client.exec("BEGIN"));
    REQUIRE_OK(
        client.exec("INSERT INTO orders (tenant_id, id, note, qty) VALUES (" + k(t.c) + ", 700, 's', 9)"));
    const auto first = raw_batch(client, first_batch("SELECT qty FROM orders ORDER BY qty DESC", 4));
    INFO("first: " << kinds(first));
    CHECK(kinds(first) == "12TDDDDsZ");
    CHECK(values(first) == "9,3,3,3");
    const auto rest = execute(client, 100);
    INFO("rest: " << kinds(rest));
    CHECK(kinds(rest) == "DDDDDDCZ");
    CHECK(values(rest) == "2,2,2,1,1,1");
    CHECK(rest[rest.size() - 2].body == std::string("SELECT 6") + std::string(1, '\0'));
    CHECK(client.exec("ROLLBACK").command_tag() == "ROLLBACK");
    CHECK(f.rows_on(2, "note = 's'").empty());
    CHECK(client.value("SELECT count(*) FROM orders") == "9");
    CHECK(prepared_or_idle(f) == 0);
  }
}
