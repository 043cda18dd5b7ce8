// A whole Session driven by message scripts (session_host.h): a blocking client on one side,
// FakeServers on the other, real pools and a real event loop in between, no proxy process. What
// the client reads is checked byte for byte, what the servers got, and the pools' counts after:
// relaying both protocols, routing by key and without, transaction and session pooling, cancel.
#include <doctest/doctest.h>

#include <atomic>
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
#include "wire/startup.h"

using namespace sw::test;

TEST_CASE("session script: a Query's answer is relayed byte for byte, then its server is idle again") {
  FakeServer server(FakeServer::answering("SELECT v FROM t", {"a", "b"}));
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"a", "b"}));
  CHECK(server.queries() == std::vector<std::string>{"SELECT v FROM t"});  // no prologue: nothing to set
  // Transaction pooling: the one server (the login's, reused) is back in the pool.
  const auto counts = d.counts("s0");
  CHECK(counts.idle == 1);
  CHECK(counts.active == 0);
  client.query("SELECT v FROM t");  // and serves the next transaction
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"a", "b"}));
  CHECK(d.counts("s0").idle == 1);
}

TEST_CASE("session script: Parse, Bind, Describe, Execute and Sync are relayed, answers byte for byte") {
  FakeServer server(FakeServer::answering("SELECT v FROM t WHERE v = $1", {"a"}));
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.send(sw::test::parse("", "SELECT v FROM t WHERE v = $1") + sw::test::bind("", {"a"}) +
              sw::test::describe('P', "") + sw::test::execute() + sw::test::sync_message());
  std::string expected;
  sw::wire::encode_parse_complete(expected);
  sw::wire::encode_bind_complete(expected);
  expected += FakeServer::rows({"a"});
  CHECK(bytes_of(client.read_until_ready()) == expected);
  CHECK(server.types() == "PBDES");  // the login's server, reused: nothing else ran on it
  CHECK(server.queries() == std::vector<std::string>{"SELECT v FROM t WHERE v = $1"});
  CHECK(d.counts("s0").idle == 1);
}

TEST_CASE("session script: a keyless read of a sharded table concatenates both shards' rows") {
  FakeServer s0([](const std::string& sql) {  // slow: s1 answers first
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return FakeServer::answering("SELECT note FROM orders", {"s0 a"})(sql);
  });
  FakeServer s1(FakeServer::answering("SELECT note FROM orders", {"s1 a", "s1 b"}));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query("SELECT note FROM orders");
  // One RowDescription, the rows in shard order, the counts summed.
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"s0 a", "s1 a", "s1 b"}));
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
  FakeServer s0(FakeServer::answering("", {}));
  FakeServer s1(FakeServer::answering(on_s1, {"mine"}));
  SessionDeployment d({&s0, &s1});
  ScriptClient client(d.port());
  log_in(client);
  client.query(on_s1);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"mine"}));
  CHECK(s1.queries() == std::vector<std::string>{on_s1});
  CHECK(s0.queries().empty());  // s0 served the login alone
}

TEST_CASE("session script: transaction pooling runs the deferred BEGIN and keeps the server to COMMIT") {
  std::atomic<char> status{'I'};  // the fake server's transaction status
  FakeServer server([&status](const std::string& sql) {
    if (sql == "BEGIN" || sql == "COMMIT") {
      status = sql == "BEGIN" ? 'T' : 'I';
      return FakeServer::command(sql, status);
    }
    return FakeServer::rows({"a"}, status);
  });
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  log_in(client);
  client.query("BEGIN");  // answered by the session: no server yet
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("BEGIN", 'T'));
  CHECK(server.queries().empty());
  CHECK(d.counts("s0").active == 0);
  client.query("SELECT v FROM t");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"a"}, 'T'));
  CHECK(server.queries() == std::vector<std::string>{"BEGIN", "SELECT v FROM t"});
  CHECK(d.counts("s0").active == 1);  // the transaction's server stays with the client
  client.query("COMMIT");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("COMMIT"));
  const auto counts = d.counts("s0");
  CHECK(counts.active == 0);
  CHECK(counts.idle == 1);
}

TEST_CASE("session script: session pooling keeps the server, and resets it when the client leaves") {
  FakeServer server(FakeServer::answering("SELECT v FROM t", {"a"}));
  SessionDeployment d({&server}, "pool: { mode: session }\n");
  {
    ScriptClient client(d.port());
    log_in(client);
    client.query("SELECT v FROM t");
    CHECK(bytes_of(client.read_until_ready()) == FakeServer::rows({"a"}));
    CHECK(d.counts("s0").active == 1);
    std::string terminate;
    sw::wire::encode_terminate(terminate);
    client.send(terminate);
    CHECK(client.closed_by_peer());
  }
  CHECK(eventually([&] { return d.counts("s0").idle == 1; }));
  CHECK(server.queries() == std::vector<std::string>{"SELECT v FROM t", "DISCARD ALL"});
}

TEST_CASE("session script: a CancelRequest with the session's key reaches its server") {
  // The slow query runs until the server got a CancelRequest, then fails as PostgreSQL's does.
  std::atomic<FakeServer*> self{nullptr};
  FakeServer server([&self](const std::string& sql) {
    if (sql != "SELECT slow FROM t") return FakeServer::command("SET");
    eventually([&] { return self.load()->cancels() > 0; });
    std::string out;
    sw::wire::encode_error(out, "ERROR", "57014", "canceling statement due to user request");
    sw::wire::encode_ready_for_query(out, 'I');
    return out;
  });
  self = &server;
  SessionDeployment d({&server});
  ScriptClient client(d.port());
  const sw::wire::CancelKey key = log_in(client);
  client.query("SELECT slow FROM t");
  CHECK(eventually([&] { return d.counts("s0").active == 1; }));
  ScriptClient canceller(d.port());
  REQUIRE(canceller.connected());
  canceller.send(sw::wire::encode_cancel_request(key));
  CHECK(canceller.closed_by_peer());  // once the server had it
  CHECK(server.cancels() == 1);
  std::vector<ClientFrame> frames = client.read_until_ready();
  REQUIRE(types_of(frames) == "EZ");
  CHECK(error_line(frames[0]) == "ERROR 57014 canceling statement due to user request");
  CHECK(d.counts("s0").idle == 1);
}
