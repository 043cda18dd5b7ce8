// Hostile backends: server faults a real PostgreSQL cannot produce. shardwire runs with two shards: s0 on the
// real PostgreSQL cluster (the default shard, where logins and unsharded statements go) and s1 on a scripted
// FakeBackend (harness/fake_backend.h) that misbehaves in one way per case. Keyed statements on
// table t (key k, 8 buckets, bucket i on shard i mod 2) whose bucket is on s1 reach the fake.
//
// For every fault: the client whose statement met it gets an error with the expected SQLSTATE
// and a message naming the shard and what was wrong; the log says why the server was dropped;
// the broken server is never reused (the next statement opens a new connection to the fake);
// shardwire stays up and answers quickly; a client of the real shard running statements all the
// while on the same worker never sees an error; no shard password reaches the log.
#include <atomic>
#include <mutex>
#include <thread>

#include "harness/fake_backend.h"
#include "it_test.h"
#include "router/bucket_hash.h"

using namespace it;

namespace {

constexpr uint32_t kBuckets = 8;
const char* const kFakeShardPassword = "fake-shard-pw-5d21e8";

// The first key whose bucket the initial directory gives to `shard` (of 2).
int64_t key_on_shard(int shard) {
  for (int64_t k = 1;; ++k)
    if (static_cast<int>(sw::router::bucket_of_hash(sw::router::hash_int8(k), kBuckets) % 2) == shard)
      return k;
}

ProxyOptions options_with_fake(int fake_port, bool fake_wants_tls) {
  ProxyOptions o;
  o.workers = 1;  // the bystander shares the event loop with the victim
  o.server_connect_timeout = "3s";
  std::string fake_dsn = "host=127.0.0.1 port=" + std::to_string(fake_port) +
                         " dbname=app user=app password=" + kFakeShardPassword;
  if (fake_wants_tls) fake_dsn += " sslmode=require";
  // Continues the `shards:` list render_config() starts with s0 (the real cluster).
  o.extra_yaml =
      "  - name: s1\n"
      "    dsn: " +
      yaml_quote(fake_dsn) +
      "\n"
      "sharding:\n"
      "  buckets: " +
      std::to_string(kBuckets) +
      "\n"
      "  default_shard: s0\n"
      "  tables:\n"
      "    - name: t\n"
      "      key: k\n"
      "      type: bigint\n";
  return o;
}

// A client of the real shard running statements in a loop on its own connection until stopped.
class Bystander {
 public:
  explicit Bystander(const std::string& conninfo) {
    ConnectResult login = connect(conninfo);
    if (!login.ok) throw std::runtime_error("bystander connect: " + login.error);
    conn_ = std::move(login.conn);
    thread_ = std::thread([this] {
      while (!stop_) {
        PgResult r = conn_.exec("SELECT count(*) FROM pg_class", 10s);
        if (r.ok()) {
          ++ok_;
        } else {
          ++failed_;
          std::lock_guard<std::mutex> lock(mutex_);
          last_error_ = r.describe();
        }
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  ~Bystander() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int ok() const { return ok_.load(); }
  int failed() const { return failed_.load(); }
  std::string last_error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_error_;
  }

 private:
  PgConn conn_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> ok_{0}, failed_{0};
  mutable std::mutex mutex_;
  std::string last_error_;
};

struct HostileCase {
  BackendFault fault;
  FakeAuth auth = FakeAuth::Trust;
  bool tls = false;         // the s1 DSN asks for sslmode=require
  std::string sqlstate;     // what the client gets
  std::string client_says;  // part of the client's error message
  std::string log_says;     // part of shardwire's log line dropping the server
  bool scatter = false;     // a read without a key (fan-out to both shards) meets the fault
};

void run_case(const HostileCase& c) {
  PROXY_ONLY();
  const std::string fault = fault_name(c.fault);
  CAPTURE(fault);
  if (c.scatter) {
    PgConn admin = shared_cluster().admin("app");
    REQUIRE_OK(admin.exec("CREATE TABLE IF NOT EXISTS t (k bigint, v text); GRANT ALL ON t TO app"));
  }
  FakeBackend fake({c.auth, c.fault});
  ProxyProcess proxy(shared_cluster(), options_with_fake(fake.port(), c.tls));
  INFO("proxy log:\n" << proxy.log_tail(30));
  INFO("fake backend:\n" << fake.events());
  const std::string statement =
      c.scatter ? "SELECT v FROM t" : "SELECT v FROM t WHERE k = " + std::to_string(key_on_shard(1));

  Bystander bystander(proxy.conninfo());
  REQUIRE(wait_until([&] { return bystander.ok() >= 3; }, 10s));

  ConnectResult victim = connect(proxy.conninfo());
  REQUIRE_MESSAGE(victim.ok, victim.error);
  auto start = std::chrono::steady_clock::now();
  PgResult r = victim.conn.exec(statement, 20s);
  long long took = ms_since(start);
  CAPTURE(took);
  INFO("client got: " << r.describe());
  CHECK_FALSE(r.ok());
  CHECK_FALSE(r.timed_out());
  CHECK(took < 5000);  // refused, not computed or waited out
  CHECK(fake.faults_delivered() >= 1);
  CHECK(r.sqlstate() == c.sqlstate);
  CHECK(contains(r.error(), "shard s1"));
  CHECK(contains(r.error(), c.client_says));
  CHECK_MESSAGE(proxy.wait_for_log(c.log_says, 5s), "the log does not say: " << c.log_says);

  // The broken server is not reused: the same statement again opens a new connection to s1.
  int connections_before = fake.connections();
  ConnectResult again = connect(proxy.conninfo());
  REQUIRE_MESSAGE(again.ok, again.error);
  PgResult second = again.conn.exec(statement, 20s);
  CHECK_FALSE(second.ok());
  CHECK(second.sqlstate() == c.sqlstate);
  CHECK(fake.connections() > connections_before);

  // shardwire is alive, the real shard's client never noticed, new clients get in.
  int seen = bystander.ok();
  CHECK(wait_until([&] { return bystander.ok() >= seen + 3; }, 10s));
  bystander.stop();
  CHECK_MESSAGE(bystander.failed() == 0, "bystander: " << bystander.last_error());
  CHECK(proxy.running());
  ConnectResult after = connect(proxy.conninfo());
  REQUIRE_MESSAGE(after.ok, after.error);
  CHECK(after.conn.value("SELECT 'still serving'") == "still serving");
  CHECK_FALSE(contains(proxy.log(), kFakeShardPassword));
}

}  // namespace

TEST_SUITE("hostile_backend") {
  // The control: the same setup with a well-behaved fake answers, so every fault case below fails
  // for its fault and not because the fake or the routing does not work.
  TEST_CASE("a well-behaved fake backend answers through shardwire (trust and md5)") {
    PROXY_ONLY();
    for (FakeAuth auth : {FakeAuth::Trust, FakeAuth::Md5}) {
      FakeBackend fake({auth, BackendFault::None});
      ProxyProcess proxy(shared_cluster(), options_with_fake(fake.port(), false));
      INFO("proxy log:\n" << proxy.log_tail(30));
      INFO("fake backend:\n" << fake.events());
      // shardwire's own check of each shard login at start is one connection of its own.
      REQUIRE(proxy.wait_for_log("shard logins checked", 10s));
      const int before = fake.connections();
      PgConn c = connect_or_throw(proxy.conninfo());
      PgResult r = c.exec("SELECT v FROM t WHERE k = " + std::to_string(key_on_shard(1)), 20s);
      REQUIRE_MESSAGE(r.ok(), r.describe());
      CHECK(r.value() == "1");
      CHECK(fake.connections() - before == 1);
      CHECK(c.value("SELECT 'real'") == "real");  // s0: the real cluster
      CHECK_FALSE(contains(proxy.log(), kFakeShardPassword));
    }
  }

  // pool.size counts the servers PostgreSQL has: a server closed by the proxy keeps its slot until
  // it hangs up after Terminate, and one that never does is closed from shardwire's side after a
  // second, so its slot is not lost either.
  TEST_CASE("a server closed by the pool holds its pool.size slot until it hangs up") {
    PROXY_ONLY();
    for (BackendFault fault : {BackendFault::None, BackendFault::IgnoresTerminate}) {
      FakeBackend fake({FakeAuth::Trust, fault});
      ProxyOptions o = options_with_fake(fake.port(), false);
      o.pool_size = 1;
      o.idle_timeout = "1s";
      ProxyProcess proxy(shared_cluster(), o);
      INFO("fault: " << fault_name(fault));
      INFO("proxy log:\n" << proxy.log_tail(30));
      INFO("fake backend:\n" << fake.events());
      REQUIRE(proxy.wait_for_log("shard logins checked", 10s));
      PgConn c = connect_or_throw(proxy.conninfo());
      const std::string keyed = "SELECT v FROM t WHERE k = " + std::to_string(key_on_shard(1));
      REQUIRE_OK(c.exec(keyed, 20s));
      const int first = fake.connections();
      // idle_timeout closes the server: Terminate, then (the fault) no hang-up.
      REQUIRE(wait_until([&] { return contains(fake.events(), 'c' + std::to_string(first) + " Terminate"); },
                         10s));
      REQUIRE_OK(c.exec(keyed, 20s));
      const std::string proxy_log_now = proxy.log();
      REQUIRE(fake.connections() == first + 1);
      if (fault == BackendFault::IgnoresTerminate) {
        CHECK(fake.faults_delivered() >= 1);
        // The proxy logs giving up on the hang-up (one write(2), before the slot goes back) and
        // only then opens the server that answered: the line is there when the answer is.
        CHECK(contains(proxy_log_now, "did not hang up within"));
        CHECK(wait_until(
            [&] { return contains(fake.events(), "c" + std::to_string(first) + " closed by shardwire"); },
            5s));
      } else {
        CHECK_FALSE(contains(proxy.log(), "did not hang up"));
      }
    }
  }

  TEST_CASE("bytes after the S answer to SSLRequest") {
    run_case({BackendFault::SslBytesAfterAnswer, FakeAuth::Trust, true, "08P01",
              "server sent unencrypted data after its SSL response",
              "login failed: server sent unencrypted data"});
  }

  TEST_CASE("SCRAM iteration count of 2^31 is refused, not computed") {
    run_case({BackendFault::ScramHugeIterations, FakeAuth::Scram, false, "28000",
              "the server asked for more than 100000 SCRAM iterations",
              "login failed: the server asked for more than 100000 SCRAM iterations"});
  }

  TEST_CASE("an over-long SCRAM nonce") {
    run_case({BackendFault::ScramLongNonce, FakeAuth::Scram, false, "08P01",
              "the nonce is longer than 1024 bytes",
              "login failed: invalid SCRAM response: the nonce is longer than 1024 bytes"});
  }

  TEST_CASE("a SCRAM server signature that does not prove the password") {
    run_case({BackendFault::ScramBadSignature, FakeAuth::Scram, false, "28000",
              "invalid SCRAM server signature", "login failed: invalid SCRAM server signature"});
  }

  TEST_CASE("a login ErrorResponse without SQLSTATE") {
    run_case({BackendFault::LoginErrorWithoutSqlstate, FakeAuth::Md5, false, "08006",
              "server refused login without a valid SQLSTATE: fake backend: no SQLSTATE in this login error",
              "login failed: server refused login without a valid SQLSTATE"});
  }

  TEST_CASE("a query ErrorResponse without SQLSTATE") {
    run_case({BackendFault::QueryErrorWithoutSqlstate, FakeAuth::Trust, false, "08P01",
              "ErrorResponse without a SQLSTATE",
              "protocol violation by server, dropping it: ErrorResponse without a SQLSTATE"});
  }

  TEST_CASE("a truncated DataRow (a field longer than its message)") {
    run_case({BackendFault::TruncatedDataRow, FakeAuth::Trust, false, "08P01",
              "DataRow column 1 claims 100 bytes",
              "protocol violation by server, dropping it: DataRow column 1 claims 100 bytes"});
  }

  TEST_CASE("a DataRow whose column count differs from its RowDescription") {
    run_case({BackendFault::ColumnCountMismatch, FakeAuth::Trust, false, "08P01",
              "DataRow has 3 columns but its RowDescription has 1",
              "protocol violation by server, dropping it: DataRow has 3 columns"});
  }

  TEST_CASE("a message length of 2^31") {
    run_case({BackendFault::HugeMessageLength, FakeAuth::Trust, false, "08P01",
              "invalid message length 2147483648",
              "protocol violation by server, dropping it: invalid message length 2147483648"});
  }

  TEST_CASE("the server closes mid-result (between messages)") {
    run_case({BackendFault::CloseMidResult, FakeAuth::Trust, false, "08006",
              "server connection to shard s1 was lost",
              "lost its server: server connection to shard s1 was lost"});
  }

  TEST_CASE("the server closes mid-message (inside a DataRow)") {
    run_case({BackendFault::CloseMidMessage, FakeAuth::Trust, false, "08006",
              "server connection to shard s1 was lost",
              "lost its server: server connection to shard s1 was lost"});
  }

  TEST_CASE("a scatter read meeting a DataRow column count mismatch on one shard") {
    run_case({BackendFault::ColumnCountMismatch, FakeAuth::Trust, false, "08P01",
              "DataRow has 3 columns but its RowDescription has 1",
              "shard=s1 protocol violation by server, dropping it: DataRow has 3 columns", /*scatter=*/true});
  }

}  // TEST_SUITE
