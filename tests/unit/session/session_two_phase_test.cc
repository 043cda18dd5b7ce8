// The client's COMMIT of a transaction written on two shards, by two-phase commit on the
// transaction's own servers (session_two_phase.cc, docs/architecture.md §5.9), driven by message
// scripts (session_host.h): what each shard is sent, what the client gets, and where the servers
// are afterwards. The test host decides every commit as the test says (no catalog is reached).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fake_server.h"
#include "script_client.h"
#include "session_host.h"
#include "wire/messages.h"

using namespace sw::test;

namespace {

std::string ready_for_query(char status) {
  std::string out;
  sw::wire::encode_ready_for_query(out, status);
  return out;
}

std::string insert_on(int shard) { return "INSERT INTO orders (tenant_id) VALUES (" + key_on(shard) + ")"; }

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// A shard as PostgreSQL answers a transaction and its two-phase commit (one connection at a time):
// BEGIN and writes leave it in a transaction, PREPARE TRANSACTION and the ends out of one.
// `prepare` and `commit_prepared`, when given, answer PREPARE TRANSACTION and COMMIT PREPARED
// instead (set before the server starts: its threads read them).
struct Shard {
  using Answer = std::function<std::string(Shard&)>;
  explicit Shard(Answer on_prepare = nullptr, Answer on_commit_prepared = nullptr)
      : prepare(std::move(on_prepare)), commit_prepared(std::move(on_commit_prepared)) {}

  std::atomic<char> status{'I'};
  const Answer prepare;
  const Answer commit_prepared;
  FakeServer server{[this](const std::string& sql) { return answer(sql); }};

  std::string answer(const std::string& sql) {
    if (starts_with(sql, "PREPARE TRANSACTION") && prepare) return prepare(*this);
    if (starts_with(sql, "COMMIT PREPARED") && commit_prepared) return commit_prepared(*this);
    if (sql == "BEGIN") status = 'T';
    if (starts_with(sql, "INSERT")) return FakeServer::command("INSERT 0 1", status);
    if (starts_with(sql, "PREPARE TRANSACTION") || starts_with(sql, "COMMIT") || starts_with(sql, "ROLLBACK"))
      status = 'I';
    if (starts_with(sql, "PREPARE TRANSACTION")) return FakeServer::command("PREPARE TRANSACTION", status);
    if (starts_with(sql, "COMMIT PREPARED")) return FakeServer::command("COMMIT PREPARED", status);
    if (starts_with(sql, "ROLLBACK PREPARED")) return FakeServer::command("ROLLBACK PREPARED", status);
    return FakeServer::command(sql == "BEGIN" || sql == "COMMIT" || sql == "ROLLBACK" ? sql : "SET", status);
  }
  std::vector<std::string> queries() const { return server.queries(); }
  bool got(const std::string& prefix) const {
    const std::vector<std::string> all = queries();
    return std::any_of(all.begin(), all.end(), [&](const std::string& q) { return starts_with(q, prefix); });
  }
};

// BEGIN, then a write on s0 and one on s1: the transaction is written on both shards.
void write_on_both(ScriptClient& client) {
  client.query("BEGIN");
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("BEGIN", 'T'));
  client.query(insert_on(0));
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 1", 'T'));
  client.query(insert_on(1));
  CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 1", 'T'));
}

// What a shard got for the transaction, from its BEGIN: gids replaced by "<gid>".
std::vector<std::string> transaction_statements(const Shard& shard) {
  std::vector<std::string> out;
  for (std::string q : shard.queries()) {
    if (q == "BEGIN") out.clear();
    const size_t quote = q.find('\'');
    if (quote != std::string::npos) q = q.substr(0, quote) + "<gid>";
    out.push_back(q);
  }
  return out;
}

}  // namespace

TEST_CASE("two-phase COMMIT: PREPARE TRANSACTION on both shards, COMMIT PREPARED after the decision") {
  for (const bool session_pooling : {false, true}) {
    CAPTURE(session_pooling);
    Shard s0;
    Shard s1;
    SessionDeployment d({&s0.server, &s1.server},
                        std::string(kCatalog) + (session_pooling ? "pool: { mode: session }\n" : ""));
    d.decide_commits(sw::twopc::Decision::Commit);
    ScriptClient client(d.port());
    log_in(client);
    write_on_both(client);
    client.query("COMMIT");
    CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("COMMIT", 'I'));
    CHECK(d.decisions() == 1);
    for (const Shard* shard : {&s0, &s1}) {
      const std::vector<std::string> expected{"BEGIN", shard == &s0 ? insert_on(0) : insert_on(1),
                                              "PREPARE TRANSACTION <gid>", "COMMIT PREPARED <gid>"};
      CHECK(transaction_statements(*shard) == expected);  // no prologue, no second BEGIN
    }
    // Transaction pooling: both servers back in their pools; session pooling: both the session's.
    for (const char* name : {"s0", "s1"}) {
      CAPTURE(name);
      const auto counts = d.counts(name);
      CHECK(counts.idle == (session_pooling ? 0 : 1));
      CHECK(counts.active == (session_pooling ? 1 : 0));
    }
    client.query(insert_on(1));  // the session goes on, outside a transaction
    CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 1", 'I'));
  }
}

TEST_CASE("two-phase COMMIT: a shard's FATAL answer to PREPARE ends the client's session with it") {
  std::string fatal;  // before the shards: their threads read it until they are gone
  sw::wire::encode_error(fatal, "FATAL", "57P01", "terminating connection due to administrator command");
  Shard s0;
  Shard s1([&fatal](Shard&) { return fatal + std::string(FakeServer::kHangUp); });
  SessionDeployment d({&s0.server, &s1.server}, kCatalog);
  d.decide_commits(sw::twopc::Decision::Commit);
  ScriptClient client(d.port());
  log_in(client);
  write_on_both(client);
  client.query("COMMIT");
  const ClientFrame first = client.read();
  CHECK(first.bytes == fatal);  // the shard's ErrorResponse, as sent
  CHECK(client.closed_by_peer());
  CHECK(d.decisions() == 0);
  // No server of the transaction goes back to a pool: s0's is prepared and undecided.
  CHECK(eventually([&] { return d.sessions() == 0; }));
  CHECK(d.counts("s0").idle == 0);
  CHECK(d.counts("s1").idle == 0);
}

TEST_CASE("two-phase COMMIT: a client gone after PREPARE went out leaves no server idle in a pool") {
  std::atomic<bool> answer_prepare{false};  // before the shards: their threads read it
  Shard s0;
  Shard s1([&answer_prepare](Shard&) {  // answers once the client is gone
    eventually([&] { return answer_prepare.load(); });
    return FakeServer::command("PREPARE TRANSACTION", 'I');
  });
  SessionDeployment d({&s0.server, &s1.server}, kCatalog);
  d.decide_commits(sw::twopc::Decision::Commit);
  {
    ScriptClient client(d.port());
    log_in(client);
    write_on_both(client);
    client.query("COMMIT");
    CHECK(eventually([&] { return s0.got("PREPARE TRANSACTION") && s1.got("PREPARE TRANSACTION"); }));
  }
  CHECK(eventually([&] { return d.sessions() == 0; }));
  answer_prepare = true;
  CHECK(d.decisions() == 0);
  for (const char* name : {"s0", "s1"}) {
    CAPTURE(name);
    const auto counts = d.counts(name);
    CHECK(counts.idle == 0);
    CHECK(counts.active == 0);
  }
  CHECK_FALSE(s0.got("COMMIT PREPARED"));
}

TEST_CASE("two-phase COMMIT: a shard lost mid-commit is dropped; the other's server goes back idle") {
  for (const bool at_prepare : {true, false}) {
    CAPTURE(at_prepare);
    std::atomic<bool> hung_up{false};  // before the shards: their threads read it
    // s1 dies at its PREPARE, or prepares and dies at its COMMIT PREPARED; its transaction dies
    // with it (the next connection starts outside one).
    auto hang_up = [&hung_up](Shard& self) {
      hung_up = true;
      self.status = 'I';
      return std::string(FakeServer::kHangUp);
    };
    Shard s0;
    Shard s1(at_prepare ? Shard::Answer(hang_up) : nullptr, at_prepare ? nullptr : Shard::Answer(hang_up));
    SessionDeployment d({&s0.server, &s1.server}, kCatalog);
    d.decide_commits(sw::twopc::Decision::Commit);
    ScriptClient client(d.port());
    log_in(client);
    write_on_both(client);
    client.query("COMMIT");
    const std::vector<ClientFrame> frames = client.read_until_ready();
    REQUIRE(frames.size() >= 2);
    if (at_prepare) {  // rolled back everywhere: s0 prepared, then ROLLBACK PREPARED
      CHECK(
          error_line(frames.front()).rfind("ERROR 08006 COMMIT failed: PREPARE TRANSACTION on shard s1", 0) ==
          0);
      CHECK(s0.got("ROLLBACK PREPARED"));
      CHECK(d.decisions() == 0);
    } else {  // decided: recovery commits s1's part
      CHECK(bytes_of(frames) == FakeServer::command("COMMIT", 'I'));
      CHECK(s0.got("COMMIT PREPARED"));
      CHECK(d.decisions() == 1);
    }
    CHECK(frames.back().bytes == ready_for_query('I'));
    CHECK(hung_up.load());
    CHECK(d.counts("s0").idle == 1);  // s0's server, out of the transaction, back in its pool
    CHECK(d.counts("s0").active == 0);
    CHECK(d.counts("s1").active == 0);  // s1's is gone
    client.query(insert_on(1));         // the session goes on: s1 gets a new server
    CHECK(bytes_of(client.read_until_ready()) == FakeServer::command("INSERT 0 1", 'I'));
  }
}
