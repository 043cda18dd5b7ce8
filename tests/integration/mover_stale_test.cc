// A second shardwire whose catalog connection is cut (so its directory is stale) writes to a
// bucket another instance's mover has moved: the source's fence refuses it (SW001), the stale
// instance refreshes once it can reach the catalog, and the write lands on the new owner.
#include "harness/sharded_fixture.h"
#include "harness/tcp_forwarder.h"
#include "it_test.h"

using namespace it;

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

}  // TEST_SUITE
