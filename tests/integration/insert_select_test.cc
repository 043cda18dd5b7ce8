// INSERT ... SELECT between sharded tables co-located on the key (docs/architecture.md §6.3), with a
// catalog and 3 real shards: `orders` and `archive` are both sharded by a bigint tenant_id. Keyed,
// it runs on the tenant's shard; keyless (or with keys on several shards) every shard inserts the
// rows of its own buckets, the shards commit together by two-phase commit, the tag counts every
// shard's rows and RETURNING brings them all, in either protocol; a failure on one shard leaves
// nothing anywhere and nothing prepared; a shard holding a copy of another shard's bucket (fenced
// there) contributes none of those rows; inside a transaction block it joins the transaction's
// legs (COMMIT keeps it, ROLLBACK or a failure undoes it); the forms that are not co-located are
// refused with 0A000.
#include "it_test.h"

#include <algorithm>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreateArchive =
    "CREATE TABLE archive (id bigint NOT NULL, tenant_id bigint NOT NULL, note text, "
    "PRIMARY KEY (tenant_id, id))";
const char* const kArchiveAll =
    "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id, note FROM orders";

ShardedOptions options(const std::string& cross_shard_transactions) {
  ShardedOptions o;
  o.cross_shard_transactions = cross_shard_transactions;
  o.proxy.users.push_back({"admin", "adminpw"});
  o.proxy.extra_yaml += "admin:\n  users: [admin]\n";
  o.tables_yaml +=
      "    - name: archive\n      key: tenant_id\n      type: bigint\n"
      "    - name: events\n      key: tenant\n      type: text\n";
  return o;
}

struct Deployment {
  ShardedFixture f;
  std::vector<int64_t> tenants;  // one per shard, in shard order
  PgConn c = f.client();

  // 4 orders per tenant, a tenant on every shard; `archive`, `events` and the unsharded `staging`.
  explicit Deployment(const std::string& cross_shard_transactions = "")
      : f(options(cross_shard_transactions)) {
    for (const char* ddl : {kCreateArchive, "CREATE TABLE events (tenant text NOT NULL, id bigint)",
                            "CREATE TABLE staging (tenant_id bigint, id bigint)"}) {
      PgResult r = c.exec(ddl);
      if (!r.ok()) throw std::runtime_error(std::string(ddl) + ": " + r.describe() + "\n" + f.log_tail());
    }
    for (int s = 0; s < kShards; ++s) {
      tenants.push_back(tenant_on(s, kShards));
      const std::string k = std::to_string(tenants.back());
      PgResult r = c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k + ", 'a'), (" + k +
                          ", 'b'), (" + k + ", 'c'), (" + k + ", 'd')");
      if (!r.ok()) throw std::runtime_error("seed orders: " + r.describe() + "\n" + f.log_tail());
    }
  }
  std::string on_shard(int shard, const std::string& sql) const {
    PgConn direct = f.setup.shard(shard);
    return direct.value(sql);
  }
  std::string archived_on(int shard) const { return on_shard(shard, "SELECT count(*) FROM archive"); }
  // archive rows on `shard` whose bucket the initial directory gives another shard.
  std::string misplaced_on(int shard) const {
    return on_shard(shard, "SELECT count(*) FROM archive WHERE shardwire.bucket_of(tenant_id, " +
                               std::to_string(kBuckets) + ") % " + std::to_string(kShards) + " <> " +
                               std::to_string(shard));
  }
  std::string prepared_on(int shard) const {
    return on_shard(shard,
                    "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' AND database = "
                    "current_database()");
  }
};

}  // namespace

TEST_SUITE("insert_select") {
  TEST_CASE("keyed: the tenant's shard only") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    const std::string k = std::to_string(d.tenants[1]);
    PgResult r = d.c.exec(std::string(kArchiveAll) + " WHERE tenant_id = " + k);
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 4");
    CHECK(d.archived_on(0) == "0");
    CHECK(d.archived_on(1) == "4");
    CHECK(d.archived_on(2) == "0");
    // Inside a transaction it is a plain write on that shard.
    REQUIRE_OK(d.c.exec("BEGIN"));
    PgResult in_transaction = d.c.exec(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 100, note FROM orders WHERE "
        "tenant_id = " +
        k);
    REQUIRE_OK(in_transaction);
    CHECK(in_transaction.command_tag() == "INSERT 0 4");
    REQUIRE_OK(d.c.exec("COMMIT"));
    CHECK(d.archived_on(1) == "8");
    // The extended protocol, the key a parameter: routed at Bind to the tenant's shard.
    PgResult extended = d.c.exec_params(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 200, note FROM orders WHERE "
        "tenant_id = $1",
        {k});
    REQUIRE_OK(extended);
    CHECK(extended.command_tag() == "INSERT 0 4");
    CHECK(d.archived_on(0) == "0");
    CHECK(d.archived_on(1) == "12");
    CHECK(d.archived_on(2) == "0");
  }

  TEST_CASE("keyless: every row on its owner once, the tag counts every shard, RETURNING brings all rows") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    // SHOW ROUTE: every shard, each reading its own rows of orders (the owned-rows splice).
    ConnectResult admin =
        connect(d.f.proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    REQUIRE_MESSAGE(admin.ok, admin.error);
    PgResult route = admin.conn.exec(std::string("SHOW ROUTE ") + kArchiveAll);
    REQUIRE_OK(route);
    CHECK(route.value(0, 0) == "scatter");
    CHECK(route.value(0, 7) == "scatter s0,s1,s2 insert-select");
    std::string described;
    for (int col = 0; col < route.cols(); ++col) described += route.value(0, col) + "\n";
    CHECK_MESSAGE(contains(described,
                           "each shard runs: INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id, "
                           "note FROM (SELECT * FROM orders sw_owned WHERE NOT EXISTS"),
                  described);
    PgResult r = d.c.exec(kArchiveAll);
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 12");
    for (int s = 0; s < kShards; ++s) {
      CHECK_MESSAGE(d.archived_on(s) == "4", "s" << s);
      CHECK_MESSAGE(d.misplaced_on(s) == "0", "s" << s);
      CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    }
    CHECK(d.c.value("SELECT count(*) FROM archive") == "12");
    // Per shard ON CONFLICT: every row is already there.
    PgResult again = d.c.exec(std::string(kArchiveAll) + " ON CONFLICT DO NOTHING");
    REQUIRE_OK(again);
    CHECK(again.command_tag() == "INSERT 0 0");
    // ON CONFLICT DO UPDATE, per shard, keeping the key.
    PgResult updated = d.c.exec(std::string(kArchiveAll) +
                                " ON CONFLICT (tenant_id, id) DO UPDATE SET note = excluded.note || '!'");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "INSERT 0 12");
    CHECK(d.c.value("SELECT count(*) FROM archive WHERE note LIKE '%!'") == "12");
    // RETURNING: the rows of every shard, in no particular order (as PostgreSQL's).
    PgResult returned = d.c.exec(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 1000, note FROM orders RETURNING "
        "tenant_id, note");
    REQUIRE_OK(returned);
    CHECK(returned.command_tag() == "INSERT 0 12");
    REQUIRE(returned.rows() == 12);
    std::vector<std::string> rows;
    for (int i = 0; i < returned.rows(); ++i)
      rows.push_back(returned.value(i, 0) + "|" + returned.value(i, 1));
    std::sort(rows.begin(), rows.end());
    std::vector<std::string> expected;
    for (int64_t tenant : d.tenants)
      for (const char* note : {"a", "b", "c", "d"}) expected.push_back(row_of(tenant, note));
    std::sort(expected.begin(), expected.end());
    CHECK(rows == expected);
    // The extended protocol: the batch rebuilt for every shard with the client's parameters.
    PgResult extended = d.c.exec_params(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 3000, note FROM orders WHERE note "
        "<> $1 "
        "RETURNING note",
        {std::string("a")});
    REQUIRE_OK(extended);
    CHECK(extended.command_tag() == "INSERT 0 9");
    CHECK(extended.rows() == 9);
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.archived_on(s) == "11", "s" << s);
    // Keys on two shards: those shards only.
    PgResult listed = d.c.exec(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 2000, note FROM orders WHERE "
        "tenant_id IN (" +
        std::to_string(d.tenants[0]) + ", " + std::to_string(d.tenants[2]) + ")");
    REQUIRE_OK(listed);
    CHECK(listed.command_tag() == "INSERT 0 8");
    CHECK(d.archived_on(0) == "15");
    CHECK(d.archived_on(1) == "11");
    CHECK(d.archived_on(2) == "15");
  }

  TEST_CASE("a failure on one shard leaves nothing on any shard and nothing prepared") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    // Shard 2 already holds one of the rows: its INSERT violates the primary key.
    const std::string k = std::to_string(d.tenants[2]);
    PgConn shard2 = d.f.setup.shard(2);
    REQUIRE_OK(
        shard2.exec("INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id, 'x' FROM orders WHERE "
                    "tenant_id = " +
                    k + " ORDER BY id LIMIT 1"));
    PgResult failed = d.c.exec(kArchiveAll);
    CHECK(failed.sqlstate() == "23505");
    CHECK(contains(failed.error(), "shard s2"));
    CHECK(contains(failed.error(), "rolled back on every shard"));
    CHECK(d.archived_on(0) == "0");
    CHECK(d.archived_on(1) == "0");
    CHECK(d.archived_on(2) == "1");
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    // The session goes on.
    CHECK(d.c.value("SELECT count(*) FROM orders") == "12");
  }

  TEST_CASE("a shard holding a copy of another shard's bucket contributes none of its rows") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    // Shard 1 gets a copy of shard 0's tenant rows, as a move's copy phase writes them (replica
    // role: the fence trigger does not fire); shard 1 fences that bucket.
    const std::string moved = std::to_string(d.tenants[0]);
    PgConn target = d.f.setup.shard(1);
    REQUIRE_OK(mark_fences_holding_rows(target));
    REQUIRE_OK(target.exec("SET session_replication_role = replica"));
    REQUIRE_OK(target.exec("INSERT INTO orders (id, tenant_id, note) VALUES (900001, " + moved +
                           ", 'copy'), (900002, " + moved + ", 'copy')"));
    CHECK(target.value("SELECT count(*) FROM shardwire.fenced_buckets WHERE bucket = shardwire.bucket_of(" +
                       moved + "::bigint, " + std::to_string(kBuckets) + ")") == "1");
    PgResult r = d.c.exec(kArchiveAll);
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 12");
    CHECK(d.on_shard(1, "SELECT count(*) FROM archive WHERE tenant_id = " + moved) == "0");
    CHECK(d.on_shard(0, "SELECT count(*) FROM archive WHERE tenant_id = " + moved) == "4");
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.misplaced_on(s) == "0", "s" << s);
  }

  TEST_CASE(
      "inside a transaction block it joins the transaction's legs: COMMIT keeps it, ROLLBACK undoes it") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    // The transaction first writes on s1 (its server is lent to the run), then every shard.
    const std::string k1 = std::to_string(d.tenants[1]);
    REQUIRE_OK(d.c.exec("BEGIN"));
    REQUIRE_OK(d.c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k1 + ", 'e')"));
    PgResult r = d.c.exec(kArchiveAll);
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 13");
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.archived_on(s) == "0", "s" << s);  // not yet committed
    CHECK(d.c.value("SELECT count(*) FROM archive WHERE tenant_id = " + k1) == "5");     // seen inside it
    REQUIRE_OK(d.c.exec("COMMIT"));
    CHECK(d.archived_on(0) == "4");
    CHECK(d.archived_on(1) == "5");
    CHECK(d.archived_on(2) == "4");
    for (int s = 0; s < kShards; ++s) {
      CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
      CHECK_MESSAGE(d.misplaced_on(s) == "0", "s" << s);
    }
    // The extended protocol on a server the transaction holds: the batch is rebuilt for every shard
    // with the client's parameters; ROLLBACK undoes it with the rest of the transaction.
    REQUIRE_OK(d.c.exec("BEGIN"));
    REQUIRE_OK(d.c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k1 + ", 'f')"));
    PgResult extended = d.c.exec_params(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 5000, note FROM orders WHERE note "
        "<> $1",
        {std::string("a")});
    REQUIRE_OK(extended);
    CHECK(extended.command_tag() == "INSERT 0 11");  // 14 orders, 3 with note 'a'
    // Seen inside it: k1's 5 committed rows and its 5 orders not noted 'a' (e and f among them).
    CHECK(d.c.value("SELECT count(*) FROM archive WHERE tenant_id = " + k1) == "10");
    d.c.exec("ROLLBACK");
    CHECK(d.c.value("SELECT count(*) FROM archive") == "13");
    CHECK(d.c.value("SELECT count(*) FROM orders") == "13");
    // ROLLBACK undoes it on every shard.
    REQUIRE_OK(d.c.exec("BEGIN"));
    PgResult again = d.c.exec(
        "INSERT INTO archive (tenant_id, id, note) SELECT tenant_id, id + 1000, note FROM orders RETURNING "
        "id");
    REQUIRE_OK(again);
    CHECK(again.rows() == 13);
    REQUIRE_OK(d.c.exec("ROLLBACK"));
    CHECK(d.c.value("SELECT count(*) FROM archive") == "13");
    // A failure on one shard fails the transaction: later statements get 25P02, nothing commits.
    REQUIRE_OK(d.c.exec("BEGIN"));
    PgResult failed = d.c.exec(kArchiveAll);  // every row exists already
    CHECK(failed.sqlstate() == "23505");
    CHECK(contains(failed.error(), "the transaction is aborted"));
    CHECK(d.c.exec("SELECT 1").sqlstate() == "25P02");
    PgResult ended = d.c.exec("COMMIT");
    CHECK(ended.command_tag() == "ROLLBACK");
    CHECK(d.c.value("SELECT count(*) FROM archive") == "13");
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
  }

  TEST_CASE("forms that are not co-located, and multi-shard runs it cannot make atomic, are refused") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.f.log_tail(40));
    struct Refusal {
      std::string sql;
      std::string says;
    };
    const std::vector<Refusal> refusals = {
        {"INSERT INTO archive (tenant_id, id) SELECT tenant_id + 1, id FROM orders", "from an expression"},
        {"INSERT INTO archive (tenant_id, id) SELECT id, tenant_id FROM orders",
         "which is not the key tenant_id"},
        {"INSERT INTO events (tenant, id) SELECT tenant_id, id FROM orders", "hashes to other buckets"},
        {"INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM staging", "unsharded table staging"},
        {"INSERT INTO archive (tenant_id, id) SELECT o.tenant_id, o.id FROM orders o JOIN archive a ON a.id "
         "= o.id",
         "not joined on the key"},
        {"INSERT INTO archive (tenant_id, id) SELECT tenant_id, id FROM orders LIMIT 3", "LIMIT/OFFSET"},
        {"INSERT INTO archive SELECT id, tenant_id, note FROM orders", "needs a column list naming its key"},
    };
    for (const Refusal& refusal : refusals) {
      PgResult r = d.c.exec(refusal.sql);
      CHECK_MESSAGE(r.sqlstate() == "0A000", refusal.sql);
      CHECK_MESSAGE(contains(r.error(), refusal.says), refusal.sql << ": " << r.error());
    }
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.archived_on(s) == "0", "s" << s);
  }

  TEST_CASE("under cross_shard_transactions: refuse it runs only on one shard") {
    PROXY_ONLY();
    Deployment d("refuse");
    INFO("proxy log:\n" << d.f.log_tail(40));
    PgResult refused = d.c.exec(kArchiveAll);
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "sharding.cross_shard_transactions is refuse"));
    for (int s = 0; s < kShards; ++s) CHECK_MESSAGE(d.archived_on(s) == "0", "s" << s);
    PgResult keyed =
        d.c.exec(std::string(kArchiveAll) + " WHERE tenant_id = " + std::to_string(d.tenants[2]));
    REQUIRE_OK(keyed);
    CHECK(keyed.command_tag() == "INSERT 0 4");
    CHECK(d.archived_on(2) == "4");
  }
}
