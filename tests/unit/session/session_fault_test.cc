// A whole Session against servers that break the protocol or die (session_host.h,
// fake_server.h): what the client is told (SQLSTATE and message, byte for byte), that nothing of
// the bad answer reaches it, whether the session goes on or ends (docs/architecture.md §5.5, §5.6),
// that the bad server is never pooled again, and that the host serves the next client.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "client_messages.h"
#include "fake_server.h"
#include "script_client.h"
#include "session_host.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

using namespace sw::test;

namespace {

// A script whose `SELECT big FROM t` answers `rows`; its `SELECT v FROM t`, "after".
FakeServer::Script with_big(const std::vector<std::string>& rows) {
  return [rows](const std::string& sql) {
    if (sql == "SELECT big FROM t") return FakeServer::rows(rows);
    return sql == "SELECT v FROM t" ? FakeServer::rows({"after"}) : FakeServer::command("SET");
  };
}

const char* const kOverLimit =
    "FATAL 08P01 shard s0 sent an invalid message: invalid message length 5010 for message type 'D' "
    "(limit 4096); the server connection was closed";

// After a session ended on a server's fault: a new client is served on the same host.
void serves_a_new_client(SessionDeployment& d) {
  ScriptClient next(d.port());
  log_in(next);
  next.query("SELECT v FROM t");
  CHECK(bytes_of(next.read_until_ready()) == FakeServer::rows({"after"}));
}

}  // namespace

TEST_CASE("session script: a server message over max_message_size ends the session with 08P01") {
  FakeServer server(with_big({std::string(5000, 'x')}));  // a 5010-byte DataRow
  SessionDeployment d({&server}, "max_message_size: 4kB\n");
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT big FROM t");
  // The RowDescription was held back (FenceRetry: the answer had not started) and is dropped
  // with the server; the DataRow never reaches the client.
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "E.");
  CHECK(error_line(frames[0]) == kOverLimit);
  // The session is gone (deleted just after the client saw the close), the hostile server was
  // closed, not pooled, and the host serves on.
  CHECK(eventually([&] { return d.sessions() == 0; }));
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 0);
  CHECK(counts.active == 0);
  serves_a_new_client(d);
}

TEST_CASE("session script: rows relayed before a message over max_message_size stay, then 08P01") {
  FakeServer server(with_big({"a", std::string(5000, 'x')}));
  SessionDeployment d({&server}, "max_message_size: 4kB\n");
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT big FROM t");
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "TDE.");
  std::string relayed = FakeServer::row_description();
  sw::wire::encode_data_row(relayed, {std::string("a")});
  CHECK(frames[0].bytes + frames[1].bytes == relayed);
  CHECK(error_line(frames[2]) == kOverLimit);
  CHECK(eventually([&] { return d.sessions() == 0; }));
  CHECK(d.counts("s0").idle == 0);
}

TEST_CASE("session script: a server that closes in the middle of an answer ends the session with 08006") {
  FakeServer server([](const std::string& sql) {
    if (sql == "SELECT v FROM t") return FakeServer::rows({"after"});
    if (sql != "SELECT dies FROM t") return FakeServer::command("SET");
    std::string half = FakeServer::row_description();  // the RowDescription and one DataRow, then the end
    sw::wire::encode_data_row(half, {std::string("a")});
    return half + std::string(FakeServer::kHangUp);
  });
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT dies FROM t");
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "TDE.");
  std::string relayed = FakeServer::row_description();
  sw::wire::encode_data_row(relayed, {std::string("a")});
  CHECK(frames[0].bytes + frames[1].bytes == relayed);
  CHECK(error_line(frames[2]) ==
        "FATAL 08006 server connection to shard s0 was lost; the transaction in progress was lost");
  CHECK(server.hang_ups() == 1);  // the fault fired
  CHECK(eventually([&] { return d.sessions() == 0; }));
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 0);
  CHECK(counts.active == 0);
  serves_a_new_client(d);
}

TEST_CASE("session script: a client message over max_message_size ends the session with 08P01") {
  FakeServer server(FakeServer::answering("", {}));
  SessionDeployment d({&server}, "max_message_size: 4kB\n");
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT '" + std::string(5000, 'x') + "'");
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "E.");
  CHECK(error_line(frames[0]) == "FATAL 08P01 invalid message length 5014 for message type 'Q' (limit 4096)");
  CHECK(server.types().empty());  // nothing of it reached a server
  CHECK(eventually([&] { return d.sessions() == 0; }));
}

TEST_CASE("session script: a server that closes in the middle of an extended answer ends the session") {
  FakeServer server([](const std::string& sql) {
    std::string half = FakeServer::row_description();  // Execute gets the DataRow, then the end
    sw::wire::encode_data_row(half, {std::string("a")});
    return sql == "SELECT dies FROM t" ? half + std::string(FakeServer::kHangUp) : FakeServer::command("SET");
  });
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.send(sw::test::parse("", "SELECT dies FROM t") + sw::test::bind("") + sw::test::describe('P', "") +
              sw::test::execute() + sw::test::sync_message());
  std::vector<ClientFrame> frames = client.read_until_ready();
  // ParseComplete, BindComplete and the RowDescription (held until the answer started), the row.
  REQUIRE(types_of(frames) == "12TDE.");
  std::string relayed;
  sw::wire::encode_parse_complete(relayed);
  sw::wire::encode_bind_complete(relayed);
  relayed += FakeServer::row_description();
  sw::wire::encode_data_row(relayed, {std::string("a")});
  frames.resize(4);
  CHECK(bytes_of(frames) == relayed);
  CHECK(server.types() == "PBDE");  // it hung up before the Sync
  CHECK(eventually([&] { return d.sessions() == 0; }));
  CHECK(d.counts("s0").idle == 0);
}

TEST_CASE("session script: a shard lost during a keyless read fails the read, not the session") {
  FakeServer s0([](const std::string& sql) {  // the first shard: its RowDescription, then the end
    if (sql != "SELECT note FROM orders") return FakeServer::rows({"after"});
    return FakeServer::row_description() + std::string(FakeServer::kHangUp);
  });
  FakeServer s1(FakeServer::answering("SELECT note FROM orders", {"s1 a"}));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT note FROM orders");
  std::vector<ClientFrame> frames = client.read_until_ready();
  // Shard order: nothing of s1 is relayed before s0 ended, and s0 never does.
  REQUIRE(types_of(frames) == "TEZ");
  CHECK(frames[0].bytes == FakeServer::row_description());
  CHECK(error_line(frames[1]) == "ERROR 08006 server connection to shard s0 was lost");
  std::string idle;
  sw::wire::encode_ready_for_query(idle, 'I');
  CHECK(frames[2].bytes == idle);
  CHECK(s0.hang_ups() == 1);
  const auto counts = d.counts("s0");
  CHECK(counts.idle + counts.active == 0);  // s0's server is gone
  // s1's server, whose answer was left unread, is closed too (or, still logging in when the read
  // failed, goes idle): none stays with the session.
  CHECK(eventually([&] { return d.counts("s1").active == 0; }));
  // Outside a transaction nothing was lost with it: the session goes on (on a new s0 server).
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"after"}));
}

TEST_CASE("session script: a transaction's server lost in a run on its legs ends the session with 08006") {
  const std::string keyed = "SELECT note FROM orders WHERE tenant_id = " + key_on(0);
  const std::string copy = "COPY orders TO STDOUT";
  FakeServer s0([keyed, copy](const std::string& sql) {  // its leg is borrowed by the COPY, then ends
    if (sql == keyed) return FakeServer::rows({"mine"}, 'T');
    return sql == copy ? std::string(FakeServer::kHangUp) : FakeServer::command("SET", 'T');
  });
  FakeServer s1([copy](const std::string& sql) {  // a new leg of the COPY
    if (sql != copy) return FakeServer::command("SET", 'T');
    std::string out;
    sw::wire::MessageWriter(out).begin('H').int8(0).int16(1).int16(0).end();
    sw::wire::MessageWriter(out).begin('c').end();
    sw::wire::encode_command_complete(out, "COPY 0");
    sw::wire::encode_ready_for_query(out, 'T');
    return out;
  });
  SessionDeployment d({&s0, &s1}, kCatalog);  // a transaction on several shards needs it
  ScriptClient client(d.port());
  log_in(client);
  client.query("BEGIN");
  CHECK(types_of(client.read_until_ready()) == "CZ");
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}, 'T'));
  client.query(copy);
  std::vector<ClientFrame> frames = client.read_until_ready();
  if (frames.back().type == 'Z') {
    const std::vector<ClientFrame> rest = client.read_until_ready();
    frames.insert(frames.end(), rest.begin(), rest.end());
  }
  INFO(types_of(frames));
  REQUIRE(frames.size() >= 2);
  CHECK(error_line(frames[frames.size() - 2]) ==
        "FATAL 08006 lost a server of the transaction; it was rolled back on every shard");
  CHECK(frames.back().type == 0);
  CHECK(s0.hang_ups() == 1);
  // The session is gone, s0's server with it; s1's new leg was closed (or, still logging in when
  // the COPY failed, went idle without joining the transaction): none stays with the session.
  CHECK(eventually([&] { return d.sessions() == 0; }));
  CHECK(d.counts("s0").idle + d.counts("s0").active == 0);
  CHECK(eventually([&] { return d.counts("s1").active == 0; }));
}
