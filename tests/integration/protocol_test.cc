// Both query protocols relayed exactly through shardwire: pipelines with an error in the middle,
// Flush, COPY both ways (and failing), ParameterStatus, notices, large messages, binary formats.
#include <arpa/inet.h>
#include <poll.h>

#include <array>
#include <cstring>

#include "it_test.h"
#include "pipeline_results.h"
#include "pool_modes.h"
#include "wire/messages.h"

using namespace it;

TEST_SUITE("protocol") {
  TEST_CASE("extended-protocol pipeline with an error in the middle skips to Sync, then carries on") {
    Target t(shared_cluster());
    PgConn conn = t.connect_or_throw();
    PGconn* c = conn.get();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE(PQenterPipelineMode(c) == 1);
    REQUIRE(PQsendQueryParams(c, "SELECT 1", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    REQUIRE(PQsendQueryParams(c, "SELECT 1/0", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    REQUIRE(PQsendQueryParams(c, "SELECT 3", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    REQUIRE(PQpipelineSync(c) == 1);
    REQUIRE(PQsendQueryParams(c, "SELECT $1::int + 1", 1, nullptr, std::vector<const char*>{"41"}.data(),
                              nullptr, nullptr, 0) == 1);
    REQUIRE(PQpipelineSync(c) == 1);
    REQUIRE(PQflush(c) == 0);
    auto deadline = Clock::now() + 20s;
    std::string v, state;
    CHECK(next_status(c, deadline, &v) == "PGRES_TUPLES_OK");
    CHECK(v == "1");
    CHECK(next_status(c, deadline) == "NULL");
    CHECK(next_status(c, deadline, nullptr, &state) == "PGRES_FATAL_ERROR");
    CHECK(state == "22012");
    CHECK(next_status(c, deadline) == "NULL");
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_ABORTED");
    CHECK(next_status(c, deadline) == "NULL");
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
    v.clear();
    CHECK(next_status(c, deadline, &v) == "PGRES_TUPLES_OK");
    CHECK(v == "42");
    CHECK(next_status(c, deadline) == "NULL");
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
    CHECK(PQexitPipelineMode(c) == 1);
    CHECK(conn.value("SELECT 'after-pipeline'") == "after-pipeline");
  }

  TEST_CASE("pipelined transaction of 200 inserts commits atomically") {
    Target t(shared_cluster());
    std::string table = unique_name("pipe_tx");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int PRIMARY KEY)"));
    PgConn conn = t.connect_or_throw();
    PGconn* c = conn.get();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE(PQenterPipelineMode(c) == 1);
    REQUIRE(PQsendQueryParams(c, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    std::string insert = "INSERT INTO " + table + " VALUES ($1::int)";
    for (int i = 1; i <= 200; ++i) {
      std::string s = std::to_string(i);
      const char* vals[1] = {s.c_str()};
      REQUIRE(PQsendQueryParams(c, insert.c_str(), 1, nullptr, vals, nullptr, nullptr, 0) == 1);
    }
    REQUIRE(PQsendQueryParams(c, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    REQUIRE(PQpipelineSync(c) == 1);
    auto deadline = Clock::now() + 30s;
    int ok = 0, received = 0;
    std::string first_bad;
    for (int i = 0; i < 202; ++i) {
      std::string st = next_status(c, deadline);
      if (st == "TIMEOUT") break;
      ++received;
      ok += st == "PGRES_COMMAND_OK";
      if (st != "PGRES_COMMAND_OK" && first_bad.empty())
        first_bad = "result " + std::to_string(i) + ": " + st;
      std::string end = next_status(c, deadline);
      if (end != "NULL" && first_bad.empty()) first_bad = "after result " + std::to_string(i) + ": " + end;
      if (end == "TIMEOUT") break;
    }
    INFO("results received: " << received << " of 202; first unexpected: " << first_bad);
    REQUIRE(received == 202);
    CHECK(ok == 202);
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
    CHECK(PQexitPipelineMode(c) == 1);
    CHECK(admin.value("SELECT count(*) FROM " + table) == "200");
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("Flush returns results before Sync") {
    Target t(shared_cluster());
    PgConn conn = t.connect_or_throw();
    PGconn* c = conn.get();
    INFO("proxy log:\n" << t.log_tail());
    REQUIRE(PQenterPipelineMode(c) == 1);
    REQUIRE(PQsendQueryParams(c, "SELECT 7", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
    REQUIRE(PQsendFlushRequest(c) == 1);
    REQUIRE(PQflush(c) == 0);
    auto deadline = Clock::now() + 10s;
    std::string v;
    CHECK(next_status(c, deadline, &v) == "PGRES_TUPLES_OK");  // no Sync sent yet
    CHECK(v == "7");
    CHECK(next_status(c, deadline) == "NULL");
    REQUIRE(PQpipelineSync(c) == 1);
    CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
    CHECK(PQexitPipelineMode(c) == 1);
    CHECK(conn.value("SELECT 8") == "8");
  }

  // asyncpg prepares with Parse, Describe(statement), Flush and waits for the description before
  // it sends anything else: every answer owed so far must come without a Sync, whether the proxy
  // answers the Parse itself (a statement some server validated) or a server does.
  TEST_CASE("Flush after Parse and Describe(statement) returns the descriptions, in both pool modes") {
    for_each_pool_mode([&](Target& t, const std::string& mode) {
      const std::string known = "SELECT $1::int + 1 AS flushed_" + mode;
      PgConn conn = t.connect_or_throw();
      PGconn* c = conn.get();
      PGresult* warm = PQprepare(c, "warm", known.c_str(), 0, nullptr);  // a server validates `known`
      REQUIRE(PQresultStatus(warm) == PGRES_COMMAND_OK);
      PQclear(warm);
      REQUIRE(PQenterPipelineMode(c) == 1);
      for (const std::string& sql : {known, "SELECT $1::text AS never_prepared_" + mode}) {
        CAPTURE(sql);
        const std::string name = 's' + std::to_string(sql.size());
        REQUIRE(PQsendPrepare(c, name.c_str(), sql.c_str(), 0, nullptr) == 1);
        REQUIRE(PQsendDescribePrepared(c, name.c_str()) == 1);
        REQUIRE(PQsendFlushRequest(c) == 1);
        REQUIRE(PQflush(c) == 0);
        auto deadline = Clock::now() + 10s;
        CHECK(next_status(c, deadline) == "PGRES_COMMAND_OK");  // ParseComplete
        CHECK(next_status(c, deadline) == "NULL");
        auto [timed_out, description] = next_result(c, deadline);
        REQUIRE_FALSE(timed_out);  // no Sync was sent: only the Flush can bring it
        REQUIRE(description != nullptr);
        CHECK(PQresultStatus(description) == PGRES_COMMAND_OK);
        CHECK(PQnparams(description) == 1);
        CHECK(PQnfields(description) == 1);
        PQclear(description);
        CHECK(next_status(c, deadline) == "NULL");
      }
      REQUIRE(PQpipelineSync(c) == 1);
      CHECK(next_status(c, Clock::now() + 10s) == "PGRES_PIPELINE_SYNC");
      CHECK(PQexitPipelineMode(c) == 1);
      PGresult* r = PQexecPrepared(c, ("s" + std::to_string(known.size())).c_str(), 1,
                                   std::array<const char*, 1>{"41"}.data(), nullptr, nullptr, 0);
      REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
      CHECK(std::string(PQgetvalue(r, 0, 0)) == "42");
      PQclear(r);
    });
  }

  TEST_CASE("parameters, NULLs, binary formats, Describe") {
    Target t(shared_cluster());
    PgConn conn = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    PgResult r = conn.exec_params("SELECT $1::int + 1, $2::text IS NULL, $3::text",
                                  {"41", std::nullopt, "it's \"quoted\""});
    REQUIRE_MESSAGE(r.ok(), r.describe());
    CHECK(r.value(0, 0) == "42");
    CHECK(r.value(0, 1) == "t");
    CHECK(r.value(0, 2) == "it's \"quoted\"");

    // Binary parameter and binary result.
    uint32_t be = htonl(41);
    const char* vals[1] = {reinterpret_cast<const char*>(&be)};
    int lens[1] = {4};
    int fmts[1] = {1};
    Oid types[1] = {23};
    REQUIRE(PQsendQueryParams(conn.get(), "SELECT $1::int4 + 1", 1, types, vals, lens, fmts, 1) == 1);
    PgResult b = conn.wait_result(10s);
    REQUIRE_MESSAGE(b.ok(), b.describe());
    REQUIRE(b.value(0, 0).size() == 4);
    uint32_t got;
    std::memcpy(&got, b.value(0, 0).data(), 4);
    CHECK(ntohl(got) == 42);

    // Describe of a prepared statement.
    REQUIRE_OK(conn.prepare("describe_me", "SELECT $1::int AS a, $2::text AS b"));
    REQUIRE(PQsendDescribePrepared(conn.get(), "describe_me") == 1);
    auto [timed_out, res] = next_result(conn.get(), Clock::now() + 10s);
    REQUIRE_FALSE(timed_out);
    REQUIRE(res != nullptr);
    CHECK(PQresultStatus(res) == PGRES_COMMAND_OK);
    CHECK(PQnparams(res) == 2);
    CHECK(PQparamtype(res, 0) == 23);
    CHECK(PQnfields(res) == 2);
    CHECK(std::string(PQfname(res, 1)) == "b");
    PQclear(res);
    while (auto n = next_result(conn.get(), Clock::now() + 5s).second) PQclear(n);
    CHECK(conn.value("SELECT 'after-describe'") == "after-describe");
  }

  TEST_CASE("COPY FROM STDIN / TO STDOUT through libpq, a failing COPY, a client-aborted COPY") {
    Target t(shared_cluster());
    std::string table = unique_name("copy_lib");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int, payload text)"));
    PgConn conn = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());

    PgResult start = conn.exec("COPY " + table + " FROM STDIN");
    REQUIRE_MESSAGE(start.status() == PGRES_COPY_IN, start.describe());
    const int rows = 100000;
    std::string chunk;
    for (int i = 1; i <= rows; ++i) {
      chunk += std::to_string(i) + "\tpayload-" + std::to_string(i) + "\n";
      if (chunk.size() > 7000 || i == rows) {  // odd-sized CopyData messages, split mid-row
        size_t half = chunk.size() / 3;
        REQUIRE(PQputCopyData(conn.get(), chunk.data(), static_cast<int>(half)) == 1);
        REQUIRE(PQputCopyData(conn.get(), chunk.data() + half, static_cast<int>(chunk.size() - half)) == 1);
        chunk.clear();
      }
    }
    REQUIRE(PQputCopyEnd(conn.get(), nullptr) == 1);
    PgResult done = conn.wait_result(60s);
    REQUIRE_MESSAGE(done.ok(), done.describe());
    CHECK(done.command_tag() == "COPY " + std::to_string(rows));

    PgResult out = conn.exec("COPY (SELECT * FROM " + table + " ORDER BY id) TO STDOUT");
    REQUIRE_MESSAGE(out.status() == PGRES_COPY_OUT, out.describe());
    size_t lines = 0, bytes = 0;
    std::string last;
    auto deadline = Clock::now() + 60s;
    while (true) {
      char* buf = nullptr;
      int n = PQgetCopyData(conn.get(), &buf, 1);
      if (n > 0) {
        ++lines;
        bytes += static_cast<size_t>(n);
        last.assign(buf, static_cast<size_t>(n));
        PQfreemem(buf);
      } else if (n == 0) {
        REQUIRE_MESSAGE(Clock::now() < deadline, "COPY OUT stalled");
        pollfd p{PQsocket(conn.get()), POLLIN, 0};
        poll(&p, 1, 500);
        PQconsumeInput(conn.get());
      } else {
        break;
      }
    }
    CHECK(lines == static_cast<size_t>(rows));
    CHECK(last == std::to_string(rows) + "\tpayload-" + std::to_string(rows) + "\n");
    PgResult out_done = conn.wait_result(10s);
    CHECK_MESSAGE(out_done.ok(), out_done.describe());
    CHECK(bytes > 1000000);

    // Bad data: the server's error ends the COPY; the connection stays usable.
    REQUIRE(conn.exec("COPY " + table + " FROM STDIN").status() == PGRES_COPY_IN);
    std::string bad = "1\tok\nnot-a-number\tbad\n";
    REQUIRE(PQputCopyData(conn.get(), bad.data(), static_cast<int>(bad.size())) == 1);
    REQUIRE(PQputCopyEnd(conn.get(), nullptr) == 1);
    PgResult failed = conn.wait_result(10s);
    CHECK(failed.sqlstate() == "22P02");
    CHECK(conn.value("SELECT 'usable-after-bad-copy'") == "usable-after-bad-copy");

    // The client aborts: CopyFail.
    REQUIRE(conn.exec("COPY " + table + " FROM STDIN").status() == PGRES_COPY_IN);
    std::string some = "5\tx\n";
    REQUIRE(PQputCopyData(conn.get(), some.data(), static_cast<int>(some.size())) == 1);
    REQUIRE(PQputCopyEnd(conn.get(), "client gave up") == 1);
    PgResult aborted = conn.wait_result(10s);
    CHECK(aborted.sqlstate() == "57014");
    CHECK(contains(aborted.error(), "client gave up"));
    CHECK(conn.value("SELECT count(*) FROM " + table) == std::to_string(rows));
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("ParameterStatus, notices, empty query, transaction status, multi-statement errors") {
    Target t(shared_cluster());
    PgConn conn = t.connect_or_throw("sslmode=disable application_name=ps_start");
    INFO("proxy log:\n" << t.log_tail());
    CHECK(conn.parameter("server_version").rfind("15", 0) == 0);
    CHECK(conn.parameter("client_encoding") == "UTF8");
    CHECK(conn.parameter("standard_conforming_strings") == "on");
    CHECK(conn.parameter("integer_datetimes") == "on");
    CHECK(conn.parameter("application_name") == "ps_start");
    REQUIRE_OK(conn.exec("SET application_name = 'ps_changed'"));
    CHECK(conn.parameter("application_name") == "ps_changed");
    REQUIRE_OK(conn.exec("SET TimeZone = 'Asia/Tokyo'"));
    CHECK(conn.parameter("TimeZone") == "Asia/Tokyo");

    PgResult n = conn.exec("DO $$ BEGIN RAISE NOTICE 'n-one'; RAISE WARNING 'w-two'; END $$");
    CHECK_MESSAGE(n.ok(), n.describe());
    REQUIRE(conn.notices().size() >= 2);
    CHECK(conn.notices()[conn.notices().size() - 2] == "n-one");
    CHECK(conn.notices().back() == "w-two");

    CHECK(conn.exec("").status() == PGRES_EMPTY_QUERY);

    CHECK(PQtransactionStatus(conn.get()) == PQTRANS_IDLE);
    REQUIRE_OK(conn.exec("BEGIN"));
    CHECK(PQtransactionStatus(conn.get()) == PQTRANS_INTRANS);
    CHECK(conn.exec("SELECT 1/0").sqlstate() == "22012");
    CHECK(PQtransactionStatus(conn.get()) == PQTRANS_INERROR);
    CHECK(conn.exec("SELECT 1").sqlstate() == "25P02");
    REQUIRE_OK(conn.exec("ROLLBACK"));
    CHECK(PQtransactionStatus(conn.get()) == PQTRANS_IDLE);

    PgResult multi = conn.exec("SELECT 1; SELECT 1/0; SELECT 3");
    CHECK(multi.sqlstate() == "22012");
    CHECK(conn.value("SELECT 'after-multi'") == "after-multi");

    std::string table = unique_name("multi_tx");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int)"));
    PgResult tx = conn.exec("BEGIN; INSERT INTO " + table + " VALUES (1); INSERT INTO " + table +
                            " VALUES (2); COMMIT");
    CHECK_MESSAGE(tx.ok(), tx.describe());
    CHECK(PQtransactionStatus(conn.get()) == PQTRANS_IDLE);
    CHECK(admin.value("SELECT count(*) FROM " + table) == "2");
    admin.exec("DROP TABLE " + table);
  }

  // psycopg runs non-autocommit: its SET client_encoding lands inside a transaction block and it
  // encodes by the ParameterStatus it gets (shardwire answered the SET itself and sent none, so
  // the server stored latin9 text for UTF-8). Every reported setting, in the extended protocol
  // too; ROLLBACK and a SET LOCAL's COMMIT report the value before.
  TEST_CASE("a SET inside a transaction block reports ParameterStatus as PostgreSQL does") {
    for_each_pool_mode([&](Target& t) {
      PgConn conn = t.connect_or_throw("sslmode=disable");
      REQUIRE_OK(conn.exec("BEGIN"));
      REQUIRE_OK(conn.exec("SET client_encoding TO latin9"));
      CHECK(conn.parameter("client_encoding") == "LATIN9");
      CHECK(PQclientEncoding(conn.get()) == pg_char_to_encoding("LATIN9"));
      REQUIRE_OK(conn.exec_params("SET DateStyle TO 'SQL, DMY'", {}));
      CHECK(conn.parameter("DateStyle") == "SQL, DMY");
      REQUIRE_OK(conn.exec("SET LOCAL TimeZone TO 'Asia/Tokyo'"));
      CHECK(conn.parameter("TimeZone") == "Asia/Tokyo");
      REQUIRE_OK(conn.exec("SET application_name TO 'in_block'"));
      CHECK(conn.parameter("application_name") == "in_block");
      CHECK(conn.value("SELECT current_setting('client_encoding')") == "LATIN9");
      REQUIRE_OK(conn.exec("ROLLBACK"));
      CHECK(conn.parameter("client_encoding") == "UTF8");
      CHECK(conn.parameter("DateStyle") == "ISO, MDY");
      CHECK(conn.parameter("TimeZone") != "Asia/Tokyo");
      CHECK(conn.parameter("application_name") != "in_block");
      CHECK(conn.value("SELECT current_setting('client_encoding')") == "UTF8");

      REQUIRE_OK(conn.exec("BEGIN"));
      REQUIRE_OK(conn.exec("SET IntervalStyle TO sql_standard"));
      CHECK(conn.parameter("IntervalStyle") == "sql_standard");
      REQUIRE_OK(conn.exec("COMMIT"));
      CHECK(conn.parameter("IntervalStyle") == "sql_standard");
      CHECK(conn.value("SELECT interval '1 day 2 hours'") == "1 2:00:00");
    });
  }

  // Transaction pooling shares server statements between clients ("sw_N"). A client that leaves
  // inside its transaction has its server rolled back, which keeps the statements: the next
  // client of that server (one server: the same) must find them prepared, not meet 42P05.
  TEST_CASE("the next client of a server rolled back after its client left inside a transaction") {
    ProxyOptions options;
    options.pool_size = 1;
    Target t(shared_cluster(), options);
    INFO("proxy log:\n" << t.log_tail());
    const std::string table = unique_name("left_in_transaction");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (v int)"));
    const std::string insert = "INSERT INTO " + table + " VALUES ($1)";
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      PgConn left = t.connect_or_throw();
      REQUIRE_OK(left.exec("BEGIN"));
      REQUIRE_OK(left.prepare("many", insert));
      CHECK_OK(left.exec_prepared("many", {"1"}));
      CHECK_OK(left.exec_prepared("many", {"2"}));
      left.reset();  // gone inside its transaction
      PgConn next = t.connect_or_throw();
      REQUIRE_OK(next.prepare("again", insert));
      CHECK_OK(next.exec_prepared("again", {"3"}));
      CHECK(next.value("SELECT count(*) FROM " + table) == std::to_string(round + 1));
    }
    admin.exec("DROP TABLE " + table);
  }

  // The server's error reaches shardwire before the client sent the rest of the batch and its
  // Sync (a Flush in between; on a loaded machine the same happens by timing): what the client
  // sends after it up to the Sync is skipped by the server, and so owes nothing (shardwire ended
  // the session with 08P01 "server sent an unexpected message" at the ReadyForQuery).
  TEST_CASE("an error answered before the rest of its pipeline and its Sync were sent") {
    for_each_pool_mode([&](Target& t) {
      PgConn conn = t.connect_or_throw();
      PGconn* c = conn.get();
      REQUIRE(PQenterPipelineMode(c) == 1);
      REQUIRE(PQsendQueryParams(c, "SELECT 1/0", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
      REQUIRE(PQsendFlushRequest(c) == 1);
      REQUIRE(PQflush(c) == 0);
      auto deadline = Clock::now() + std::chrono::seconds(10);
      std::string sqlstate;
      CHECK(next_status(c, deadline, nullptr, &sqlstate) == "PGRES_FATAL_ERROR");
      CHECK(sqlstate == "22012");
      CHECK(next_status(c, deadline) == "NULL");
      REQUIRE(PQsendQueryParams(c, "SELECT 2", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1);
      REQUIRE(PQsendPrepare(c, "after_error", "SELECT 3", 0, nullptr) == 1);
      REQUIRE(PQpipelineSync(c) == 1);
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_ABORTED");
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_ABORTED");
      CHECK(next_status(c, deadline) == "NULL");
      CHECK(next_status(c, deadline) == "PGRES_PIPELINE_SYNC");
      REQUIRE(PQexitPipelineMode(c) == 1);
      CHECK(conn.value("SELECT 4") == "4");
      CHECK_OK(conn.prepare("after_error", "SELECT 3"));  // skipped: it was never prepared
    });
  }

  // node-postgres's pg-cursor after an error in a stream: it sent the Sync already, then closes
  // its portal with Close and no Sync; the next query follows. PostgreSQL answers CloseComplete
  // (no portal is no error) and runs the query; shardwire waited for the rest of a batch that
  // never came (a hang).
  TEST_CASE("Close of a portal without Sync between transactions, then a Query") {
    for_each_pool_mode([&](Target& t) {
      PgConn conn = t.connect_or_throw();
      CHECK(conn.value("SELECT 1") == "1");
      RawSocket s = RawSocket::borrow(PQsocket(conn.get()));
      std::string out;
      sw::wire::encode_target(out, 'C', 'P', "stream_portal");
      sw::wire::encode_query(out, "SELECT 42");
      REQUIRE(s.send_all(out));
      std::string got;
      auto deadline = Clock::now() + std::chrono::seconds(5);
      while (Clock::now() < deadline && (got.size() < 6 || got[got.size() - 6] != 'Z'))
        got += s.read_some(std::chrono::milliseconds(500));
      REQUIRE_MESSAGE(got.size() >= 6, "no answer");
      CHECK(got.substr(0, 5) == std::string("3\0\0\0\4", 5));  // CloseComplete
      CHECK(got.find("42") != std::string::npos);
      CHECK(got.substr(got.size() - 6) == std::string("Z\0\0\0\5I", 6));
    });
  }

  TEST_CASE("large messages: a 5 MB query, a 20 MB result, a 16 MB field") {
    Target t(shared_cluster());
    PgConn conn = t.connect_or_throw();
    INFO("proxy log:\n" << t.log_tail());
    std::string big(5 * 1024 * 1024, 'q');
    CHECK(conn.value("SELECT length('" + big + "')", 60s) == std::to_string(big.size()));
    PgResult many = conn.exec("SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g", 60s);
    REQUIRE_MESSAGE(many.ok(), many.describe());
    CHECK(many.rows() == 200000);
    CHECK(many.value(199999, 0) == "200000");
    PgResult wide = conn.exec("SELECT repeat('y', 16 * 1024 * 1024)", 60s);
    REQUIRE_MESSAGE(wide.ok(), wide.describe());
    CHECK(wide.value(0, 0).size() == 16u * 1024 * 1024);
    PgResult p = conn.exec_params("SELECT length($1)", {std::string(3 * 1024 * 1024, 'p')}, 60s);
    REQUIRE_MESSAGE(p.ok(), p.describe());
    CHECK(p.value(0, 0) == std::to_string(3 * 1024 * 1024));
  }

}  // TEST_SUITE
