// Shards whose result columns differ (a DDL applied on some shards only): a read across them fails
// with 42804 naming both shards and the first difference, before any row of the other shape, and
// the session goes on (docs/architecture.md §5.6, "Same columns on every shard").
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fake_server.h"
#include "script_client.h"
#include "session_host.h"
#include "wire/message_writer.h"
#include "wire/messages.h"
#include "wire/row_description.h"

using namespace sw::test;

namespace {

constexpr uint32_t kText = 25;
constexpr uint32_t kInt4 = 23;

// A table column of `type` (the table OID and attribute differ between shards, as they may).
sw::wire::RowField column(std::string_view name, uint32_t type, uint32_t table) {
  sw::wire::RowField field = sw::wire::computed_column(name, type);
  field.table_oid = table;
  field.column = 1;
  return field;
}

// A result of `fields`, each row of `values` with one value per field.
std::string result(const std::vector<sw::wire::RowField>& fields,
                   const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  sw::wire::encode_row_description(out, fields);
  for (const auto& row : rows) {
    std::vector<std::optional<std::string>> values(row.begin(), row.end());
    sw::wire::encode_data_row(out, values);
  }
  sw::wire::encode_command_complete(out, "SELECT " + std::to_string(rows.size()));
  sw::wire::encode_ready_for_query(out, 'I');
  return out;
}

FakeServer::Script answering(const std::string& sql, const std::string& answer) {
  return [sql, answer](const std::string& text) { return text == sql ? answer : FakeServer::command("SET"); };
}

// What the client reads when shard s1's columns differ from s0's: s0's answer up to its rows, the
// error, ReadyForQuery; then the session serves a read whose shards agree.
void check_refused(const std::string& s0_answer, const std::string& s1_answer, const std::string& error) {
  const std::string sql = "SELECT * FROM orders";
  FakeServer s0([&](const std::string& text) {
    return text == sql                 ? s0_answer
           : text == "SELECT v FROM t" ? FakeServer::rows({"after"})
                                       : FakeServer::command("SET");
  });
  FakeServer s1([&](const std::string& text) {
    return text == sql                 ? s1_answer
           : text == "SELECT v FROM t" ? FakeServer::rows({"after"})
                                       : FakeServer::command("SET");
  });
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query(sql);
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "TDEZ");  // s0's description and row; nothing of s1's
  CHECK(frames[1].type == 'D');
  CHECK(error_line(frames[2]) == "ERROR 42804 the shards answered with different result columns: " + error +
                                     " (the table differs between shards; make its definition the same on "
                                     "every shard)");
  std::string idle;
  sw::wire::encode_ready_for_query(idle, 'I');
  CHECK(frames[3].bytes == idle);
  // No server stays with the session; the next read runs.
  CHECK(eventually([&] { return d.counts("s0").active == 0 && d.counts("s1").active == 0; }));
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"after"}));
}

}  // namespace

TEST_CASE("session shape: a keyless read whose shards return different column counts fails") {
  check_refused(result({column("v", kText, 100)}, {{"s0 a"}}),
                result({column("v", kText, 200), column("x", kText, 200)}, {{"s1 a", "s1 x"}}),
                "shard s1 returned 2 columns where shard s0 returned 1");
}

TEST_CASE("session shape: a keyless read whose shards return a column of different types fails") {
  check_refused(result({column("v", kText, 100)}, {{"s0 a"}}), result({column("v", kInt4, 200)}, {{"7"}}),
                "column 1 \"v\" is integer on shard s1 and text on shard s0");
}

TEST_CASE("session shape: a keyless read whose shards name a column differently fails") {
  check_refused(result({column("v", kText, 100)}, {{"s0 a"}}), result({column("w", kText, 200)}, {{"s1 a"}}),
                "column 1 is \"w\" on shard s1 and \"v\" on shard s0");
}

TEST_CASE("session shape: table OIDs, attribute numbers and type modifiers may differ") {
  std::vector<sw::wire::RowField> s1_fields = {column("v", kText, 200)};
  s1_fields[0].column = 3;
  s1_fields[0].type_modifier = 24;  // varchar(20) where s0 has no modifier: the values read the same
  const std::string sql = "SELECT * FROM orders";
  FakeServer s0(answering(sql, result({column("v", kText, 100)}, {{"s0 a"}})));
  FakeServer s1(answering(sql, result(s1_fields, {{"s1 a"}})));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query(sql);
  CHECK(types_of(client.read_until_ready()) == "TDDCZ");
}

TEST_CASE("session shape: a merged read whose shards return a column of different types fails") {
  const std::string sql = "SELECT v FROM orders ORDER BY v";
  // The collation query comes first in the same Query: one row (the database's collation, no
  // columns, no nondeterministic collations), then the read's answer.
  auto merged = [sql](const std::string& read) {
    return [sql, read](const std::string& text) {
      if (text == "SELECT v FROM t") return FakeServer::rows({"after"});
      if (text.size() <= sql.size() || text.compare(text.size() - sql.size(), sql.size(), sql) != 0)
        return FakeServer::command("SET");
      return FakeServer::collations_c() + read;
    };
  };
  // The first RowDescription to arrive is the reference: s1 answers the read only well after s0
  // did, so that it is s0's (declared before the servers, whose threads read it).
  std::atomic<bool> s0_answered{false};
  auto first = merged(result({column("v", kInt4, 100)}, {{"1"}, {"3"}}));
  auto second = merged(result({column("v", kText, 200)}, {{"2"}}));
  auto is_read = [sql](const std::string& text) {
    return text.size() > sql.size() && text.compare(text.size() - sql.size(), sql.size(), sql) == 0;
  };
  FakeServer s0([&](const std::string& text) {
    std::string answer = first(text);
    if (is_read(text)) s0_answered = true;
    return answer;
  });
  FakeServer s1([&](const std::string& text) {
    if (is_read(text)) {
      for (int i = 0; i < 500 && !s0_answered; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return second(text);
  });
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query(sql);
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(s0_answered);
  REQUIRE(types_of(frames) == "TEZ");  // the first shard's description; no row of either
  CHECK(error_line(frames[1]) ==
        "ERROR 42804 the shards answered with different result columns: column 1 \"v\" is text on shard s1 "
        "and integer on shard s0 (the table differs between shards; make its definition the same on every "
        "shard)");
  CHECK(eventually([&] { return d.counts("s0").active == 0 && d.counts("s1").active == 0; }));
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"after"}));
}

TEST_CASE("session shape: a COPY TO whose shards copy different column counts fails") {
  auto copying = [](uint16_t columns, const std::string& row) {
    return [columns, row](const std::string& text) {
      if (text == "SELECT v FROM t") return FakeServer::rows({"after"});
      if (text.rfind("COPY", 0) != 0) return FakeServer::command("SET");
      std::string out;
      sw::wire::MessageWriter response(out);
      response.begin('H').int8(0).int16(columns);
      for (uint16_t i = 0; i < columns; ++i) response.int16(0);
      response.end();
      sw::wire::MessageWriter(out).begin('d').bytes(row).end();
      sw::wire::MessageWriter(out).begin('c').end();
      sw::wire::encode_command_complete(out, "COPY 1");
      sw::wire::encode_ready_for_query(out, 'I');
      return out;
    };
  };
  FakeServer s0(copying(1, "a\n"));
  FakeServer s1(copying(2, "b\tx\n"));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query("COPY orders TO STDOUT");
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "HdEZ");  // s0's copy; nothing of s1's
  CHECK(
      error_line(frames[2]) ==
      "ERROR 42804 the shards answered with different result columns: shard s1 copied 2 columns where shard "
      "s0 copied 1 (the table differs between shards; make its definition the same on every shard)");
  CHECK(eventually([&] { return d.counts("s0").active == 0 && d.counts("s1").active == 0; }));
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"after"}));
}
