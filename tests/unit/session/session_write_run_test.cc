// A write on several shards run on the session's legs (docs/architecture.md §5.6): a split INSERT
// (SplitInsert) in session pooling outside a transaction borrows the session's server on a shard
// and takes a new one on the other, commits by itself, and afterwards the borrowed server is still
// the session's while the new one went back to its pool; inside BEGIN the deferred BEGIN starts on
// both legs and the client's COMMIT commits both. Driven by message scripts (session_host.h); the
// test host decides every commit (no catalog is reached).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "fake_server.h"
#include "script_client.h"
#include "session_host.h"

using namespace sw::test;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// A shard as PostgreSQL answers a transaction and its two-phase commit (one connection at a time).
struct Shard {
  std::atomic<char> status{'I'};
  FakeServer server{[this](const std::string& sql) { return answer(sql); }};

  std::string answer(const std::string& sql) {
    if (sql == "BEGIN") status = 'T';
    if (starts_with(sql, "INSERT")) return FakeServer::command("INSERT 0 1", status);
    if (starts_with(sql, "PREPARE TRANSACTION") || starts_with(sql, "COMMIT") || starts_with(sql, "ROLLBACK"))
      status = 'I';
    if (starts_with(sql, "PREPARE TRANSACTION")) return FakeServer::command("PREPARE TRANSACTION", status);
    if (starts_with(sql, "COMMIT PREPARED")) return FakeServer::command("COMMIT PREPARED", status);
    return FakeServer::command(sql == "BEGIN" || sql == "COMMIT" || sql == "ROLLBACK" ? sql : "SET", status);
  }
  bool got(const std::string& prefix) const {
    const std::vector<std::string> all = server.queries();
    return std::any_of(all.begin(), all.end(), [&](const std::string& q) { return starts_with(q, prefix); });
  }
  size_t count(const std::string& prefix) const {
    const std::vector<std::string> all = server.queries();
    return static_cast<size_t>(
        std::count_if(all.begin(), all.end(), [&](const std::string& q) { return starts_with(q, prefix); }));
  }
};

const std::string kSplit = "INSERT INTO orders (tenant_id) VALUES (" + key_on(0) + "), (" + key_on(1) + ")";

}  // namespace

TEST_CASE("session write run: session pooling, a split INSERT borrows s0, adds s1, s1 idle after") {
  Shard s0;
  Shard s1;
  SessionDeployment d({&s0.server, &s1.server}, std::string(kCatalog) + "pool: { mode: session }\n");
  d.decide_commits(sw::twopc::Decision::Commit);
  ScriptClient client(d.port());
  log_in(client);
  const std::string keyed = "SELECT note FROM orders WHERE tenant_id = " + key_on(0);
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("SET", 'I'));
  CHECK(d.counts("s0").active == 1);
  client.query(kSplit);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 2", 'I'));
  // Each shard began its own transaction and the runner committed both (two-phase).
  for (const Shard* shard : {&s0, &s1}) {
    CHECK(shard->count("BEGIN") == 1);
    CHECK(shard->got("PREPARE TRANSACTION"));
    CHECK(shard->got("COMMIT PREPARED"));
  }
  // The borrowed server is still the session's; the new one is idle in its pool.
  CHECK(eventually([&] { return d.counts("s1").idle == 1 && d.counts("s1").active == 0; }));
  CHECK(d.counts("s0").active == 1);
  CHECK(d.counts("s0").idle == 0);
  // And the session goes on on s0's server.
  const size_t before = s0.server.queries().size();
  client.query(keyed);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("SET", 'I'));
  CHECK(s0.server.queries().size() == before + 1);
  CHECK(d.counts("s0").active == 1);
}

TEST_CASE(
    "session write run: a split INSERT inside BEGIN starts the deferred BEGIN on both; COMMIT commits both") {
  Shard s0;
  Shard s1;
  SessionDeployment d({&s0.server, &s1.server}, kCatalog);
  d.decide_commits(sw::twopc::Decision::Commit);
  ScriptClient client(d.port());
  log_in(client);
  client.query("BEGIN");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("BEGIN", 'T'));
  client.query(kSplit);
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 2", 'T'));
  for (const Shard* shard : {&s0, &s1}) {
    CHECK(shard->count("BEGIN") == 1);
    CHECK_FALSE(shard->got("PREPARE TRANSACTION"));  // the client's COMMIT decides
  }
  client.query("COMMIT");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("COMMIT", 'I'));
  CHECK(d.decisions() == 1);
  for (const Shard* shard : {&s0, &s1}) {
    CHECK(shard->got("PREPARE TRANSACTION"));
    CHECK(shard->got("COMMIT PREPARED"));
  }
  // Transaction pooling: both servers back in their pools.
  CHECK(eventually([&] { return d.counts("s0").idle == 1 && d.counts("s1").idle == 1; }));
}
