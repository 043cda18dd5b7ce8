// Fanout's answer policies on the leg engine (concatenate; one after another), against servers
// that speak the real protocol from message scripts (fake_server.h): what the client gets, in
// what order, and what each server was sent.
#include "session/fanout.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fake_server.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

using sw::session::Fanout;
using sw::test::FakeServer;

namespace {

// The client's bytes as "<type>" or "<type>:<payload>" per message (DataRow: its value;
// CommandComplete: its tag; ErrorResponse: SQLSTATE and message).
std::vector<std::string> messages(const std::string& bytes) {
  std::vector<std::string> out;
  std::string_view rest = bytes;
  while (!rest.empty()) {
    auto r = sw::wire::read_frame(rest, sw::wire::Sender::Server, {});
    REQUIRE(r.status == sw::wire::FrameStatus::Complete);
    const char type = r.frame.type;
    std::string item(1, type);
    std::string_view payload;
    if (type == 'D') payload = r.frame.body.substr(6);
    if (type == 'C') payload = *sw::wire::decode_command_complete(r.frame.body);
    if (!payload.empty() || type == 'C') item.append(":").append(payload);
    if (type == 'E') {
      auto e = sw::wire::decode_error_fields(r.frame.body);
      item.append(":").append(e->sqlstate).append(" ").append(e->message);
    }
    out.push_back(item);
    rest.remove_prefix(r.frame.size);
  }
  return out;
}

std::string query(const std::string& sql) {
  std::string out;
  sw::wire::encode_query(out, sql);
  return out;
}

struct Run {
  sw::test::LoopWithPools d;
  std::string client;
  std::unique_ptr<Fanout> fanout;

  Run(Fanout::Mode mode, const std::vector<FakeServer*>& servers, const std::string& sql,
      uint64_t max_message_size = 1 << 20) {
    std::vector<Fanout::Target> targets;
    for (FakeServer* server : servers) {
      Fanout::Target t;
      t.pool = d.add_pool(*server, max_message_size);
      t.shard = t.pool->target().shard;
      targets.push_back(t);
    }
    fanout = std::make_unique<Fanout>(
        mode, std::move(targets), query(sql), sw::session::ServerState{},
        [this](std::string_view bytes) { client.append(bytes); }, [this] { d.loop.stop(); });
  }
  std::vector<std::string> go() {
    fanout->start();
    REQUIRE(d.run());
    CHECK(fanout->finished());
    return messages(client);
  }
};

FakeServer::Script rows(std::vector<std::string> values, int delay_ms = 0) {
  return [values, delay_ms](const std::string&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    return FakeServer::rows(values);
  };
}

}  // namespace

TEST_CASE("fanout: concatenated rows come shard after shard under one description and one total") {
  FakeServer s0(rows({"a0", "a1"}, 200));  // the slowest shard is still first
  FakeServer s1(rows({"b0"}));
  FakeServer s2(rows({}));
  Run run(Fanout::Mode::ConcatenateRows, {&s0, &s1, &s2}, "SELECT v FROM t");
  CHECK(run.go() == std::vector<std::string>{"T", "D:a0", "D:a1", "D:b0", "C:SELECT 3", "Z"});
  for (FakeServer* s : {&s0, &s1, &s2}) CHECK(s->queries() == std::vector<std::string>{"SELECT v FROM t"});
  for (auto& pool : run.d.pools) CHECK(pool->counts().idle == 1);  // every server back, clean
}

TEST_CASE("fanout: one after another stops at the first failure, naming what was applied") {
  auto ddl = [](bool fail) {
    return [fail](const std::string&) {
      if (!fail) return FakeServer::command("CREATE INDEX");
      std::string out;
      sw::wire::encode_error(out, "ERROR", "42P07", "relation \"i\" already exists");
      sw::wire::encode_ready_for_query(out, 'I');
      return out;
    };
  };
  FakeServer s0(ddl(false));
  FakeServer s1(ddl(true));
  FakeServer s2(ddl(false));
  Run run(Fanout::Mode::OneAfterAnother, {&s0, &s1, &s2}, "CREATE INDEX i ON t (v)");
  CHECK(run.go() == std::vector<std::string>{"E:42P07 relation \"i\" already exists", "Z"});
  CHECK(run.client.find("applied on shards: s0; not applied on: s1 (failed), s2") != std::string::npos);
  CHECK(s0.queries().size() == 1);
  CHECK(s1.queries().size() == 1);
  CHECK(s2.queries().empty());  // never asked for a server
}

TEST_CASE("fanout: a shard's message over the configured limit fails the read with 08P01 naming it") {
  FakeServer s0(rows({"small"}));
  FakeServer s1(rows({std::string(3000, 'x')}));
  Run run(Fanout::Mode::ConcatenateRows, {&s0, &s1}, "SELECT v FROM t", 1000);
  const std::vector<std::string> got = run.go();
  REQUIRE(got.size() == 4);
  CHECK(got[0] == "T");
  CHECK(got[1] == "D:small");
  CHECK(got[2] ==
        "E:08P01 shard s1 sent an invalid message: invalid message length 3010 for message type 'D' (limit "
        "1000)");
  CHECK(got[3] == "Z");
  CHECK(run.d.pools[1]->counts().idle == 0);  // the hostile server is closed
}
