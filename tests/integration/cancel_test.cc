// Query cancel through shardwire: libpq's PQcancel cancels that client's running query and nothing
// else; a stale or forged cancel key cancels nothing; a cancelled read that spans shards stops on
// every shard.
#include "it_test.h"

#include "harness/sharded_fixture.h"

using namespace it;

TEST_SUITE("cancel") {
  TEST_CASE("PQcancel cancels that client's query and nothing else") {
    ProxyOptions o;
    o.pool_size = 4;
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw(), b = t.connect_or_throw(), c = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    CHECK(a.backend_pid() != 0);  // BackendKeyData was sent
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE(c.value("SELECT 'c-in-tx'") == "c-in-tx");

    REQUIRE(a.send("SELECT pg_sleep(30), 'a-not-cancelled'"));
    REQUIRE(b.send("SELECT pg_sleep(2), 'b-done'"));
    sleep_ms(500);
    std::string err;
    auto start = std::chrono::steady_clock::now();
    CHECK_MESSAGE(a.cancel(&err), "PQcancel failed: " << err);
    PgResult ra = a.wait_result(15s);
    INFO("a: " << ra.describe());
    CHECK(ra.sqlstate() == "57014");
    CHECK(contains(ra.error(), "canceling statement due to user request"));
    MESSAGE("the cancelled statement answered " << ms_since(start) << " ms after the CancelRequest");

    PgResult rb = b.wait_result(15s);
    CHECK_MESSAGE(rb.ok(), "b was affected: " << rb.describe());
    if (rb.ok()) CHECK(rb.value(0, 1) == "b-done");
    CHECK(c.value("SELECT 'c-still-in-tx'") == "c-still-in-tx");
    CHECK_OK(c.exec("COMMIT"));
    CHECK(a.value("SELECT 'a-usable'") == "a-usable");
  }

  TEST_CASE("a cancel key whose server has moved on to another client cancels nothing") {
    ProxyOptions o;
    o.pool_size = 1;
    o.workers = 1;  // exact server counts; the multi-worker cap has its own test
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw(), b = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    std::string a_backend = a.value("SELECT pg_backend_pid()");  // a's transaction is over
    REQUIRE(b.send("SELECT pg_sleep(1.5), 'b-survived', pg_backend_pid()"));
    sleep_ms(400);
    std::string err;
    a.cancel(&err);  // nothing of a's is running
    PgResult rb = b.wait_result(15s);
    CHECK_MESSAGE(rb.ok(), "b's query was cancelled by a's key: " << rb.describe());
    if (rb.ok() && !t.direct()) {
      CHECK(rb.value(0, 1) == "b-survived");
      CHECK_MESSAGE(rb.value(0, 2) == a_backend, "with pool.size 1, b ran on the server a had used");
    }
    CHECK(a.value("SELECT 'a-fine'") == "a-fine");
  }

  TEST_CASE("a CancelRequest with a wrong key cancels nothing and is closed") {
    Target t(shared_cluster());
    PgConn a = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE(a.send("SELECT pg_sleep(1.5), 'a-survived'"));
    sleep_ms(300);
    uint32_t pid = static_cast<uint32_t>(a.backend_pid());
    for (uint32_t key : {0u, 1u, 0xdeadbeefu}) {
      RawSocket s(t.port());
      REQUIRE(s.send_all(wire::cancel_request(pid, key)));
      std::string got = s.read_until_closed(5s);
      CHECK(s.closed());
      CHECK_MESSAGE(got.empty(), "a CancelRequest gets no reply, got " << wire::printable(got));
    }
    PgResult ra = a.wait_result(15s);
    CHECK_MESSAGE(ra.ok(), ra.describe());
  }

  TEST_CASE("cancel in session mode") {
    ProxyOptions o;
    o.pool_mode = "session";
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw(), b = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE(a.send("SELECT pg_sleep(30)"));
    REQUIRE(b.send("SELECT pg_sleep(1), 'b-done'"));
    sleep_ms(300);
    std::string err;
    CHECK_MESSAGE(a.cancel(&err), err);
    CHECK(a.wait_result(10s).sqlstate() == "57014");
    PgResult rb = b.wait_result(10s);
    CHECK_MESSAGE(rb.ok(), rb.describe());
    CHECK(a.value("SELECT 'a-after'") == "a-after");
  }

  TEST_CASE("a CancelRequest cancels every shard of a merged or concatenated read; none keeps running it") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    for (int64_t key : spread_keys(30, 9)) {
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'x')"));
    }
    for (int s = 0; s < kShards; ++s) REQUIRE_FALSE(f.rows_on(s).empty());
    PgConn admin = f.setup.cluster().admin("postgres");
    const std::string running =
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE "
        "'%pg_sleep(30)%' AND pid <> pg_backend_pid()";
    for (const char* slow : {"SELECT note, count(*) FROM orders WHERE pg_sleep(30) IS NOT NULL GROUP BY note",
                             "SELECT note FROM orders WHERE pg_sleep(30) IS NOT NULL"}) {
      INFO(slow);
      REQUIRE(c.send(slow));
      bool sleeping = false;  // the fault: every shard is running the statement
      for (int i = 0; i < 50 && !sleeping; ++i) {
        sleeping = admin.value(running) == std::to_string(kShards);
        if (!sleeping) sleep_ms(100);
      }
      REQUIRE(sleeping);
      std::string err;
      const auto start = std::chrono::steady_clock::now();
      CHECK_MESSAGE(c.cancel(&err), "PQcancel failed: " << err);
      PgResult r = c.wait_result(20s);
      INFO(r.describe() << "\n" << f.log_tail());
      CHECK(r.sqlstate() == "57014");  // cancelled, not the 30 s sleeps run out
      MESSAGE("the read answered " << ms_since(start) << " ms after the CancelRequest");
      bool stopped = false;
      for (int i = 0; i < 50 && !stopped; ++i) {
        stopped = admin.value(running) == "0";
        if (!stopped) sleep_ms(100);
      }
      CHECK_MESSAGE(stopped, "a shard still runs the cancelled query");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
      CHECK(c.value("SELECT count(*) FROM orders") == "30");
    }
  }

  // A CancelRequest that reaches the server after the statement it targets finished must cancel
  // nothing: on PostgreSQL an idle backend drops it. In transaction pooling the server may run
  // another client's statement by then: shardwire forwarded the cancel on a new connection to
  // the server and meanwhile handed the server to the client waiting for it, whose statement
  // PostgreSQL then cancelled.
  TEST_CASE("a cancel arriving after its statement finished cancels no other client's statement") {
    PROXY_ONLY();
    ProxyOptions o;
    o.pool_size = 1;  // the waiting client gets the very server the cancel goes to
    o.workers = 1;
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw(), b = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    int a_cancelled = 0;
    for (int round = 0; round < 24; ++round) {
      CAPTURE(round);
      // Statements shorter than a cancel takes to reach PostgreSQL, some as long.
      const std::string a_sleep = std::to_string((round % 4) * 0.001);
      REQUIRE(a.send("SELECT pg_sleep(" + a_sleep + ")"));
      sleep_ms(1);
      REQUIRE(b.send("SELECT pg_sleep(0.1), 'b-done'"));  // waits for a's server
      std::string err;
      CHECK_MESSAGE(a.cancel(&err), err);
      PgResult ra = a.wait_result(10s);
      if (!ra.ok()) {
        CHECK(ra.sqlstate() == "57014");
        ++a_cancelled;
      }
      PgResult rb = b.wait_result(10s);
      REQUIRE_MESSAGE(rb.ok(), "b's statement was cancelled by a's cancel: " << rb.describe());
      CHECK(rb.value(0, 1) == "b-done");
    }
    MESSAGE(a_cancelled << " of 24 statements of a were cancelled in time");
  }

  // A client's PQcancel returns once the server has received the cancel (libpq waits for the
  // connection to close, as pgjdbc's statement timeout waits for it): the client's next statement
  // must not be hit by it. Shardwire closed the client's cancel connection before forwarding it.
  TEST_CASE("a cancel arriving after its statement finished cancels not the client's next one") {
    PROXY_ONLY();
    ProxyOptions o;
    o.pool_mode = "session";
    o.workers = 1;
    Target t(shared_cluster(), o);
    PgConn a = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    for (int round = 0; round < 24; ++round) {
      CAPTURE(round);
      const std::string a_sleep = std::to_string((round % 4) * 0.001);
      REQUIRE(a.send("SELECT pg_sleep(" + a_sleep + ")"));
      std::string err;
      CHECK_MESSAGE(a.cancel(&err), err);
      PgResult first = a.wait_result(10s);
      if (!first.ok()) CHECK(first.sqlstate() == "57014");
      PgResult next = a.exec("SELECT pg_sleep(0.05), 'next-done'");
      REQUIRE_MESSAGE(next.ok(), "the next statement was cancelled: " << next.describe());
    }
  }

  // The same for a statement on several shards: the client's cancel connection closes only once
  // every shard's cancel was delivered. In session pooling the client's next statement runs on
  // the same servers, where a cancel still on its way would fail it.
  TEST_CASE("a cancel of a read on several shards arriving after it finished cancels not the next one") {
    PROXY_ONLY();
    ShardedFixture f(session_pooling());
    PgConn a = f.client();
    for (int s = 0; s < kShards; ++s)
      REQUIRE_OK(a.exec("INSERT INTO orders (tenant_id, note) VALUES (" +
                        std::to_string(tenant_on(s, kShards)) + ", 'x')"));
    INFO("proxy log:\n" << f.log_tail());
    int cancelled = 0;
    for (int round = 0; round < 32; ++round) {
      CAPTURE(round);
      // One row per shard: each shard sleeps once. Merged (count) and concatenated reads.
      const std::string sleep = std::to_string((round % 4) * 0.001);
      const std::string read = round % 2 == 0
                                   ? "SELECT count(*) FROM orders WHERE pg_sleep(" + sleep + ") IS NOT NULL"
                                   : "SELECT note FROM orders WHERE pg_sleep(" + sleep + ") IS NOT NULL";
      REQUIRE(a.send(read));
      std::string err;
      CHECK_MESSAGE(a.cancel(&err), err);
      PgResult first = a.wait_result(10s);
      if (!first.ok()) {
        CHECK(first.sqlstate() == "57014");
        ++cancelled;
      }
      PgResult next = a.exec("SELECT count(*) FROM orders WHERE pg_sleep(0.05) IS NOT NULL");
      REQUIRE_MESSAGE(next.ok(), "the next statement was cancelled: " << next.describe());
      CHECK(next.value() == std::to_string(kShards));
    }
    MESSAGE(cancelled << " of 32 reads were cancelled in time");
  }
}  // TEST_SUITE
