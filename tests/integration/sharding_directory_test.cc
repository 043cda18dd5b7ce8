// The bucket directory behind shardwire, with a catalog and 3 real shard
// databases:
//  * moving a bucket in the catalog (UPDATE shardwire.buckets -> version bump + NOTIFY) re-routes
//    new transactions for its keys (the time it takes is reported);
//  * fence errors: a write to a fenced bucket gets SW001 from the shard's trigger; shardwire
//    refreshes its directory and re-runs the first statement of a transaction on the new owner
//    (the client sees success), or answers 40001 for a later statement. The stale state is made
//    deterministic, no sleeps: the proxy's statement is held on the old owner by a lock (the
//    key's row lock for an UPDATE; shardwire.fenced_buckets locked for an INSERT, whose fence
//    trigger reads it) while the bucket is fenced there, unfenced on the new owner, moved in the
//    catalog, and the proxy has logged loading the new directory; releasing the lock lets the
//    in-flight statement meet the fence. A second proxy whose catalog is never updated shows the
//    stale-forever case (one retry on the same shard, then 40001);
//  * the directory lease: with the catalog's cluster stopped, routed statements get 57P03 once
//    directory_lease has passed, and work again after the catalog comes back; the readiness probe
//    (GET /ready) answers 503 meanwhile and 200 before and after, the liveness probe always 200.
#include "it_test.h"

#include <functional>

#include "harness/http_probe.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

std::string k(int64_t key) { return std::to_string(key); }

// Copies the key's rows from shard `from` to shard `to` (direct connections; the trigger is
// skipped on the target as the mover's applier does).
void copy_rows(const ShardedFixture& f, int64_t key, int from, int to) {
  PgConn src = f.setup.shard(from);
  PgResult rows = src.exec("SELECT note, qty FROM orders WHERE tenant_id = " + k(key) + " ORDER BY id");
  REQUIRE_OK(rows);
  PgConn dst = f.setup.shard(to);
  REQUIRE_OK(mark_fences_holding_rows(dst));
  REQUIRE_OK(dst.exec("SET session_replication_role = replica"));
  for (const auto& row : rows.data())
    REQUIRE_OK(dst.exec_params("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)",
                               {k(key), row[0], row[1]}));
}

// A statement through the proxy, held on the old owner by a row lock while its bucket moves.
struct HeldWrite {
  ShardedFixture& f;
  int64_t key;
  int bucket;
  int from, to;
  PgConn locker;  // direct connection to `from` holding the key's row lock

  HeldWrite(ShardedFixture& fixture, int64_t k_, int to_shard)
      : f(fixture),
        key(k_),
        bucket(static_cast<int>(bucket_of_key(k_))),
        from(shard_of_key(k_)),
        to(to_shard) {}

  void hold_row_lock() {
    locker = f.setup.shard(from);
    REQUIRE_OK(locker.exec("BEGIN"));
    PgResult r = locker.exec("SELECT id FROM orders WHERE tenant_id = " + k(key) + " FOR UPDATE");
    REQUIRE_OK(r);
    REQUIRE(r.rows() >= 1);
  }

  // For an INSERT (no row to lock): the trigger's read of shardwire.fenced_buckets waits.
  void hold_fence_table_lock() {
    locker = f.setup.shard(from);
    REQUIRE_OK(locker.exec("BEGIN"));
    REQUIRE_OK(locker.exec("LOCK TABLE shardwire.fenced_buckets IN ACCESS EXCLUSIVE MODE"));
  }

  // True once a backend on `from` waits for a lock while running a statement starting with `prefix`.
  bool wait_blocked(const std::string& prefix) const {
    PgConn monitor = f.setup.shard(from);
    return wait_until(
        [&] {
          return monitor.value(
                     "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND wait_event_type = 'Lock' AND query LIKE '" +
                     prefix + "%'") != "0";
        },
        10s, 5ms);
  }

  // Copies the key's rows to `to` and unfences the bucket there; fences it on `from` in the
  // locker's transaction; moves it in the catalog and waits until the proxy loaded that
  // directory; then commits the locker: the held statement goes on and meets the fence.
  long long move_and_release() {
    PgConn target = f.setup.shard(to);
    REQUIRE_OK(unfence_bucket(target, bucket));
    copy_rows(f, key, from, to);
    REQUIRE_OK(fence_bucket(locker, bucket));
    PgConn catalog = f.setup.catalog();
    long long version = move_bucket_in_catalog(catalog, bucket, ShardedSetup::shard_name(to));
    REQUIRE(version > 1);
    REQUIRE_MESSAGE(wait_for_directory_version(*f.proxy, version, 5s),
                    "the proxy did not load directory version " << version << "\n"
                                                                << f.log_tail());
    REQUIRE_OK(locker.exec("COMMIT"));
    return version;
  }
};

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_SUITE("sharding_directory") {
  TEST_CASE("moving a bucket in the catalog re-routes new transactions for its keys") {
    PROXY_ONLY();
    ShardedFixture f;
    const int from = 1, to = 2;
    const int64_t key = key_where([](uint32_t b) { return b % kShards == 1; }, 500);
    const int bucket = static_cast<int>(bucket_of_key(key));
    const int64_t neighbour =
        key_where([&](uint32_t b) { return b % kShards == 1 && static_cast<int>(b) != bucket; }, 500);
    PgConn c = f.client();
    for (int i = 0; i < 5; ++i)
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'before-" +
                        std::to_string(i) + "')"));
    const std::string who = "SELECT current_database() FROM orders WHERE tenant_id = " + k(key) + " LIMIT 1";
    REQUIRE_OK(c.prepare("who", "SELECT current_database() FROM orders WHERE tenant_id = $1 LIMIT 1"));
    REQUIRE_OK(c.prepare("ins", "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)"));
    CHECK(c.value(who) == f.setup.shard_db(from));

    // Move the bucket's rows by hand, as the mover would: unfence on the new owner and copy the rows
    // there, fence on the old owner (its copy stays readable until the switch).
    {
      PgConn target = f.setup.shard(to);
      REQUIRE_OK(unfence_bucket(target, bucket));
      copy_rows(f, key, from, to);
      PgConn source = f.setup.shard(from);
      REQUIRE_OK(fence_bucket(source, bucket, 2));
    }
    CHECK(c.value(who) == f.setup.shard_db(from));  // the directory has not changed yet

    PgConn catalog = f.setup.catalog();
    auto start = std::chrono::steady_clock::now();
    long long version = move_bucket_in_catalog(catalog, bucket, "s2");
    REQUIRE(version > 1);
    long long switched_ms = -1;
    int polls = 0;
    while (ms_since(start) < 20000) {  // guards against a hang only; the time is a reported figure
      PgResult r = c.exec(who);        // a new transaction each time
      ++polls;
      REQUIRE_OK(r);
      if (r.rows() == 1 && r.value() == f.setup.shard_db(to)) {
        switched_ms = ms_since(start);
        break;
      }
      sleep_ms(5);
    }
    INFO("proxy log:\n" << f.log_tail());
    MESSAGE("bucket " << bucket << " moved s1 -> s2 at directory version " << version
                      << "; reads switched after " << switched_ms << " ms (" << polls << " polls)");
    REQUIRE_MESSAGE(switched_ms >= 0, "reads of bucket " << bucket << " still went to "
                                                         << f.setup.shard_db(from)
                                                         << " 20 s after directory version " << version);

    // The old owner's copy goes (as the mover's cleanup would do it).
    {
      PgConn source = f.setup.shard(from);
      REQUIRE_OK(source.exec("SET session_replication_role = replica"));
      REQUIRE_OK(source.exec("DELETE FROM orders WHERE tenant_id = " + k(key)));
    }
    // Writes in every protocol, and a transaction, go to the new owner without meeting the fence;
    // the statements prepared before the move follow the bucket too.
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'after-simple')"));
    REQUIRE_OK(
        c.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, $2)", {k(key), "after-extended"}));
    REQUIRE_OK(c.exec_prepared("ins", {k(key), "after-prepared"}));
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'after-tx')"));
    PgResult upd = c.exec("UPDATE orders SET qty = qty + 1 WHERE tenant_id = " + k(key));
    REQUIRE_OK(upd);
    CHECK(upd.command_tag() == "UPDATE 9");
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    PgResult prepared_read = c.exec_prepared("who", {k(key)});
    REQUIRE_OK(prepared_read);
    CHECK(prepared_read.value() == f.setup.shard_db(to));
    // Another bucket of the old owner stays there.
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(neighbour) + ", 'neighbour')"));

    std::vector<std::string> expected_to;
    for (int i = 0; i < 5; ++i) expected_to.push_back(row_of(key, "before-" + std::to_string(i)));
    for (const char* note : {"after-simple", "after-extended", "after-prepared", "after-tx"})
      expected_to.push_back(row_of(key, note));
    std::sort(expected_to.begin(), expected_to.end());
    CHECK(f.rows_on(to) == expected_to);
    CHECK(f.rows_on(from) == std::vector<std::string>{row_of(neighbour, "neighbour")});
    CHECK(f.rows_on(0).empty());
    PgConn target = f.setup.shard(to);
    CHECK(target.value("SELECT count(*) FROM orders WHERE qty <> 1") == "0");
    CHECK_MESSAGE(!contains(f.proxy->log(), "refused a write"),
                  "a write met the fence: it was routed on a stale directory");
  }

  TEST_CASE("a shard's fence trigger refuses writes to buckets it does not own with SW001") {
    PROXY_ONLY();
    ShardedFixture f;
    const int64_t key = key_where([](uint32_t b) { return b % kShards == 0; }, 10);
    const int bucket = static_cast<int>(bucket_of_key(key));
    PgConn wrong = f.setup.shard(1);
    PgResult r = wrong.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'direct')");
    INFO(r.describe());
    CHECK(r.sqlstate() == "SW001");
    CHECK(contains(r.error(),
                   "bucket " + std::to_string(bucket) + " is not owned by this shard; directory version"));
    // The owner takes it; replica mode (the mover's applier) skips the fence.
    PgConn owner = f.setup.shard(0);
    CHECK_OK(owner.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'direct')"));
    REQUIRE_OK(wrong.exec("SET session_replication_role = replica"));
    CHECK_OK(wrong.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'replica')"));
  }

}  // TEST_SUITE

namespace {

enum class First { SimpleUpdate, SimpleInsert, SimpleReturning, ExtendedUpdate, PreparedInsert, AfterBegin };

// A fence error on the first statement of a transaction: shardwire re-runs it on the new owner
// and the client sees success (docs/architecture.md §7.5).
void first_statement_retry(First variant) {
  ShardedFixture f;
  const int64_t key = key_where([](uint32_t b) { return b % kShards == 0; }, 1000);
  PgConn c = f.client();
  REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'orig')"));
  HeldWrite w(f, key, /*to=*/1);
  REQUIRE(w.from == 0);
  const std::string key_text = k(key);
  std::vector<std::string> expected_to;

  // Holds the statement sent by `send` on s0 (row lock, or the fence table's lock for an INSERT),
  // moves the bucket to s1, releases it; returns the client's result.
  auto held = [&](bool insert, const std::function<bool()>& send) {
    if (insert)
      w.hold_fence_table_lock();
    else
      w.hold_row_lock();
    REQUIRE(send());
    const char* prefix = insert ? "INSERT INTO orders" : "UPDATE orders";
    REQUIRE_MESSAGE(w.wait_blocked(prefix), "the statement never reached shard s0\n" << f.log_tail());
    w.move_and_release();
    return c.wait_result(20s);
  };

  if (variant == First::SimpleUpdate) {
    PgResult r = held(
        false, [&] { return c.send("UPDATE orders SET note = 'retried' WHERE tenant_id = " + key_text); });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "UPDATE 1");
    expected_to = {row_of(key, "retried")};
  }
  if (variant == First::SimpleInsert) {
    PgResult r = held(true, [&] {
      return c.send("INSERT INTO orders (tenant_id, note) VALUES (" + key_text + ", 'inserted')");
    });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 1");
    expected_to = {row_of(key, "inserted"), row_of(key, "orig")};
  }
  if (variant == First::SimpleReturning) {
    PgResult r = held(false, [&] {
      return c.send("UPDATE orders SET note = 'returning' WHERE tenant_id = " + key_text +
                    " RETURNING current_database()");
    });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    REQUIRE(r.rows() == 1);
    CHECK(r.value() == f.setup.shard_db(1));
    expected_to = {row_of(key, "returning")};
  }
  if (variant == First::ExtendedUpdate) {
    PgResult r = held(false, [&] {
      const char* values[2] = {"retried-ext", key_text.c_str()};
      return PQsendQueryParams(c.get(), "UPDATE orders SET note = $1 WHERE tenant_id = $2", 2, nullptr,
                               values, nullptr, nullptr, 0) == 1;
    });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "UPDATE 1");
    expected_to = {row_of(key, "retried-ext")};
  }
  if (variant == First::PreparedInsert) {
    REQUIRE_OK(c.prepare("ins", "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)"));
    PgResult r = held(true, [&] {
      const char* values[2] = {key_text.c_str(), "inserted-prep"};
      return PQsendQueryPrepared(c.get(), "ins", 2, values, nullptr, nullptr, 0) == 1;
    });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 1");
    expected_to = {row_of(key, "inserted-prep"), row_of(key, "orig")};
  }
  if (variant == First::AfterBegin) {
    REQUIRE_OK(c.exec("BEGIN"));
    PgResult r = held(
        false, [&] { return c.send("UPDATE orders SET note = 'retried-tx' WHERE tenant_id = " + key_text); });
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "UPDATE 1");
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INTRANS);
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key_text + ", 'in-tx')"));
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "COMMIT");
    expected_to = {row_of(key, "in-tx"), row_of(key, "retried-tx")};
  }
  INFO("proxy log:\n" << f.log_tail());
  // The new owner has the statement's effect; the old owner's row is as it was (its attempt
  // failed on the fence and was rolled back).
  std::sort(expected_to.begin(), expected_to.end());
  CHECK(f.rows_on(1, "tenant_id = " + key_text) == expected_to);
  CHECK(f.rows_on(0, "tenant_id = " + key_text) == std::vector<std::string>{row_of(key, "orig")});
  CHECK(count_of(f.proxy->log(), "retrying on the new owner") == 1);
  // The connection goes on, on the new directory.
  PgResult after = c.exec("SELECT current_database() FROM orders WHERE tenant_id = " + key_text + " LIMIT 1");
  REQUIRE_OK(after);
  CHECK(after.value() == f.setup.shard_db(1));
}

}  // namespace

TEST_SUITE("sharding_directory") {
  TEST_CASE(
      "fence error on the first statement, autocommit UPDATE (simple protocol): re-run on the new owner") {
    PROXY_ONLY();
    first_statement_retry(First::SimpleUpdate);
  }

  TEST_CASE(
      "fence error on the first statement, autocommit INSERT (simple protocol): re-run on the new owner") {
    PROXY_ONLY();
    first_statement_retry(First::SimpleInsert);
  }

  TEST_CASE(
      "fence error on the first statement, UPDATE ... RETURNING (simple protocol): rows from the new owner") {
    PROXY_ONLY();
    first_statement_retry(First::SimpleReturning);
  }

  TEST_CASE(
      "fence error on the first statement after BEGIN: re-run on the new owner, the transaction carries on") {
    PROXY_ONLY();
    first_statement_retry(First::AfterBegin);
  }

  TEST_CASE(
      "fence error on the first statement, autocommit UPDATE (extended protocol): re-run on the new owner") {
    PROXY_ONLY();
    first_statement_retry(First::ExtendedUpdate);
  }

  TEST_CASE(
      "fence error on the first statement, autocommit INSERT (prepared statement): re-run on the new owner") {
    PROXY_ONLY();
    first_statement_retry(First::PreparedInsert);
  }

  TEST_CASE("fence error on a later statement of a transaction: 40001 and the transaction is rolled back") {
    PROXY_ONLY();
    ShardedFixture f;
    const int64_t key = key_where([](uint32_t b) { return b % kShards == 0; }, 1000);
    const int64_t other =
        key_where([&](uint32_t b) { return b % kShards == 0 && b != bucket_of_key(key); }, 1000);
    const std::string key_text = k(key);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + key_text + ", 'orig')"));
    HeldWrite w(f, key, /*to=*/2);

    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(other) + ", 'in-tx')"));  // pins s0
    w.hold_row_lock();
    SUBCASE("simple protocol") {
      REQUIRE(c.send("UPDATE orders SET note = 'too late' WHERE tenant_id = " + key_text));
    }
    SUBCASE("extended protocol") {
      const char* values[1] = {key_text.c_str()};
      REQUIRE(PQsendQueryParams(c.get(), "UPDATE orders SET note = 'too late' WHERE tenant_id = $1", 1,
                                nullptr, values, nullptr, nullptr, 0) == 1);
    }
    REQUIRE_MESSAGE(w.wait_blocked("UPDATE orders"), "the UPDATE never reached shard s0\n" << f.log_tail());
    w.move_and_release();
    PgResult r = c.wait_result(20s);
    INFO(r.describe() << "\nproxy log:\n" << f.log_tail());
    CHECK(r.sqlstate() == "40001");
    CHECK(contains(r.error(), "retry"));
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_INERROR);
    PgResult commit = c.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "ROLLBACK");
    // Nothing of the transaction stayed: s0 has only the original row, s2 only its copy.
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(key, "orig")});
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(key, "orig")});
    CHECK_FALSE(contains(f.proxy->log(), "retrying on the new owner"));
    // The next transaction for the key goes to the new owner.
    PgResult again = c.exec("UPDATE orders SET note = 'next tx' WHERE tenant_id = " + key_text);
    REQUIRE_OK(again);
    CHECK(again.command_tag() == "UPDATE 1");
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(key, "next tx")});
  }

  TEST_CASE("a proxy whose catalog never learns of a move: its writes to the moved bucket get 40001") {
    PROXY_ONLY();
    ShardedFixture f;
    // A second catalog with the same initial directory, never updated: proxy 2 stays stale.
    std::string stale_catalog = f.setup.create_extra_catalog();
    f.setup.init_or_throw(stale_catalog);
    std::unique_ptr<ProxyProcess> stale = f.setup.start_proxy(stale_catalog);

    const int64_t key = key_where([](uint32_t b) { return b % kShards == 0; }, 2000);
    const int bucket = static_cast<int>(bucket_of_key(key));
    const int64_t other =
        key_where([&](uint32_t b) { return b % kShards == 0 && static_cast<int>(b) != bucket; }, 2000);
    PgConn c = f.client();
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'orig')"));

    // Move the bucket s0 -> s1 for real (catalog 1, fences, rows).
    {
      PgConn target = f.setup.shard(1);
      REQUIRE_OK(unfence_bucket(target, bucket));
      copy_rows(f, key, 0, 1);
      PgConn source = f.setup.shard(0);
      REQUIRE_OK(fence_bucket(source, bucket, 2));
      PgConn catalog = f.setup.catalog();
      long long version = move_bucket_in_catalog(catalog, bucket, "s1");
      REQUIRE(wait_for_directory_version(*f.proxy, version, 5s));
    }
    REQUIRE_OK(c.exec("UPDATE orders SET note = 'via proxy 1' WHERE tenant_id = " + k(key)));

    PgConn s = connect_or_throw(stale->conninfo());
    // First statement: SW001 on s0, refresh (still the old directory), one retry on s0, SW001 again:
    // the client gets 40001.
    auto start = std::chrono::steady_clock::now();
    PgResult r = s.exec("UPDATE orders SET note = 'via stale proxy' WHERE tenant_id = " + k(key));
    long long took = ms_since(start);
    INFO(r.describe() << "\nstale proxy log:\n" << stale->log_tail());
    MESSAGE("stale proxy, first statement: " << (r.ok() ? "ok" : r.sqlstate() + " " + r.error()) << " after "
                                             << took << " ms");
    CHECK(r.sqlstate() == "40001");
    CHECK(PQtransactionStatus(s.get()) == PQTRANS_IDLE);
    PgResult ins =
        s.exec_params("INSERT INTO orders (tenant_id, note) VALUES ($1, $2)", {k(key), "via stale proxy"});
    CHECK(ins.sqlstate() == "40001");
    {
      // The same on the wire: the 40001 comes in its place, after the ParseComplete and
      // BindComplete held back for a retry (it used to overtake them).
      RawSocket raw = RawSocket::borrow(PQsocket(s.get()));
      std::string sql = "INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'raw')";
      std::string batch = it::wire::message('P', std::string("\0", 1) + sql + std::string("\0\0\0", 3));
      batch += it::wire::message('B', std::string("\0\0\0\0\0\0\0\0", 8));
      batch += it::wire::message('E', std::string("\0\0\0\0\0", 5));
      batch += it::wire::message('S', "");
      REQUIRE(raw.send_all(batch));
      std::string bytes;
      std::vector<it::wire::Message> answers;
      auto deadline = std::chrono::steady_clock::now() + 20s;
      while ((answers.empty() || answers.back().type != 'Z') && std::chrono::steady_clock::now() < deadline) {
        bytes += raw.read_some(1s);
        answers = it::wire::parse_messages(bytes);
      }
      std::string types;
      for (const auto& m : answers) types += m.type;
      REQUIRE(types == "12EZ");
      CHECK(it::wire::parse_error(answers[2].body).sqlstate() == "40001");
    }
    // A later statement of a transaction: 40001, and the transaction is rolled back.
    REQUIRE_OK(s.exec("BEGIN"));
    REQUIRE_OK(s.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(other) + ", 'stale tx')"));
    PgResult later = s.exec("DELETE FROM orders WHERE tenant_id = " + k(key));
    CHECK(later.sqlstate() == "40001");
    PgResult commit = s.exec("COMMIT");
    REQUIRE_OK(commit);
    CHECK(commit.command_tag() == "ROLLBACK");
    // Reads are not fenced: the stale proxy still reads the old owner's copy.
    CHECK(s.value("SELECT note FROM orders WHERE tenant_id = " + k(key)) == "orig");

    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(key, "orig")});
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(key, "via proxy 1")});
    CHECK(contains(stale->log(), "retrying on the new owner"));
  }

  TEST_CASE(
      "past directory_lease without the catalog, routed statements get 57P03; back to normal once it "
      "returns") {
    PROXY_ONLY();
    PgCluster catalog_cluster;  // the catalog alone, so that it can be stopped
    ShardedOptions o;
    o.catalog_cluster = &catalog_cluster;
    o.directory_lease = "2s";
    const int metrics_port = free_port();
    o.proxy.extra_yaml += "metrics:\n  listen: \"127.0.0.1:" + std::to_string(metrics_port) + "\"\n";
    ShardedFixture f(o);
    const int64_t key = key_where([](uint32_t b) { return b % kShards == 2; }, 3000);
    PgConn c = f.client();
    HttpReply ready = http_get(metrics_port, "/ready");
    CHECK_MESSAGE(ready.status == 200, ready.body);
    CHECK(ready.body == "ready");
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'before')"));
    std::vector<std::string> expected = {row_of(key, "before")};

    // PgCluster::stop is `pg_ctl stop -m immediate` on a cluster with synchronous_commit = off:
    // without a checkpoint the catalog's last commits (here: init's directory) can be missing after
    // the restart (observed: "invalid magic number 0000 in log segment" during redo).
    REQUIRE_OK(catalog_cluster.admin().exec("CHECKPOINT"));
    catalog_cluster.stop();
    auto stopped = std::chrono::steady_clock::now();
    long long first_refusal_ms = -1, last_success_ms = -1;
    int n = 0;
    while (ms_since(stopped) < 6000) {
      std::string note = "during-" + std::to_string(n++);
      PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", '" + note + "')");
      if (r.ok()) {
        expected.push_back(row_of(key, note));
        last_success_ms = ms_since(stopped);
      } else {
        INFO(r.describe());
        CHECK(r.sqlstate() == "57P03");
        if (first_refusal_ms < 0) first_refusal_ms = ms_since(stopped);
      }
      CHECK(PQstatus(c.get()) == CONNECTION_OK);
      sleep_ms(50);
    }
    INFO("proxy log:\n" << f.log_tail());
    MESSAGE("catalog stopped; last routed write after " << last_success_ms << " ms, first 57P03 after "
                                                        << first_refusal_ms << " ms (lease 2 s)");
    REQUIRE(first_refusal_ms >= 0);
    CHECK(first_refusal_ms < 3500);             // lease 2 s + one heartbeat period (0.5 s) + slack
    CHECK(last_success_ms < first_refusal_ms);  // once refused, never routed again while the catalog is down
    // Every kind of routed statement gets the retryable error, with a clear message.
    {
      PgResult r = c.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(key));
      CHECK(r.sqlstate() == "57P03");
      CHECK(contains(r.error(), "directory"));
      r = c.exec_params("UPDATE orders SET qty = 1 WHERE tenant_id = $1", {k(key)});
      CHECK(r.sqlstate() == "57P03");
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    // Not ready while the lease is out (an orchestrator sends clients elsewhere), yet alive.
    ready = http_get(metrics_port, "/ready");
    CHECK(ready.status == 503);
    CHECK_MESSAGE(contains(ready.body, "not confirmed in the catalog within sharding.directory_lease"),
                  ready.body);
    CHECK(http_get(metrics_port, "/live").status == 200);
    CHECK(http_get(metrics_port, "/healthz").status == 200);

    catalog_cluster.start();
    auto restarted = std::chrono::steady_clock::now();
    {
      PgConn cat = f.setup.catalog();
      CHECK(cat.value("SELECT version FROM shardwire.directory_version") == "1");
      CHECK(cat.value("SELECT count(*) FROM shardwire.buckets") == std::to_string(kBuckets));
    }
    bool back = wait_until(
        [&] {
          PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'after')");
          if (r.ok())
            expected.push_back(row_of(key, "after"));
          else
            CHECK_MESSAGE(r.sqlstate() == "57P03", r.describe());
          return r.ok();
        },
        20s, 100ms);
    MESSAGE("catalog restarted; routed writes work again after " << ms_since(restarted) << " ms");
    REQUIRE(back);
    CHECK(wait_until([&] { return http_get(metrics_port, "/ready").status == 200; }, 5s, 100ms));
    std::sort(expected.begin(), expected.end());
    CHECK(f.rows_on(2) == expected);
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1).empty());
  }

}  // TEST_SUITE
