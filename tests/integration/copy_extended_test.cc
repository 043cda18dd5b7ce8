// COPY ... FROM STDIN in the extended protocol (libpq's PQsendQueryParams, pgjdbc's
// Statement.execute): Parse, Bind, Describe, Execute, Sync, then CopyData, CopyDone or CopyFail
// and another Sync. PostgreSQL ignores the Sync it reads while it copies in, so the two Syncs get
// one ReadyForQuery; shardwire waited for a second one and closed the session at the next
// request (08P01 "server sent an unexpected message"). In both pool modes (and straight with
// SHARDWIRE_IT_DIRECT=1): the rows are written, or the copy fails with its error, and the next
// query on the same connection runs, whether the client waits for the CopyInResponse or sends
// the whole exchange at once. Into a sharded table it is refused (the simple protocol only).
#include <algorithm>
#include <chrono>
#include <string>

#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "pool_modes.h"
#include "wire/messages.h"

using namespace it;

namespace {

// `COPY table FROM STDIN` in the extended protocol with `rows`, ended by CopyDone, or by CopyFail
// with `fail`: the COPY's result (its tag, or its error).
PgResult copy_extended(PgConn& conn, const std::string& table, const std::string& rows,
                       const char* fail = nullptr) {
  PgResult started = conn.exec_params("COPY " + table + " FROM STDIN", {});
  if (started.status() != PGRES_COPY_IN) return started;
  if (PQputCopyData(conn.get(), rows.data(), static_cast<int>(rows.size())) != 1 ||
      PQputCopyEnd(conn.get(), fail) != 1)
    return PgResult::failure("sending the copy: " + conn.error_message());
  return conn.wait_result(30s);
}

// The message types answering `bytes`, sent at once on `conn`'s socket (libpq does not see
// them: the connection is not used afterwards), read until `ready` ReadyForQuery came.
std::string answers_at_once(PgConn& conn, const std::string& bytes, int ready, std::string* last_value) {
  RawSocket s = RawSocket::borrow(PQsocket(conn.get()));
  REQUIRE(s.send_all(bytes));
  std::string got, types;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline && std::count(types.begin(), types.end(), 'Z') < ready &&
         !s.closed()) {
    got += s.read_some(500ms);
    types.clear();
    for (const wire::Message& m : wire::parse_messages(got)) {
      types.push_back(m.type);
      if (m.type == 'D') *last_value = m.body.substr(6);  // one column: count, length, value
    }
  }
  return types;
}

// Parse, Bind, Describe, Execute and Sync of `COPY table FROM STDIN`, its CopyData, CopyDone (or
// CopyFail with `fail`) and Sync, then a Query counting the table's rows.
std::string copy_exchange(const std::string& table, const std::string& rows, const char* fail) {
  std::string out;
  sw::wire::encode_parse(out, "", "COPY " + table + " FROM STDIN", {});
  sw::wire::encode_bind(out, "", "", std::string(6, '\0'));  // no formats, parameters, result formats
  sw::wire::encode_target(out, 'D', 'P', "");
  sw::wire::encode_execute(out, "", 0);
  sw::wire::encode_sync(out);
  out += wire::message('d', rows);
  out += fail != nullptr ? wire::message('f', std::string(fail) + '\0') : wire::message('c', "");
  sw::wire::encode_sync(out);
  sw::wire::encode_query(out, "SELECT count(*) FROM " + table);
  return out;
}

}  // namespace

TEST_SUITE("copy_extended") {
  TEST_CASE("COPY FROM STDIN in the extended protocol writes its rows and the next query runs") {
    const std::string table = unique_name("copy_ext");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int, note text)"));
    for_each_pool_mode([&](Target& t) {
      REQUIRE_OK(admin.exec("TRUNCATE " + table));
      PgConn conn = t.connect_or_throw();
      PgResult done = copy_extended(conn, table, "1\tone\n2\ttwo\n");
      REQUIRE_MESSAGE(done.ok(), done.describe());
      CHECK(done.command_tag() == "COPY 2");
      CHECK(PQtransactionStatus(conn.get()) == PQTRANS_IDLE);
      CHECK(conn.value("SELECT count(*) FROM " + table) == "2");
      CHECK(copy_extended(conn, table, "3\tthree\n").command_tag() == "COPY 1");
      CHECK(conn.exec_params("SELECT sum(id) FROM " + table, {}).value() == "6");
      // Inside a transaction block, then the simple protocol's COPY on the same connection.
      REQUIRE_OK(conn.exec("BEGIN"));
      CHECK(copy_extended(conn, table, "4\tfour\n").command_tag() == "COPY 1");
      CHECK(PQtransactionStatus(conn.get()) == PQTRANS_INTRANS);
      REQUIRE_OK(conn.exec("COMMIT"));
      REQUIRE(conn.exec("COPY " + table + " FROM STDIN").status() == PGRES_COPY_IN);
      REQUIRE(PQputCopyData(conn.get(), "5\tfive\n", 7) == 1);
      REQUIRE(PQputCopyEnd(conn.get(), nullptr) == 1);
      CHECK(conn.wait_result(10s).command_tag() == "COPY 1");
      CHECK(conn.value("SELECT sum(id) FROM " + table) == "15");
    });
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("COPY FROM STDIN in the extended protocol failed by CopyFail or bad data, the next query runs") {
    const std::string table = unique_name("copy_ext_fail");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int, note text)"));
    for_each_pool_mode([&](Target& t) {
      PgConn conn = t.connect_or_throw();
      PgResult aborted = copy_extended(conn, table, "1\tone\n", "client gave up");
      CHECK(aborted.sqlstate() == "57014");
      CHECK(contains(aborted.error(), "client gave up"));
      CHECK(conn.value("SELECT 'after-copyfail'") == "after-copyfail");
      PgResult bad = copy_extended(conn, table, "1\tok\nnot-a-number\tbad\n");
      CHECK(bad.sqlstate() == "22P02");
      CHECK(PQtransactionStatus(conn.get()) == PQTRANS_IDLE);
      CHECK(conn.exec_params("SELECT count(*) FROM " + table, {}).value() == "0");
    });
    admin.exec("DROP TABLE " + table);
  }

  // A client that sends the copy's end and Sync before the CopyInResponse came: the Sync before
  // the CopyData is ignored all the same.
  TEST_CASE("the whole extended-protocol COPY sent at once, CopyDone or CopyFail, then a Query") {
    const std::string table = unique_name("copy_ext_once");
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE " + table + " (id int, note text)"));
    for_each_pool_mode([&](Target& t) {
      REQUIRE_OK(admin.exec("TRUNCATE " + table));
      std::string count;
      PgConn done = t.connect_or_throw();
      CHECK(answers_at_once(done, copy_exchange(table, "1\tone\n2\ttwo\n", nullptr), 2, &count) ==
            "12nGCZTDCZ");
      CHECK(count == "2");
      PgConn failed = t.connect_or_throw();
      CHECK(answers_at_once(failed, copy_exchange(table, "3\tthree\n", "gave up"), 2, &count) ==
            "12nGEZTDCZ");
      CHECK(count == "2");
    });
    admin.exec("DROP TABLE " + table);
  }

  TEST_CASE("into a sharded table it is refused, into an unsharded one it runs on the default shard") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    INFO("proxy log:\n" << f.log_tail());
    PgResult refused = copy_extended(c, "orders", "1\t1\tx\t0\n");
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "runs only in the simple query protocol"));
    CHECK(c.value("SELECT count(*) FROM orders") == "0");
    REQUIRE_OK(c.exec("CREATE TABLE copy_ext_plain (id int)"));
    CHECK(copy_extended(c, "copy_ext_plain", "1\n2\n").command_tag() == "COPY 2");
    CHECK(c.value("SELECT sum(id) FROM copy_ext_plain") == "3");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
  }
}
