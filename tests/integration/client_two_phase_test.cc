// The client's own two-phase commit through shardwire (docs/architecture.md §5.9), with 1 and 3
// shards, in transaction and session pooling, simple and extended protocol: PREPARE TRANSACTION
// of a transaction on one shard runs there (its row invisible until COMMIT PREPARED, which another
// client connection sends after the first one left); ROLLBACK PREPARED likewise; an unknown gid
// gets PostgreSQL's 42704; a transaction that ran on several shards is refused with 0A000 and
// rolled back, nothing left prepared; a gid with shardwire's prefix is refused (42602); and
// shardwire's recovery, which resolves its own prepared transactions, leaves a client's alone.
#include "it_test.h"

#include "catalog/pq.h"
#include "catalog/two_phase.h"
#include "harness/sharded_fixture.h"
#include "twopc/gid.h"

using namespace it;

namespace {

ShardedOptions deployment(int shards, const char* pool_mode) {
  ShardedOptions options;
  options.shards = shards;
  options.proxy.pool_mode = pool_mode;
  return options;
}

// Prepared transactions named `gid` anywhere in the cluster (a gid is cluster-wide).
int prepared(const ShardedFixture& f, const std::string& gid) {
  PgConn c = f.setup.shard(0);
  return std::stoi(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + gid + "'"));
}

// Shards whose orders hold a row with `note`, as "s<i>" joined.
std::string shards_with(const ShardedFixture& f, const std::string& note) {
  std::string out;
  for (int s = 0; s < f.setup.shards(); ++s)
    if (!f.rows_on(s, "note = '" + note + "'").empty()) out += "s" + std::to_string(s);
  return out;
}

// A transaction that inserts `note` for `tenant`, prepared as `gid` (`extended`: every statement
// in the extended protocol, as pgjdbc sends them); the client leaves afterwards.
void prepare_insert(const ShardedFixture& f, int64_t tenant, const std::string& note, const std::string& gid,
                    bool extended) {
  PgConn c = f.client();
  auto run = [&](const std::string& sql) { return extended ? c.exec_params(sql, {}) : c.exec(sql); };
  REQUIRE_OK(run("BEGIN"));
  REQUIRE_OK(
      run("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", '" + note + "')"));
  PgResult r = run("PREPARE TRANSACTION '" + gid + "'");
  REQUIRE_MESSAGE(r.ok(), r.describe());
  CHECK(r.command_tag() == "PREPARE TRANSACTION");
  CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
  CHECK(c.value("SELECT count(*) FROM orders WHERE note = '" + note + "'") == "0");  // not committed
  CHECK_OK(run("SELECT 1"));  // the connection goes on outside any transaction
}

// Prepare, then COMMIT PREPARED / ROLLBACK PREPARED from another connection; unknown gids; the
// reserved prefix; COMMIT PREPARED inside a block.
void finish_from_another_client(const ShardedFixture& f, const std::string& label, bool extended) {
  INFO("proxy log:\n" << f.log_tail(40));
  const int shards = f.setup.shards();
  const int shard = shards - 1;
  const int64_t tenant = tenant_on(shard, shards);
  const std::string committed = "xa_c_" + label, rolled_back = "xa_r_" + label;
  prepare_insert(f, tenant, committed, committed, extended);
  prepare_insert(f, tenant, rolled_back, rolled_back, extended);
  CHECK(prepared(f, committed) == 1);
  CHECK(shards_with(f, committed).empty());

  PgConn other = f.client();
  auto run = [&](const std::string& sql) { return extended ? other.exec_params(sql, {}) : other.exec(sql); };
  // A keyless read of the view runs on the default shard (s0), whose view is cluster-wide: the
  // shards share one cluster here.
  CHECK(other.value("SELECT current_database() FROM pg_prepared_xacts WHERE gid = '" + committed + "'") ==
        f.setup.shard_db(0));
  PgResult commit = run("COMMIT PREPARED '" + committed + "'");
  CHECK_MESSAGE(commit.ok(), commit.describe());
  CHECK(commit.command_tag() == "COMMIT PREPARED");
  CHECK(shards_with(f, committed) == "s" + std::to_string(shard));
  PgResult rollback = run("ROLLBACK PREPARED '" + rolled_back + "'");
  CHECK_MESSAGE(rollback.ok(), rollback.describe());
  CHECK(rollback.command_tag() == "ROLLBACK PREPARED");
  CHECK(shards_with(f, rolled_back).empty());
  CHECK(prepared(f, committed) + prepared(f, rolled_back) == 0);

  PgResult unknown = run("COMMIT PREPARED '" + committed + "'");  // finished already
  CHECK(unknown.sqlstate() == "42704");
  CHECK(unknown.error() == "prepared transaction with identifier \"" + committed + "\" does not exist");
  CHECK(run("ROLLBACK PREPARED 'xa_never_prepared'").sqlstate() == "42704");
  PgResult reserved = run("COMMIT PREPARED 'shardwire_0123456789abcdef_0_1'");
  CHECK(reserved.sqlstate() == "42602");
  CHECK(reserved.error().find("reserved for shardwire") != std::string::npos);
  // A spelling whose value the proxy cannot be sure of (here shardwire's prefix behind an escape)
  // is refused, never sent.
  PgResult escaped = run("ROLLBACK PREPARED E'shardwire\\x5f0123456789abcdef_0_1'");
  CHECK(escaped.sqlstate() == "0A000");
  CHECK(escaped.error().find("plain string literal") != std::string::npos);

  REQUIRE_OK(run("BEGIN"));
  CHECK(run("COMMIT PREPARED 'xa_in_block'").sqlstate() == "25001");
  REQUIRE_OK(run("ROLLBACK"));
  REQUIRE_OK(run("BEGIN"));
  REQUIRE_OK(run("INSERT INTO orders (tenant_id, note) VALUES (" + std::to_string(tenant) + ", 'forged')"));
  CHECK(run("PREPARE TRANSACTION 'shardwire_0123456789abcdef_0_2'").sqlstate() == "42602");
  CHECK(PQtransactionStatus(other.get()) == PQTRANS_IDLE);  // rolled back, as a failed PREPARE
  CHECK(prepared(f, "shardwire_0123456789abcdef_0_2") == 0);
  CHECK(shards_with(f, "forged").empty());
  CHECK_OK(run("SELECT 1"));
}

// A transaction that read or wrote on two shards cannot be prepared: refused, rolled back.
void refuse_several_shards(const ShardedFixture& f, const std::string& label, bool extended) {
  INFO("proxy log:\n" << f.log_tail(40));
  PgConn c = f.client();
  auto run = [&](const std::string& sql) { return extended ? c.exec_params(sql, {}) : c.exec(sql); };
  const std::string gid = "xa_m_" + label;
  const std::string first = std::to_string(tenant_on(0, kShards)),
                    second = std::to_string(tenant_on(1, kShards));
  for (bool reads_first : {false, true}) {
    REQUIRE_OK(run("BEGIN"));
    if (reads_first)
      REQUIRE_OK(run("SELECT count(*) FROM orders WHERE tenant_id = " + first));
    else
      REQUIRE_OK(run("INSERT INTO orders (tenant_id, note) VALUES (" + first + ", '" + gid + "')"));
    REQUIRE_OK(run("INSERT INTO orders (tenant_id, note) VALUES (" + second + ", '" + gid + "')"));
    PgResult r = run("PREPARE TRANSACTION '" + gid + "'");
    CHECK(r.sqlstate() == "0A000");
    CHECK(r.error().find("ran on several shards") != std::string::npos);
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(prepared(f, gid) == 0);
    CHECK(shards_with(f, gid).empty());
    CHECK_OK(run("SELECT 1"));
  }
}

void all_cases(int shards, const char* pool_mode) {
  ShardedFixture f(deployment(shards, pool_mode));
  const std::string label = std::to_string(shards) + pool_mode;
  finish_from_another_client(f, label + "_q", false);
  finish_from_another_client(f, label + "_x", true);
  if (shards > 1) {
    refuse_several_shards(f, label + "_q", false);
    refuse_several_shards(f, label + "_x", true);
  }
}

}  // namespace

TEST_SUITE("client_two_phase") {
  TEST_CASE("one shard, transaction pooling") { all_cases(1, "transaction"); }
  TEST_CASE("one shard, session pooling") { all_cases(1, "session"); }
  TEST_CASE("three shards, transaction pooling") { all_cases(3, "transaction"); }
  TEST_CASE("three shards, session pooling") { all_cases(3, "session"); }

  TEST_CASE("shardwire's recovery leaves a client's prepared transaction alone") {
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail(40));
    const int64_t tenant = tenant_on(1, kShards);
    prepare_insert(f, tenant, "xa_kept", "xa_kept", false);
    // A witness: a shardwire leg with a commit decision, which recovery commits in its next round.
    const std::string witness = sw::twopc::two_phase_gid("00000000000000aa", 0, 1);
    {
      PgConn s0 = f.setup.shard(0);
      REQUIRE_OK(s0.exec("BEGIN"));
      REQUIRE_OK(s0.exec("PREPARE TRANSACTION '" + sw::twopc::leg_gid(witness, 0) + "'"));
      auto catalog = sw::catalog::connect(f.setup.catalog_dsn(), "catalog");
      REQUIRE(catalog.is_ok());
      auto decided = sw::catalog::record_commit_decision(catalog->get(), witness, {"s0"});
      REQUIRE(decided.is_ok());
    }
    CHECK(wait_until([&] { return prepared(f, sw::twopc::leg_gid(witness, 0)) == 0; }, 20s));
    CHECK(prepared(f, "xa_kept") == 1);
    CHECK(f.proxy->log().find("xa_kept") == std::string::npos);
    PgConn c = f.client();
    CHECK_OK(c.exec("ROLLBACK PREPARED 'xa_kept'"));
    CHECK(prepared(f, "xa_kept") == 0);
  }
}
