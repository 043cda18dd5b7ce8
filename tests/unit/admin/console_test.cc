// Console::execute against a fake ConsoleHost that records calls and answers at once or later:
// every command replies exactly once, and errors carry the right SQLSTATE.
#include "admin/console.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "wire/frame_reader.h"
#include "wire/messages.h"

using namespace sw;
using namespace sw::admin;

namespace {

std::shared_ptr<const config::Config> load(bool catalog) {
  std::string yaml =
      "auth: { method: md5, users: [ { name: app, password: pw } ] }\n"
      "shards: [ { name: s0, dsn: 'host=a dbname=app' }, { name: s1, dsn: 'host=b dbname=app' } ]\n"
      "sharding: { buckets: 8, tables: [ { name: orders, key: tenant_id } ] }\n";
  if (catalog) yaml += "catalog: { dsn: 'host=cat dbname=shardwire' }\n";
  return std::make_shared<const config::Config>(config::load_string(yaml, "shardwire.yaml"));
}

class FakeHost : public ConsoleHost {
 public:
  bool sync = true;  // answer gather/list_routers/reload/kill_client before returning
  std::shared_ptr<const config::Config> cfg = load(true);
  ProxyState proxy_state;
  DirectoryStatus directory{router::Directory::initial(8, {"s0", "s1"}), "static", 0, true};
  Status reload_status;
  bool client_exists = true;
  Result<std::vector<catalog::RegisteredRouter>> routers = std::vector<catalog::RegisteredRouter>{};
  Result<std::vector<catalog::IdSlot>> id_slots = std::vector<catalog::IdSlot>{};
  Result<std::vector<twopc::InDoubtTransaction>> in_doubt = std::vector<twopc::InDoubtTransaction>{
      {"shardwire_00000000000000aa_0_1", "s1", "2026-12-02 13:00:00+00", 7.5, "none", "00000000000000aa"}};

  std::vector<std::string> calls;
  std::vector<std::function<void()>> pending;  // deferred answers, in call order
  std::function<void()> pause_done;
  uint64_t killed = 0;
  ShutdownMode shutdown_mode = ShutdownMode::Immediate;

  std::shared_ptr<const config::Config> config() override { return cfg; }
  void gather(bool lists, std::function<void(stats::Snapshot)> done) override {
    calls.push_back(lists ? "gather lists" : "gather");
    answer([done] {
      stats::Snapshot s;
      s.pools.push_back({"s0", "app"});
      done(std::move(s));
    });
  }
  DirectoryStatus directory_status() override { return directory; }
  void list_routers(std::function<void(Result<std::vector<catalog::RegisteredRouter>>)> done) override {
    calls.push_back("list_routers");
    answer([this, done] { done(routers); });
  }
  void list_id_slots(std::function<void(Result<std::vector<catalog::IdSlot>>)> done) override {
    calls.push_back("list_id_slots");
    answer([this, done] { done(id_slots); });
  }
  void list_in_doubt(std::function<void(Result<std::vector<twopc::InDoubtTransaction>>)> done) override {
    calls.push_back("list_in_doubt");
    answer([this, done] { done(in_doubt); });
  }
  ProxyState state() override { return proxy_state; }
  void pause(std::function<void()> done) override {
    calls.push_back("pause");
    proxy_state.paused = true;
    pause_done = std::move(done);  // fires when transactions in progress end: always later
  }
  Status resume() override {
    calls.push_back("resume");
    if (!proxy_state.paused) return Status::client("55000", "not paused");
    proxy_state.paused = false;
    return Status::ok();
  }
  void reload(std::function<void(Status)> done) override {
    calls.push_back("reload");
    answer([this, done] { done(reload_status); });
  }
  void shutdown(ShutdownMode mode) override {
    calls.push_back("shutdown");
    shutdown_mode = mode;
  }
  void kill_client(uint64_t id, std::function<void(bool)> done) override {
    calls.push_back("kill_client");
    killed = id;
    answer([this, done] { done(client_exists); });
  }
  void reconnect() override { calls.push_back("reconnect"); }
  void move_buckets(const std::string& list, const std::string& target,
                    std::function<void(Result<std::vector<PlannedMigration>>)> done) override {
    calls.push_back("move " + list + " to " + target);
    answer([done, target] { done(std::vector<PlannedMigration>{{"s0", target, {1, 2, 3, 7}, 42}}); });
  }
  void rebalance(const std::vector<std::string>& targets, bool by_buckets, bool dry_run,
                 std::function<void(Result<std::vector<PlannedMigration>>)> done) override {
    calls.push_back(std::string("rebalance ") + std::to_string(targets.size()) +
                    (by_buckets ? " by buckets" : "") + (dry_run ? " dry" : ""));
    answer([done, dry_run] { done(std::vector<PlannedMigration>{{"s0", "s2", {5}, dry_run ? 0 : 9}}); });
  }
  void list_migrations(std::function<void(Result<std::vector<catalog::Migration>>)> done) override {
    calls.push_back("list migrations");
    catalog::Migration m;
    m.id = 3;
    m.state = catalog::MigrationState::Copying;
    m.source = "s0";
    m.target = "s1";
    m.buckets = {1, 2, 3, 9};
    m.rows_copied = 50;
    m.rows_total = 200;
    answer([done, m] { done(std::vector<catalog::Migration>{m}); });
  }
  void request_migration(int64_t id, catalog::MigrationRequest, std::function<void(Status)> done) override {
    calls.push_back("request " + std::to_string(id));
    answer([done, id] { done(id == 404 ? Status::client("42704", "no migration 404") : Status::ok()); });
  }
  void verify_bucket(uint32_t bucket, std::function<void(Result<std::vector<BucketCheck>>)> done) override {
    calls.push_back("verify " + std::to_string(bucket));
    answer([done] {
      done(std::vector<BucketCheck>{{"s0", "owner", 10, "123"}, {"s1", "target", 10, "124"}});
    });
  }

  void verify_reference(const std::string& table,
                        std::function<void(Result<std::vector<ReferenceCheck>>)> done) override {
    calls.push_back("verify reference " + table);
    answer([done] {
      done(std::vector<ReferenceCheck>{{"s0", true, 3, "77", true}, {"s1", false, 0, "", false}});
    });
  }

  void run_pending() {
    auto list = std::move(pending);
    pending.clear();
    for (auto& f : list) f();
  }

 private:
  void answer(std::function<void()> f) {
    if (sync)
      f();
    else
      pending.push_back(std::move(f));
  }
};

struct Harness {
  FakeHost host;
  Console console{host};
  std::vector<std::string> replies;

  void run(const std::string& text) {
    console.execute(text, [this](std::string reply) {
      host.calls.push_back("reply");
      replies.push_back(std::move(reply));
    });
  }
  // The only reply so far.
  const std::string& reply() {
    REQUIRE(replies.size() == 1);
    return replies[0];
  }
};

// Message types of a reply ("TDDC", "E", ...), each frame complete and nothing left over.
std::string types(const std::string& reply) {
  std::string out;
  std::string_view rest = reply;
  while (!rest.empty()) {
    auto r = wire::read_frame(rest, wire::Sender::Server, wire::Limits{});
    REQUIRE(r.status == wire::FrameStatus::Complete);
    out.push_back(r.frame.type);
    rest.remove_prefix(r.frame.size);
  }
  return out;
}

// The tag of a reply ending in CommandComplete.
std::string tag(const std::string& reply) {
  std::string_view rest = reply;
  for (;;) {
    auto r = wire::read_frame(rest, wire::Sender::Server, wire::Limits{});
    REQUIRE(r.status == wire::FrameStatus::Complete);
    if (r.frame.size == rest.size()) {
      REQUIRE(r.frame.type == 'C');
      return std::string(*wire::decode_command_complete(r.frame.body));
    }
    rest.remove_prefix(r.frame.size);
  }
}

// The fields of a reply that is one ErrorResponse.
std::map<char, std::string> error_fields(const std::string& reply) {
  auto r = wire::read_frame(reply, wire::Sender::Server, wire::Limits{});
  REQUIRE(r.status == wire::FrameStatus::Complete);
  REQUIRE(r.frame.type == 'E');
  REQUIRE(r.frame.size == reply.size());
  std::map<char, std::string> fields;
  std::string_view body = r.frame.body;
  while (!body.empty() && body[0] != '\0') {
    size_t end = body.find('\0');
    fields[body[0]] = std::string(body.substr(1, end - 1));
    body.remove_prefix(end + 1);
  }
  return fields;
}

const char* const kShows[] = {"SHOW HELP",         "SHOW VERSION",
                              "SHOW CONFIG",       "SHOW DATABASES",
                              "SHOW POOLS",        "SHOW CLIENTS",
                              "SHOW SERVERS",      "SHOW STATS",
                              "SHOW STATS_TOTALS", "SHOW LISTS",
                              "SHOW USERS",        "SHOW STATE",
                              "SHOW SHARDS",       "SHOW BUCKETS",
                              "SHOW BUCKETS s1",   "SHOW DIRECTORY",
                              "SHOW ROUTERS",      "SHOW SEQUENCES",
                              "SHOW TRANSACTIONS", "SHOW ROUTE SELECT * FROM orders WHERE tenant_id = 7"};

}  // namespace

TEST_CASE("every SHOW replies once with a result set") {
  for (bool sync : {true, false}) {
    for (const char* text : kShows) {
      CAPTURE(text);
      CAPTURE(sync);
      Harness h;
      h.host.sync = sync;
      h.run(text);
      if (!sync) {
        // Deferred answers: nothing is sent before the host calls back.
        if (!h.host.pending.empty()) CHECK(h.replies.empty());
        h.host.run_pending();
      }
      const std::string& reply = h.reply();
      std::string kinds = types(reply);
      CHECK(kinds.front() == 'T');
      CHECK(kinds.back() == 'C');
      CHECK(tag(reply) == "SHOW");
      // Nothing but reads: no pause, reload, shutdown...
      for (const auto& call : h.host.calls) {
        CHECK((call == "reply" || call.rfind("gather", 0) == 0 || call == "list_routers" ||
               call == "list_id_slots" || call == "list_in_doubt"));
      }
    }
  }
}

TEST_CASE("only SHOW CLIENTS and SHOW SERVERS gather the per-connection lists") {
  for (const char* text : kShows) {
    CAPTURE(text);
    Harness h;
    h.run(text);
    std::string what = text;
    bool snapshot = what == "SHOW DATABASES" || what == "SHOW POOLS" || what == "SHOW CLIENTS" ||
                    what == "SHOW SERVERS" || what == "SHOW STATS" || what == "SHOW STATS_TOTALS" ||
                    what == "SHOW LISTS";
    bool lists = what == "SHOW CLIENTS" || what == "SHOW SERVERS";
    std::vector<std::string> expected;
    if (snapshot) expected.push_back(lists ? "gather lists" : "gather");
    if (what == "SHOW ROUTERS") expected.push_back("list_routers");
    if (what == "SHOW SEQUENCES") expected.push_back("list_id_slots");
    if (what == "SHOW TRANSACTIONS") expected.push_back("list_in_doubt");
    expected.push_back("reply");
    CHECK(h.host.calls == expected);
  }
}

TEST_CASE("PAUSE replies when the host's pause completes; a second PAUSE is 55000") {
  Harness h;
  h.run("PAUSE");
  CHECK(h.replies.empty());
  REQUIRE(h.host.pause_done);
  h.host.pause_done();
  CHECK(types(h.reply()) == "C");
  CHECK(tag(h.reply()) == "PAUSE");

  Harness again;
  again.host.proxy_state.paused = true;
  again.run("pause;");
  auto fields = error_fields(again.reply());
  CHECK(fields['C'] == "55000");
  CHECK(fields['M'].find("paused") != std::string::npos);
  CHECK(again.host.calls == std::vector<std::string>{"reply"});  // the host's pause was not called

  // SHOW DATABASES reports the paused state.
  Harness db;
  db.host.proxy_state.paused = true;
  db.run("SHOW DATABASES");
  CHECK(types(db.reply()).front() == 'T');
}

TEST_CASE("RESUME passes the host's answer on") {
  Harness h;
  h.run("RESUME");
  auto fields = error_fields(h.reply());
  CHECK(fields['C'] == "55000");
  CHECK(fields['M'] == "not paused");
  CHECK(fields.count('H') == 0);

  Harness paused;
  paused.host.proxy_state.paused = true;
  paused.run("RESUME");
  CHECK(tag(paused.reply()) == "RESUME");
  CHECK(paused.host.calls == std::vector<std::string>{"resume", "reply"});
}

TEST_CASE("RELOAD: success, and a failure becomes an ErrorResponse with its message") {
  Harness ok;
  ok.host.sync = false;
  ok.run("RELOAD");
  CHECK(ok.replies.empty());
  ok.host.run_pending();
  CHECK(tag(ok.reply()) == "RELOAD");

  Harness bad;
  bad.host.reload_status = Status::config("shardwire.yaml:3: pool.size: must be at least 1");
  bad.run("RELOAD");
  auto fields = error_fields(bad.reply());
  CHECK(fields['C'] == "F0000");
  CHECK(fields['M'] == "shardwire.yaml:3: pool.size: must be at least 1");
  CHECK(fields['V'] == "ERROR");
}

TEST_CASE("KILL_CLIENT: found, and not found is 42704") {
  Harness found;
  found.run("KILL_CLIENT c42");
  CHECK(found.host.killed == 42);
  CHECK(tag(found.reply()) == "KILL_CLIENT");

  Harness missing;
  missing.host.client_exists = false;
  missing.host.sync = false;
  missing.run("KILL_CLIENT 9");
  CHECK(missing.replies.empty());
  missing.host.run_pending();
  auto fields = error_fields(missing.reply());
  CHECK(fields['C'] == "42704");
  CHECK(fields['M'].find("9") != std::string::npos);
  CHECK(fields['H'].find("SHOW CLIENTS") != std::string::npos);
}

TEST_CASE("SHUTDOWN replies before shutting down; RECONNECT") {
  Harness h;
  h.run("SHUTDOWN WAIT_FOR_CLIENTS");
  CHECK(tag(h.reply()) == "SHUTDOWN");
  CHECK(h.host.calls == std::vector<std::string>{"reply", "shutdown"});
  CHECK(h.host.shutdown_mode == ShutdownMode::WaitForClients);

  Harness r;
  r.run("RECONNECT");
  CHECK(tag(r.reply()) == "RECONNECT");
  CHECK(r.host.calls == std::vector<std::string>{"reconnect", "reply"});
}

TEST_CASE("SHOW ROUTERS without catalog.dsn is 55000; a catalog error is passed on") {
  Harness none;
  none.host.cfg = load(false);
  none.run("SHOW ROUTERS");
  CHECK(error_fields(none.reply())['C'] == "55000");
  CHECK(none.host.calls == std::vector<std::string>{"reply"});

  Harness down;
  down.host.routers = Status::server("08006", "could not connect to the catalog");
  down.run("SHOW ROUTERS");
  auto fields = error_fields(down.reply());
  CHECK(fields['C'] == "08006");
  CHECK(fields['M'] == "could not connect to the catalog");
}

TEST_CASE("SHOW TRANSACTIONS without catalog.dsn is 55000; a shard error is passed on") {
  Harness none;
  none.host.cfg = load(false);
  none.run("SHOW TRANSACTIONS");
  CHECK(error_fields(none.reply())['C'] == "55000");
  CHECK(none.host.calls == std::vector<std::string>{"reply"});

  Harness down;
  down.host.in_doubt = Status::server("08006", "shard s1: connection refused");
  down.run("SHOW TRANSACTIONS");
  auto fields = error_fields(down.reply());
  CHECK(fields['C'] == "08006");
  CHECK(fields['M'] == "shard s1: connection refused");
}

TEST_CASE("directory commands without a directory, an unknown shard, bad SQL") {
  Harness h;
  h.host.directory = DirectoryStatus{};
  h.run("SHOW BUCKETS");
  h.run("SHOW ROUTE SELECT 1");
  h.run("SHOW SHARDS");
  h.run("SHOW DIRECTORY");
  REQUIRE(h.replies.size() == 4);
  CHECK(error_fields(h.replies[0])['C'] == "57P03");
  CHECK(error_fields(h.replies[1])['C'] == "57P03");
  CHECK(types(h.replies[2]).front() == 'T');
  CHECK(types(h.replies[3]).front() == 'T');

  Harness shard;
  shard.run("SHOW BUCKETS nope");
  CHECK(error_fields(shard.reply())['C'] == "42704");

  Harness sql;
  sql.run("SHOW ROUTE SELEC 1");
  auto fields = error_fields(sql.reply());
  CHECK(fields['C'] == "42601");
  CHECK(fields.count('H') == 0);
}

TEST_CASE("unknown or malformed commands are 08P01 with a hint, and touch nothing") {
  for (const char* text : {"SELECT 1", "SHOW", "PAUSE now", "KILL_CLIENT x", "PAUSE; RESUME", ""}) {
    CAPTURE(text);
    Harness h;
    h.run(text);
    auto fields = error_fields(h.reply());
    CHECK(fields['C'] == "08P01");
    CHECK_FALSE(fields['M'].empty());
    CHECK(fields['H'].find("SHOW HELP") != std::string::npos);
    CHECK(h.host.calls == std::vector<std::string>{"reply"});
  }
}

TEST_CASE("the mover's commands reach the host and render their tables") {
  Harness h;
  h.run("MOVE BUCKETS 1-3,7 TO s1");
  h.run("REBALANCE TO s0, s2 DRY RUN");
  h.run("SHOW MIGRATIONS");
  h.run("VERIFY BUCKET 5");
  h.run("PAUSE MIGRATION 3");
  h.run("cancel migration 404");
  REQUIRE(h.replies.size() == 6);
  CHECK(h.host.calls[0] == "move 1-3,7 to s1");
  CHECK(h.host.calls[2] == "rebalance 2 dry");
  CHECK(types(h.replies[0]) == "TDC");
  CHECK(types(h.replies[1]) == "TDC");
  CHECK(types(h.replies[2]) == "TDC");
  CHECK(types(h.replies[3]) == "TDDC");
  CHECK(tag(h.replies[4]) == "PAUSE MIGRATION");
  CHECK(error_fields(h.replies[5])['C'] == "42704");
}

TEST_CASE("VERIFY REFERENCE: one row per shard, NULLs where the table is missing") {
  Harness h;
  h.run("VERIFY REFERENCE plans");
  CHECK(h.host.calls[0] == "verify reference plans");
  CHECK(types(h.reply()) == "TDDC");
  const std::string reply = h.reply();
  CHECK(reply.find("matches") != std::string::npos);
  CHECK(reply.find("77") != std::string::npos);
}

TEST_CASE("the mover's commands need a catalog") {
  Harness h;
  h.host.cfg = load(false);
  h.run("SHOW MIGRATIONS");
  CHECK(error_fields(h.reply())['C'] == "55000");
  CHECK(h.host.calls == std::vector<std::string>{"reply"});
}
