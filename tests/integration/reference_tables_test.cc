// Reference tables with a catalog and real shards: `plans` and `public.countries` are copied to
// every shard. Joins with the sharded `orders` run where the tenant's rows are, for tenants on
// every shard; keyless joins scatter and merge; DDL reaches every shard; INSERT, UPDATE, DELETE
// and TRUNCATE through shardwire change every copy (RETURNING rows come once); a write that fails
// on one shard changes none and leaves nothing prepared; in session pooling it runs with the
// session's servers (inside BEGIN: every_shard_write_test.cc) and in the extended protocol with
// the client's parameters; with other statements in its Query inside BEGIN and under
// cross_shard_transactions: refuse a write is refused; VERIFY
// REFERENCE finds a copy changed directly on one shard; a shard added to the config gets the
// copies from `shardwire init` before MOVE BUCKETS may put buckets on it, and MOVE BUCKETS is
// refused while its copy differs.
#include "it_test.h"

#include "harness/mover_helpers.h"
#include "harness/sharded_fixture.h"

using namespace it;
using namespace std::chrono_literals;

namespace {

constexpr int kConfigured = 3;  // shards in the config at first
constexpr int kAll = 4;         // s3 exists, empty, until the config names it

const char* const kCreateRefOrders =
    "CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, plan_id int NOT NULL, "
    "PRIMARY KEY (tenant_id, id))";
const char* const kCreatePlans = "CREATE TABLE plans (id int PRIMARY KEY, name text NOT NULL)";
const char* const kCreateCountries = "CREATE TABLE countries (code text PRIMARY KEY, name text)";
const char* const kSeedPlans = "INSERT INTO plans VALUES (1, 'free'), (2, 'pro'), (3, 'team')";
const char* const kSeedCountries = "INSERT INTO countries VALUES ('FR', 'France'), ('JP', 'Japan')";

struct Deployment {
  ShardedSetup setup;
  std::unique_ptr<ProxyProcess> proxy;

  static ShardedOptions options(const std::string& cross_shard_transactions, const std::string& pool_mode) {
    ShardedOptions o = mover_options("1s");
    o.shards = kAll;
    o.reference_tables = "[plans, public.countries]";
    o.cross_shard_transactions = cross_shard_transactions;
    if (!pool_mode.empty()) o.proxy.pool_mode = pool_mode;
    return o;
  }
  explicit Deployment(const std::string& cross_shard_transactions = "", const std::string& pool_mode = "")
      : setup(shared_cluster(), options(cross_shard_transactions, pool_mode)) {
    setup.init_or_throw("", kConfigured);
    proxy = std::make_unique<ProxyProcess>(setup.cluster().port(), setup.proxy_options("", kConfigured));
    PgConn c = client();
    for (const char* ddl : {kCreateRefOrders, kCreatePlans, kCreateCountries}) {
      PgResult r = c.exec(ddl);
      if (!r.ok())
        throw std::runtime_error(std::string(ddl) + ": " + r.describe() + "\n" + proxy->log_tail());
    }
    // The copies' rows, written on each shard directly.
    for (int s = 0; s < kConfigured; ++s) {
      PgConn shard = setup.shard(s);
      for (const char* seed : {kSeedPlans, kSeedCountries}) {
        PgResult r = shard.exec(seed);
        if (!r.ok())
          throw std::runtime_error(std::string(seed) + " on s" + std::to_string(s) + ": " + r.describe());
      }
    }
  }
  PgConn client() const {
    ConnectResult r = connect(proxy->conninfo("app", "secret", "sslmode=disable"));
    if (!r.ok) throw std::runtime_error("connect through shardwire: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
  PgConn console() const {
    ConnectResult r = connect(proxy->conninfo("admin", "adminpw", "sslmode=disable dbname=shardwire"));
    if (!r.ok) throw std::runtime_error("admin connect: " + r.error + "\n" + proxy->log_tail());
    return std::move(r.conn);
  }
  std::string plans_on(int shard) const {
    PgConn c = setup.shard(shard);
    return c.value("SELECT coalesce(string_agg(id || '=' || name, ',' ORDER BY id), '') FROM plans");
  }
  // Two-phase legs of shardwire still prepared in shard `shard`'s database.
  std::string prepared_on(int shard) const {
    PgConn c = setup.shard(shard);
    return c.value(
        "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' AND database = "
        "current_database()");
  }
};

// A tenant whose rows the initial directory puts on `shard` (of kConfigured).
int64_t tenant_on(int shard, int64_t from = 1) {
  return key_where([shard](uint32_t bucket) { return static_cast<int>(bucket % kConfigured) == shard; },
                   from);
}

// VERIFY REFERENCE <table>: "shard:rows:matches" per row.
std::vector<std::string> verified(PgConn& console, const std::string& table) {
  PgResult r = console.exec("VERIFY REFERENCE " + table);
  REQUIRE_MESSAGE(r.ok(), r.describe());
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.value(i, 0) + ":" + r.value(i, 1) + ":" + r.value(i, 3));
  return out;
}

}  // namespace

TEST_SUITE("reference_tables") {
  TEST_CASE("joins with a sharded table return the right rows for tenants on every shard") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    std::vector<int64_t> tenants;
    for (int s = 0; s < kConfigured; ++s) {
      tenants.push_back(tenant_on(s));
      const std::string k = std::to_string(tenants.back());
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, plan_id) VALUES (" + k + ", " +
                        std::to_string(s + 1) + "), (" + k + ", 1)"));
      PgConn shard = d.setup.shard(s);
      CHECK(shard.value("SELECT count(*) FROM orders WHERE tenant_id = " + k) == "2");
    }
    const char* const names[] = {"free", "pro", "team"};
    for (int s = 0; s < kConfigured; ++s) {
      INFO("tenant on s" << s);
      PgResult joined = c.exec(
          "SELECT string_agg(p.name, ',' ORDER BY p.name) FROM orders o JOIN plans p ON p.id = o.plan_id "
          "WHERE o.tenant_id = " +
          std::to_string(tenants[static_cast<size_t>(s)]));
      REQUIRE_OK(joined);
      CHECK(joined.value(0, 0) == (s == 0 ? std::string("free,free") : std::string("free,") + names[s]));
      // A reference table in a subquery, and the second reference table.
      PgResult sub = c.exec("SELECT count(*) FROM orders o WHERE o.tenant_id = " +
                            std::to_string(tenants[static_cast<size_t>(s)]) +
                            " AND o.plan_id IN (SELECT id FROM plans WHERE name <> 'free') AND EXISTS "
                            "(SELECT 1 FROM countries)");
      REQUIRE_OK(sub);
      CHECK(sub.value(0, 0) == (s == 0 ? "0" : "1"));
    }
    // Keyless: every shard joins its own copy; concatenated and merged.
    PgResult all = c.exec("SELECT o.tenant_id, p.name FROM orders o JOIN plans p ON p.id = o.plan_id");
    REQUIRE_OK(all);
    CHECK(all.rows() == 6);
    PgResult grouped = c.exec(
        "SELECT p.name, count(*) FROM orders o JOIN plans p ON p.id = o.plan_id GROUP BY p.name ORDER BY 1");
    REQUIRE_OK(grouped);
    REQUIRE(grouped.rows() == 3);
    CHECK(grouped.value(0, 0) + "=" + grouped.value(0, 1) == "free=4");
    CHECK(grouped.value(1, 0) + "=" + grouped.value(1, 1) == "pro=1");
    CHECK(grouped.value(2, 0) + "=" + grouped.value(2, 1) == "team=1");
    // Reference tables alone, outside and inside a transaction that is on s2.
    CHECK(c.value("SELECT string_agg(name, ',' ORDER BY id) FROM plans") == "free,pro,team");
    CHECK(c.value("SELECT current_database() FROM plans LIMIT 1") == d.setup.shard_db(0));  // the default
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(
        c.exec("INSERT INTO orders (tenant_id, plan_id) VALUES (" + std::to_string(tenants[2]) + ", 3)"));
    PgResult in_transaction = c.exec("SELECT count(*) FROM plans p JOIN countries c ON true");
    CHECK_OK(in_transaction);
    if (in_transaction.ok()) CHECK(in_transaction.value(0, 0) == "6");
    // It ran on the transaction's shard: each shard is a database of its own name.
    CHECK(c.value("SELECT current_database() FROM plans LIMIT 1") == d.setup.shard_db(2));
    REQUIRE_OK(c.exec("COMMIT"));
    PgConn s2 = d.setup.shard(2);
    CHECK(s2.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(tenants[2])) == "3");
    // Schema-qualified reference to a table configured as public.countries.
    CHECK(c.value("SELECT count(*) FROM public.countries") == "2");
  }

  TEST_CASE("DDL reaches every shard; a write reading a sharded table is refused") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    REQUIRE_OK(c.exec("ALTER TABLE plans ADD COLUMN price int NOT NULL DEFAULT 0"));
    REQUIRE_OK(c.exec("CREATE INDEX plans_name_idx ON plans (name)"));
    for (int s = 0; s < kConfigured; ++s) {
      PgConn shard = d.setup.shard(s);
      CHECK_MESSAGE(shard.value("SELECT count(*) FROM information_schema.columns WHERE table_name = 'plans' "
                                "AND column_name = 'price'") == "1",
                    "s" << s);
      CHECK_MESSAGE(shard.value("SELECT to_regclass('plans_name_idx') IS NOT NULL") == "t", "s" << s);
    }
    for (int s = 0; s < kConfigured; ++s) {
      CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team", "s" << s);
    }
    // Reading a sharded table to write a reference table would write different rows per shard.
    PgResult mixed = c.exec("INSERT INTO plans SELECT DISTINCT plan_id + 10, 'x' FROM orders");
    CHECK(mixed.sqlstate() == "0A000");
    CHECK(contains(mixed.error(), "reads sharded table orders"));
  }

  TEST_CASE("INSERT, UPDATE, DELETE and TRUNCATE change every copy; RETURNING rows come once") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    PgResult inserted = c.exec("INSERT INTO plans VALUES (4, 'enterprise'), (5, 'edu')");
    REQUIRE_OK(inserted);
    CHECK(inserted.command_tag() == "INSERT 0 2");
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team,4=enterprise,5=edu", "s" << s);
    PgResult updated = c.exec("UPDATE plans SET name = name || '+' WHERE id >= 4 RETURNING id, name");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "UPDATE 2");
    REQUIRE(updated.rows() == 2);  // once, not once per shard
    CHECK(updated.value(0, 1).back() == '+');
    CHECK(updated.value(1, 1).back() == '+');
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team,4=enterprise+,5=edu+", "s" << s);
    PgResult deleted = c.exec("DELETE FROM plans WHERE id = 5 RETURNING name");
    REQUIRE_OK(deleted);
    REQUIRE(deleted.rows() == 1);
    CHECK(deleted.value(0, 0) == "edu+");
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team,4=enterprise+", "s" << s);
    REQUIRE_OK(c.exec("TRUNCATE countries"));
    for (int s = 0; s < kConfigured; ++s) {
      CHECK_MESSAGE(d.setup.shard(s).value("SELECT count(*) FROM countries") == "0", "s" << s);
      CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    }
    // The copies are equal again: VERIFY REFERENCE agrees.
    PgConn console = d.console();
    CHECK(verified(console, "plans") == std::vector<std::string>{"s0:4:t", "s1:4:t", "s2:4:t"});
  }

  TEST_CASE(
      "a write that fails on one shard changes no copy; with other statements or extended it is refused") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    // Only s1's copy has id 6: inserting it through shardwire violates s1's primary key.
    REQUIRE_OK(d.setup.shard(1).exec("INSERT INTO plans VALUES (6, 'only-on-s1')"));
    PgResult failed = c.exec("INSERT INTO plans VALUES (6, 'six'), (7, 'seven')");
    CHECK(failed.sqlstate() == "23505");
    CHECK(contains(failed.error(), "shard s1"));
    CHECK(contains(failed.error(), "rolled back on every shard"));
    for (int s = 0; s < kConfigured; ++s) {
      CHECK_MESSAGE(d.plans_on(s) == (s == 1 ? "1=free,2=pro,3=team,6=only-on-s1" : "1=free,2=pro,3=team"),
                    "s" << s);
      CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    }
    // The copies now differ: a write that does different things on the shards is rolled back.
    PgResult differs = c.exec("DELETE FROM plans WHERE id >= 6");
    CHECK(differs.sqlstate() == "55000");
    CHECK(contains(differs.error(), "VERIFY REFERENCE plans"));
    CHECK(d.plans_on(1) == "1=free,2=pro,3=team,6=only-on-s1");
    for (int s = 0; s < kConfigured; ++s) CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    // Inside a transaction block with other statements in its Query: refused, nothing written.
    REQUIRE_OK(c.exec("BEGIN"));
    REQUIRE_OK(c.exec("SELECT 1"));
    PgResult in_transaction = c.exec("SELECT 1; INSERT INTO plans VALUES (8, 'eight')");
    CHECK(in_transaction.sqlstate() == "0A000");
    CHECK_MESSAGE(contains(in_transaction.error(), "query of its own"), in_transaction.error());
    c.exec("ROLLBACK");
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s).find("8=") == std::string::npos, "s" << s);
    // The extended protocol (Parse, Bind, Describe, Execute, Sync): on every shard with the
    // client's parameters, RETURNING once; the row count of its tag.
    PgResult extended = c.exec_params("INSERT INTO plans VALUES ($1, $2) RETURNING name",
                                      {std::string("9"), std::string("nine")});
    REQUIRE_MESSAGE(extended.ok(), extended.describe());
    CHECK(extended.rows() == 1);
    CHECK(extended.value(0, 0) == "nine");
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s).find("9=nine") != std::string::npos, "s" << s);
    PgResult removed = c.exec_params("DELETE FROM plans WHERE id = $1", {std::string("9")});
    REQUIRE_MESSAGE(removed.ok(), removed.describe());
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s).find("9=") == std::string::npos, "s" << s);
    for (int s = 0; s < kConfigured; ++s) CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
    REQUIRE_OK(c.exec("UPDATE plans SET name = 'free!' WHERE id = 1"));
    for (int s = 0; s < kConfigured; ++s) CHECK_MESSAGE(d.plans_on(s).rfind("1=free!,", 0) == 0, "s" << s);
  }

  TEST_CASE("under cross_shard_transactions: refuse a write of a reference table is refused") {
    PROXY_ONLY();
    Deployment d("refuse");
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    PgResult refused = c.exec("INSERT INTO plans VALUES (4, 'enterprise')");
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "write of reference table plans"));
    CHECK(contains(refused.error(), "cross_shard_transactions is refuse"));
    for (int s = 0; s < kConfigured; ++s) CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team", "s" << s);
  }

  TEST_CASE("in session pooling a write of a reference table runs with the session's servers") {
    PROXY_ONLY();
    Deployment d("", "session");
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn c = d.client();
    for (int attempt = 0; attempt < 2; ++attempt) {  // before and after the session holds a server
      INFO("attempt " << attempt);
      const std::string id = std::to_string(4 + attempt);
      REQUIRE_OK(c.exec("INSERT INTO plans VALUES (" + id + ", 'p" + id + "')"));
      CHECK(c.value("SELECT count(*) FROM plans") == std::to_string(4 + attempt));
    }
    for (int s = 0; s < kConfigured; ++s)
      CHECK_MESSAGE(d.plans_on(s) == "1=free,2=pro,3=team,4=p4,5=p5", "s" << s);
    for (int s = 0; s < kConfigured; ++s) CHECK_MESSAGE(d.prepared_on(s) == "0", "s" << s);
  }

  TEST_CASE("VERIFY REFERENCE finds a copy changed directly on one shard") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(40));
    PgConn console = d.console();
    CHECK(verified(console, "plans") == std::vector<std::string>{"s0:3:t", "s1:3:t", "s2:3:t"});
    PgResult same = console.exec("VERIFY REFERENCE plans");
    REQUIRE_OK(same);
    CHECK(same.value(0, 2) == same.value(1, 2));
    {
      PgConn s1 = d.setup.shard(1);
      REQUIRE_OK(s1.exec("UPDATE plans SET name = 'PRO' WHERE id = 2"));  // same count, other checksum
    }
    CHECK(verified(console, "plans") == std::vector<std::string>{"s0:3:t", "s1:3:f", "s2:3:t"});
    PgResult changed = console.exec("VERIFY REFERENCE plans");
    REQUIRE_OK(changed);
    CHECK(changed.value(0, 2) != changed.value(1, 2));
    {
      PgConn s2 = d.setup.shard(2);
      REQUIRE_OK(s2.exec("DELETE FROM countries WHERE code = 'JP'"));
    }
    CHECK(verified(console, "public.countries") == std::vector<std::string>{"s0:2:t", "s1:2:t", "s2:1:f"});
    PgResult unknown = console.exec("VERIFY REFERENCE orders");
    CHECK(unknown.sqlstate() == "42P01");
    CHECK(contains(unknown.error(), "not a reference table"));
  }

  TEST_CASE("a shard added to the config gets the reference tables at init before it takes buckets") {
    PROXY_ONLY();
    Deployment d;
    INFO("proxy log:\n" << d.proxy->log_tail(60));
    PgConn c = d.client();
    const int64_t tenant = tenant_on(0);
    REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, plan_id) VALUES (" + std::to_string(tenant) + ", 3)"));

    // README "Adding a shard": the config names s3, init, RELOAD. Its tables do not exist yet.
    d.proxy->write_config(
        render_config(d.setup.proxy_options("", kAll), d.proxy->port(), d.setup.cluster().port()));
    CommandResult init = d.setup.init("", kAll);
    REQUIRE_MESSAGE(init.exit_code == 0, init.describe());
    CHECK(contains(init.out, "reference table plans on s3: missing on s3: create it through shardwire"));
    CHECK(contains(init.out, "reference table plans on s1: same as s0 (3 rows)"));
    PgConn console = d.console();
    REQUIRE_OK(console.exec("RELOAD"));
    const uint32_t bucket = bucket_of_key(tenant);
    PgResult missing = console.exec("MOVE BUCKETS " + std::to_string(bucket) + " TO s3");
    CHECK(missing.sqlstate() == "55000");
    CHECK(contains(missing.error(), "plans on s3: missing"));

    // The tables created through shardwire reach s3; init again copies the reference rows.
    for (std::string ddl :
         {std::string(kCreateRefOrders), std::string(kCreatePlans), std::string(kCreateCountries)}) {
      ddl.replace(ddl.find("CREATE TABLE"), 12, "CREATE TABLE IF NOT EXISTS");
      REQUIRE_OK(c.exec(ddl));
    }
    CHECK(verified(console, "plans") == std::vector<std::string>{"s0:3:t", "s1:3:t", "s2:3:t", "s3:0:f"});
    CommandResult filled = d.setup.init("", kAll);
    REQUIRE_MESSAGE(filled.exit_code == 0, filled.describe());
    CHECK(contains(filled.out, "reference table plans on s3: 3 rows copied from s0"));
    CHECK(contains(filled.out, "reference table public.countries on s3: 2 rows copied from s0"));
    CHECK(d.plans_on(3) == "1=free,2=pro,3=team");
    CHECK(verified(console, "plans") == std::vector<std::string>{"s0:3:t", "s1:3:t", "s2:3:t", "s3:3:t"});

    // The tenant's bucket moves to s3; its join is answered there with s3's copy.
    const std::string id = start_move(console, {bucket}, "s3");
    std::string last;
    REQUIRE_MESSAGE(wait_for_state(console, id, "done", 120s, &last), "migration " << id << ": " << last);
    {
      PgConn s3 = d.setup.shard(3);
      CHECK(s3.value("SELECT count(*) FROM orders WHERE tenant_id = " + std::to_string(tenant)) == "1");
    }
    CHECK(c.value("SELECT p.name FROM orders o JOIN plans p ON p.id = o.plan_id WHERE o.tenant_id = " +
                  std::to_string(tenant)) == "team");

    // A copy that differs: MOVE BUCKETS to s3 is refused before anything starts.
    {
      PgConn s3 = d.setup.shard(3);
      REQUIRE_OK(s3.exec("DELETE FROM plans WHERE id = 1"));
    }
    const uint32_t other = bucket_of_key(tenant_on(1));
    PgResult refused = console.exec("MOVE BUCKETS " + std::to_string(other) + " TO s3");
    CHECK(refused.sqlstate() == "55000");
    CHECK(contains(refused.error(), "plans on s3: 2 rows"));
    CHECK(contains(refused.error(), "shardwire init"));
    PgResult migrations = console.exec("SHOW MIGRATIONS");
    REQUIRE_OK(migrations);
    CHECK(migrations.rows() == 1);  // only the first move

    // init puts back the missing row; the move is accepted again.
    CommandResult again = d.setup.init("", kAll);
    REQUIRE_MESSAGE(again.exit_code == 0, again.describe());
    CHECK(contains(again.out, "reference table plans on s3: 1 rows copied from s0"));
    CHECK(d.plans_on(3) == "1=free,2=pro,3=team");
    const std::string second = start_move(console, {other}, "s3");
    REQUIRE_MESSAGE(wait_for_state(console, second, "done", 120s, &last),
                    "migration " << second << ": " << last);

    // A copy holding a row the default shard lacks cannot be fixed by init: it says so.
    {
      PgConn s3 = d.setup.shard(3);
      REQUIRE_OK(s3.exec("INSERT INTO plans VALUES (9, 'stray')"));
    }
    CommandResult stray = d.setup.init("", kAll);
    CHECK(stray.exit_code != 0);
    CHECK(contains(stray.err, "holds rows the default shard does not"));
  }
}
