// A read on every shard run on the session's legs (docs/architecture.md §5.6): in session pooling
// the session's server on a shard reads for the run (borrowed), a shard it holds none on gets a
// new leg, and after the run the borrowed server is still the session's while the new one went
// back to its pool; a merge's holds on those legs are its own (backpressure).
#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fake_server.h"
#include "script_client.h"
#include "session_host.h"
#include "wire/message_writer.h"
#include "wire/messages.h"
#include "wire/row_description.h"

using namespace sw::test;

namespace {

// A server that answers `keyed` with one row, a COPY ... TO STDOUT with its one line `line`, and
// anything else with SET.
FakeServer::Script copying(const std::string& keyed, const std::string& line) {
  return [keyed, line](const std::string& sql) {
    if (sql == keyed) return FakeServer::rows({"mine"});
    if (sql.rfind("COPY", 0) != 0) return FakeServer::command("SET");
    std::string out;
    sw::wire::MessageWriter(out).begin('H').int8(0).int16(1).int16(0).end();
    sw::wire::MessageWriter(out).begin('d').bytes(line).end();
    sw::wire::MessageWriter(out).begin('c').end();
    sw::wire::encode_command_complete(out, "COPY 1");
    sw::wire::encode_ready_for_query(out, 'I');
    return out;
  };
}

constexpr uint32_t kText = 25;

// A server for a merged read whose shard statement holds `sql` (after the collation query in the
// same Query: one row, the database's collation C) answering `values` in order (the sort key
// column, then the column), `keyed` with one row, anything else SET.
FakeServer::Script merging(const std::string& keyed, const std::string& sql,
                           std::vector<std::string> values) {
  return [keyed, sql, values = std::move(values)](const std::string& text) {
    if (text == keyed) return FakeServer::rows({"mine"});
    if (text.find(sql) == std::string::npos) return FakeServer::command("SET");
    std::string out = FakeServer::collations_c();
    sw::wire::encode_row_description(
        out, {sw::wire::computed_column("sw_order_1", kText), sw::wire::computed_column("v", kText)});
    for (const std::string& value : values)
      sw::wire::encode_data_row(out, {std::optional<std::string>(value), std::optional<std::string>(value)});
    sw::wire::encode_command_complete(out, "SELECT " + std::to_string(values.size()));
    sw::wire::encode_ready_for_query(out, 'I');
    return out;
  };
}

}  // namespace

TEST_CASE("session run: session pooling, a COPY TO after a keyed read borrows s0 and adds s1 for the run") {
  const std::string keyed = "SELECT note FROM orders WHERE tenant_id = " + key_on(0);
  const std::string copy = "COPY orders TO STDOUT";
  FakeServer s0(copying(keyed, "a\n"));
  FakeServer s1(copying(keyed, "b\n"));
  SessionDeployment d({&s0, &s1}, "pool: { mode: session }\n");
  ScriptClient client(d.port());
  log_in(client);
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}));
  CHECK(d.counts("s0").active == 1);
  client.query(copy);
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "HddcCZ");  // one copy of both shards' lines
  CHECK(frames[1].bytes.substr(5) == "a\n");
  CHECK(frames[2].bytes.substr(5) == "b\n");
  // s0's server ran both statements (no second server there, nothing sent before the COPY); s1's
  // new server ran the COPY alone.
  CHECK(s0.queries() == std::vector<std::string>{keyed, copy});
  CHECK(s1.queries() == std::vector<std::string>{copy});
  // The borrowed server is still the session's; the new one is idle in its pool.
  CHECK(eventually([&] { return d.counts("s1").idle == 1 && d.counts("s1").active == 0; }));
  CHECK(d.counts("s0").active == 1);
  CHECK(d.counts("s0").idle == 0);
  // And the session goes on on s0's server.
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}));
  CHECK(s0.queries().size() == 3);
  CHECK(d.counts("s0").active == 1);
}

TEST_CASE("session run: session pooling, a merged read held by its merger and a slow client gets every row") {
  // Rows of 1 kB, 3000 per shard, interleaved by value: the merger holds 100 per shard (a leg ahead
  // of the merge is held), and the client reads only after its output went over the high-water
  // mark (the merge stops; the client draining goes on with it, not with the session's own reads).
  const std::string keyed = "SELECT note FROM orders WHERE tenant_id = " + key_on(0);
  const std::string sql = "SELECT v FROM orders ORDER BY v COLLATE \"C\"";
  const std::string pad(1000, 'x');
  std::vector<std::string> even, odd;
  for (int i = 0; i < 6000; ++i) {
    std::string value = std::to_string(100000 + i) + pad;
    (i % 2 == 0 ? even : odd).push_back(std::move(value));
  }
  FakeServer s0(merging(keyed, "FROM orders ORDER BY", even));
  FakeServer s1(merging(keyed, "FROM orders ORDER BY", odd));
  SessionDeployment d({&s0, &s1}, "pool: { mode: session }\nfanout: { max_rows_buffered: 100 }\n");
  ScriptClient client(d.port());
  log_in(client);
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}));
  client.query(sql);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the client's output fills up
  std::vector<ClientFrame> frames = client.read_until_ready();
  INFO(types_of(frames).substr(0, 8), " ", frames.empty() ? "" : error_line(frames.front()));
  REQUIRE(frames.size() == 6003);  // RowDescription, 6000 rows, SELECT 6000, ReadyForQuery
  bool ordered = true;
  for (int i = 0; i < 6000; ++i)
    ordered = ordered && frames[static_cast<size_t>(i) + 1].body().substr(6, 6) == std::to_string(100000 + i);
  CHECK(ordered);
  CHECK(frames[6002].type == 'Z');
  // s0's server read for the merge (no second one there); s1's new one went back to its pool.
  CHECK(s0.queries().size() == 2);
  CHECK(eventually([&] { return d.counts("s1").idle == 1 && d.counts("s1").active == 0; }));
  CHECK(d.counts("s0").active == 1);
  CHECK(d.counts("s0").idle == 0);
}
