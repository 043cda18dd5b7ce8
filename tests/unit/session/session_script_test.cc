// A whole Session driven by message scripts (session_host.h): a blocking client on one side,
// FakeServers on the other, real pools and a real event loop in between, no proxy process. What
// the client reads is checked byte for byte, and the pools' counts after.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client_messages.h"
#include "fake_server.h"
#include "router/bucket_hash.h"
#include "script_client.h"
#include "session_host.h"
#include "wire/messages.h"
#include "wire/row_description.h"

using sw::test::ClientFrame;
using sw::test::FakeServer;
using sw::test::ScriptClient;
using sw::test::SessionDeployment;
using sw::test::types_of;

namespace {

// `rows` for `sql`, a one-column text result (FakeServer::rows); any other statement (a prologue
// the session sends first) a "SET".
FakeServer::Script answering(const std::string& sql, const std::vector<std::string>& rows) {
  return [sql, rows](const std::string& text) {
    return text == sql ? FakeServer::rows(rows) : FakeServer::command("SET");
  };
}

// The rows of a one-column text result as they reach the client: DataRows, CommandComplete
// "SELECT <n>", and ReadyForQuery when `ready`.
std::string data_rows(const std::vector<std::string>& values, bool ready = true) {
  std::string out;
  for (const std::string& value : values) sw::wire::encode_data_row(out, {value});
  sw::wire::encode_command_complete(out, "SELECT " + std::to_string(values.size()));
  if (ready) sw::wire::encode_ready_for_query(out, 'I');
  return out;
}

std::string row_description() {
  std::string out;
  sw::wire::encode_row_description(out, {sw::wire::computed_column("v", 25)});
  return out;
}

// "FATAL <sqlstate> <message>" of an ErrorResponse, or what the frame was instead.
std::string fatal(const ClientFrame& frame) {
  if (frame.type != 'E') return std::string("not an ErrorResponse: '") + frame.type + "'";
  auto fields = sw::wire::decode_error_fields(frame.body());
  if (!fields) return "malformed ErrorResponse";
  return std::string(fields->severity) + " " + std::string(fields->sqlstate) + " " +
         std::string(fields->message);
}

// A client logged in on `d`: AuthenticationOk, the server's ParameterStatus, BackendKeyData and
// ReadyForQuery.
void log_in(ScriptClient& client) {
  REQUIRE(client.connected());
  REQUIRE(types_of(client.login()) == "RSKZ");
}

// After a session ended on a server's fault: a new client is served on the same host.
void serves_a_new_client(SessionDeployment& d) {
  ScriptClient next(d.port());
  log_in(next);
  next.query("SELECT v FROM t");
  CHECK(sw::test::bytes_of(next.read_until_ready()) == FakeServer::rows({"after"}));
}

}  // namespace

TEST_CASE("session script: a Query's answer is relayed byte for byte, then its server is idle again") {
  FakeServer server(answering("SELECT v FROM t", {"a", "b"}));
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT v FROM t");
  CHECK(sw::test::bytes_of(client.read_until_ready()) == FakeServer::rows({"a", "b"}));
  CHECK(server.queries() == std::vector<std::string>{"SELECT v FROM t"});  // no prologue: nothing to set
  // Transaction pooling: the one server (the login's, reused) is back in the pool.
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 1);
  CHECK(counts.active == 0);
  client.query("SELECT v FROM t");  // and serves the next transaction
  CHECK(sw::test::bytes_of(client.read_until_ready()) == FakeServer::rows({"a", "b"}));
  CHECK(d.counts("s0").idle == 1);
}

TEST_CASE("session script: Parse, Bind, Describe, Execute and Sync are relayed, answers byte for byte") {
  FakeServer server(answering("SELECT v FROM t WHERE v = $1", {"a"}));
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.send(sw::test::parse("", "SELECT v FROM t WHERE v = $1") + sw::test::bind("", {"a"}) +
              sw::test::describe('P', "") + sw::test::execute() + sw::test::sync_message());
  std::string expected;
  sw::wire::encode_parse_complete(expected);
  sw::wire::encode_bind_complete(expected);
  expected += row_description() + data_rows({"a"});
  CHECK(sw::test::bytes_of(client.read_until_ready()) == expected);
  CHECK(server.types() == "PBDES");  // the login's server, reused: nothing else ran on it
  CHECK(server.queries() == std::vector<std::string>{"SELECT v FROM t WHERE v = $1"});
  CHECK(d.counts("s0").idle == 1);
}

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
  CHECK(fatal(frames[0]) == kOverLimit);
  // The hostile server was closed, not pooled; the session is gone; the host serves on.
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 0);
  CHECK(counts.active == 0);
  CHECK(d.sessions() == 0);
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
  std::string relayed = row_description();
  sw::wire::encode_data_row(relayed, {std::string("a")});
  CHECK(frames[0].bytes + frames[1].bytes == relayed);
  CHECK(fatal(frames[2]) == kOverLimit);
  CHECK(d.counts("s0").idle == 0);
  CHECK(d.sessions() == 0);
}

TEST_CASE("session script: a server that closes in the middle of an answer ends the session with 08006") {
  FakeServer server([](const std::string& sql) {
    if (sql == "SELECT v FROM t") return FakeServer::rows({"after"});
    if (sql != "SELECT dies FROM t") return FakeServer::command("SET");
    std::string half = row_description();  // the RowDescription and one DataRow, then the end
    sw::wire::encode_data_row(half, {std::string("a")});
    return half + std::string(FakeServer::kHangUp);
  });
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT dies FROM t");
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "TDE.");
  std::string relayed = row_description();
  sw::wire::encode_data_row(relayed, {std::string("a")});
  CHECK(frames[0].bytes + frames[1].bytes == relayed);
  CHECK(fatal(frames[2]) ==
        "FATAL 08006 server connection to shard s0 was lost; the transaction in progress was lost");
  CHECK(server.hang_ups() == 1);  // the fault fired
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 0);
  CHECK(counts.active == 0);
  CHECK(d.sessions() == 0);
  serves_a_new_client(d);
}

TEST_CASE("session script: a keyless read of a sharded table concatenates both shards' rows") {
  FakeServer s0([](const std::string& sql) {  // slow: s1 answers first
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return answering("SELECT note FROM orders", {"s0 a"})(sql);
  });
  FakeServer s1(answering("SELECT note FROM orders", {"s1 a", "s1 b"}));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT note FROM orders");
  // One RowDescription, the rows in shard order, the counts summed.
  CHECK(sw::test::bytes_of(client.read_until_ready()) ==
        row_description() + data_rows({"s0 a", "s1 a", "s1 b"}));
  CHECK(s0.queries().back() == "SELECT note FROM orders");
  CHECK(s1.queries().back() == "SELECT note FROM orders");
  CHECK(d.counts("s0").idle == 1);
  CHECK(d.counts("s1").idle == 1);
  CHECK(d.counts("s1").active == 0);
}

TEST_CASE("session script: a read with its key goes to the key's shard alone") {
  // Bucket b is on shard b mod 2: the first key on s1.
  int key = 1;
  while (*sw::router::bucket_of_text_value(sw::router::KeyType::Int8, std::to_string(key), 8) % 2 != 1) ++key;
  const std::string on_s1 = "SELECT note FROM orders WHERE tenant_id = " + std::to_string(key);
  FakeServer s0(answering("", {}));
  FakeServer s1(answering(on_s1, {"mine"}));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query(on_s1);
  CHECK(sw::test::bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}));
  CHECK(s1.queries() == std::vector<std::string>{on_s1});
  CHECK(s0.queries().empty());  // s0 served the login alone
}
