// A second shardwire whose catalog connection is cut (so its directory is stale):
//  * it writes to a bucket another instance's mover has moved: the source's fence refuses it
//    (SW001), the stale instance refreshes once it can reach the catalog, and the write lands on
//    the new owner;
//  * it reads a bucket right after the flip, after a write through the other instance was
//    acknowledged: the read never returns the old owner's value. If it had loaded MIGRATING the
//    read waits for the outcome; if not, the flip waited out its read lease and the read is
//    refused (57P03) until it can confirm the directory.
#include "harness/sharded_fixture.h"
#include "harness/tcp_forwarder.h"
#include "it_test.h"

using namespace it;

namespace {

struct TwoInstances {
  ShardedFixture f;
  TcpForwarder relay;  // the second instance's way to the catalog, which the test can freeze
  std::unique_ptr<ProxyProcess> stale;

  explicit TwoInstances(const std::string& cutover_yaml)
      : f(options(cutover_yaml)), relay(f.setup.catalog_cluster().port()) {
    std::string dsn = f.setup.catalog_dsn();
    std::string port = "port=" + std::to_string(f.setup.catalog_cluster().port());
    if (dsn.find(port) == std::string::npos) throw std::runtime_error("catalog dsn without " + port);
    dsn.replace(dsn.find(port), port.size(), "port=" + std::to_string(relay.port()));
    stale = f.setup.start_proxy(dsn);
  }
  static ShardedOptions options(const std::string& cutover_yaml) {
    ShardedOptions o;
    o.proxy.users.push_back({"admin", "adminpw"});
    o.proxy.extra_yaml =
        "admin:\n  users: [admin]\nmover:\n  rollback_window: 60s\ncutover:\n" + cutover_yaml;
    return o;
  }
  PgConn admin() const {
    return connect_or_throw(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
  }
  std::string logs() const {
    return "mover instance log:\n" + f.log_tail(40) + "\nstale instance log:\n" + stale->log_tail(40);
  }
  // Every router registered in the catalog has loaded its current directory version.
  bool all_routers_current(PgConn& catalog) const {
    return catalog.value(
               "SELECT count(*) FROM shardwire.routers WHERE directory_version < "
               "(SELECT version FROM shardwire.directory_version)") == "0" &&
           catalog.value("SELECT count(*) FROM shardwire.routers") == "2";
  }
};

std::string qty_sql(long long key) {
  return "SELECT qty FROM orders WHERE tenant_id = " + std::to_string(key);
}

}  // namespace

TEST_SUITE("mover_stale") {
  TEST_CASE(
      "a stale instance's write to a moved bucket is refused by the fence, then lands on the new owner") {
    PROXY_ONLY();
    ShardedOptions options;
    options.proxy.users.push_back({"admin", "adminpw"});
    options.proxy.extra_yaml =
        "admin:\n  users: [admin]\nmover:\n  rollback_window: 60s\ncutover:\n  queue_timeout: 2s\n";
    ShardedFixture f(options);
    // Instance 2 reaches the catalog through a relay the test can freeze.
    TcpForwarder relay(f.setup.catalog_cluster().port());
    std::string dsn = f.setup.catalog_dsn();
    std::string port = "port=" + std::to_string(f.setup.catalog_cluster().port());
    REQUIRE(dsn.find(port) != std::string::npos);
    dsn.replace(dsn.find(port), port.size(), "port=" + std::to_string(relay.port()));
    std::unique_ptr<ProxyProcess> stale = f.setup.start_proxy(dsn);
    INFO("mover instance log:\n" << f.log_tail(30) << "\nstale instance log:\n" << stale->log_tail(30));

    const long long key = key_where([](uint32_t b) { return b == 3; });  // bucket 3 lives on s0
    PgConn via_stale = connect_or_throw(stale->conninfo());
    REQUIRE_OK(via_stale.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) +
                              ", 'before')"));

    relay.freeze(true);
    {
      PgConn admin =
          connect_or_throw(f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
      PgResult moved = admin.exec("MOVE BUCKETS 3 TO s1");
      REQUIRE_MESSAGE(moved.ok(), moved.describe());
      PgConn catalog = f.setup.catalog();
      bool flipped = wait_until(
          [&] {
            return catalog.value("SELECT shard || state FROM shardwire.buckets WHERE bucket = 3") ==
                   "s1ACTIVE";
          },
          60s, 100ms);
      REQUIRE_MESSAGE(flipped, "bucket 3 did not move; mover log:\n" << f.log_tail(40));
    }
    // Instance 2 still routes bucket 3 to s0, whose fence refuses the write; it asks for a new
    // directory, which it gets as soon as the catalog is reachable again.
    REQUIRE(via_stale.send("UPDATE orders SET note = 'via stale' WHERE tenant_id = " + std::to_string(key)));
    CHECK(stale->wait_for_log("refused a write", 10s));
    relay.freeze(false);
    PgResult updated = via_stale.wait_result(20s);
    CHECK_MESSAGE(updated.ok(), updated.describe());
    CHECK(updated.command_tag() == "UPDATE 1");
    PgConn s1 = f.setup.shard(1);
    CHECK(s1.value("SELECT note FROM orders WHERE tenant_id = " + std::to_string(key)) == "via stale");
  }

  TEST_CASE("an instance that loaded MIGRATING holds reads of the bucket until it learns the outcome") {
    PROXY_ONLY();
    // The drain waits for a transaction held open on the source, so the test can cut the second
    // instance off after it acknowledged MIGRATING and before the flip.
    TwoInstances d("  queue_timeout: 20s\n  drain_timeout: 30s\n");
    INFO(d.logs());
    const long long key = key_where([](uint32_t b) { return b == 3; });  // bucket 3 lives on s0
    PgConn via_mover = d.f.client();
    REQUIRE_OK(
        via_mover.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'x')"));
    PgConn via_stale = connect_or_throw(d.stale->conninfo());
    REQUIRE(via_stale.value(qty_sql(key)) == "0");

    PgConn blocker = d.f.setup.shard(0);
    REQUIRE_OK(blocker.exec("BEGIN"));
    REQUIRE_OK(blocker.exec("SELECT 1"));  // no xid: the copy's slot does not wait for it
    PgConn admin = d.admin();
    PgResult moved = admin.exec("MOVE BUCKETS 3 TO s1");
    REQUIRE_MESSAGE(moved.ok(), moved.describe());
    PgConn catalog = d.f.setup.catalog();
    bool draining = wait_until(
        [&] {
          return catalog.value("SELECT step FROM shardwire.migrations ORDER BY id DESC LIMIT 1") == "drain" &&
                 d.all_routers_current(catalog);
        },
        60s, 20ms);
    REQUIRE_MESSAGE(draining, "the cutover did not reach its drain with both routers on MIGRATING");
    REQUIRE(catalog.value("SELECT state FROM shardwire.buckets WHERE bucket = 3") == "MIGRATING");

    d.relay.freeze(true);  // the stale instance will not hear of the flip
    REQUIRE_OK(blocker.exec("COMMIT"));
    bool flipped = wait_until(
        [&] {
          return catalog.value("SELECT shard || state FROM shardwire.buckets WHERE bucket = 3") == "s1ACTIVE";
        },
        30s, 10ms);
    REQUIRE_MESSAGE(flipped, "bucket 3 did not move");
    PgResult wrote = via_mover.exec("UPDATE orders SET qty = 1 WHERE tenant_id = " + std::to_string(key));
    REQUIRE_MESSAGE(wrote.command_tag() == "UPDATE 1", wrote.describe());

    // The read began after the write was acknowledged: the old owner's 0 would be a stale read.
    REQUIRE(via_stale.send(qty_sql(key)));
    PgResult early = via_stale.wait_result(1500ms);
    CHECK_MESSAGE(early.timed_out(), "the read was not held: " << early.describe() << " " << early.value());
    d.relay.freeze(false);
    PgResult read = early.timed_out() ? via_stale.wait_result(20s) : std::move(early);
    REQUIRE_MESSAGE(read.ok(), read.describe());
    CHECK(read.value() == "1");
  }

  TEST_CASE("a flip waits out the read lease of an instance that did not load MIGRATING") {
    PROXY_ONLY();
    TwoInstances d("  queue_timeout: 4s\n");
    INFO(d.logs());
    const long long key = key_where([](uint32_t b) { return b == 3; });  // bucket 3 lives on s0
    PgConn via_mover = d.f.client();
    REQUIRE_OK(
        via_mover.exec("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(key) + ", 'x')"));
    PgConn via_stale = connect_or_throw(d.stale->conninfo());
    REQUIRE(via_stale.value(qty_sql(key)) == "0");
    PgConn catalog = d.f.setup.catalog();
    REQUIRE(wait_until([&] { return d.all_routers_current(catalog); }, 10s, 20ms));

    d.relay.freeze(true);  // the stale instance keeps its directory: bucket 3 ACTIVE on s0
    PgConn admin = d.admin();
    PgResult moved = admin.exec("MOVE BUCKETS 3 TO s1");
    REQUIRE_MESSAGE(moved.ok(), moved.describe());
    // The invariant: at the flip, the stale instance's read lease (4 s from its last heartbeat,
    // which the catalog stamped no earlier than the instance's own confirmation) has run out.
    // Normally the mover waits it out; on a loaded machine the copy may outlast the lease, and then
    // the mover rightly does not wait. Either way the age at the first sight of the flip shows it.
    double stale_heartbeat_age_s = 0;
    bool flipped = wait_until(
        [&] {
          PgResult r = catalog.exec(
              "SELECT (SELECT shard || state FROM shardwire.buckets WHERE bucket = 3), "
              "extract(epoch FROM now() - min(heartbeat_at)) FROM shardwire.routers");
          if (!r.ok() || r.rows() != 1) return false;
          stale_heartbeat_age_s = std::stod(r.value(0, 1));
          return r.value(0, 0) == "s1ACTIVE";
        },
        60s, 5ms);
    REQUIRE_MESSAGE(flipped, "bucket 3 did not move");
    CHECK_MESSAGE(stale_heartbeat_age_s >= 4.0,
                  "flipped " << stale_heartbeat_age_s << " s after the stale instance's heartbeat");
    if (!d.f.proxy->wait_for_log("the flip waits until their read lease has run out", 1s))
      MESSAGE("the read lease ran out before MIGRATING was published: the mover did not need to wait");
    PgResult wrote = via_mover.exec("UPDATE orders SET qty = 1 WHERE tenant_id = " + std::to_string(key));
    REQUIRE_MESSAGE(wrote.command_tag() == "UPDATE 1", wrote.describe());

    // The stale instance still holds a valid directory lease (30 s) but not a read lease: it must
    // not answer from s0.
    PgResult read = via_stale.exec(qty_sql(key));
    INFO(read.describe());
    CHECK(!read.ok());
    CHECK(read.sqlstate() == "57P03");
    CHECK(contains(read.error(), "read lease"));
    // Writes still route on the directory lease and meet the fence.
    d.relay.freeze(false);
    bool fresh = wait_until(
        [&] {
          PgResult r = via_stale.exec(qty_sql(key));
          return r.ok() && r.value() == "1";
        },
        20s, 50ms);
    CHECK(fresh);
  }

}  // TEST_SUITE
