// A multi-row INSERT whose VALUES rows fall on several shards, run through shardwire on 3 real
// shards with a catalog (docs/architecture.md §5.11): one INSERT per shard in one transaction per
// shard, committed together by two-phase commit. RETURNING rows come back in the VALUES order
// (libpq and psql), the tag sums the parts, each row is on its owner (checked on every shard
// directly); ON CONFLICT runs per shard; a unique violation in one shard's part leaves no row
// anywhere and nothing prepared; ON CONFLICT DO NOTHING RETURNING returns the rows it inserted in
// VALUES order, also when it skipped some of a part's rows. The extended protocol
// (PQexecParams, psycopg 3 with text and binary parameters and a prepared statement, asyncpg):
// each part gets only its own parameters; psycopg 3 also inside its transaction (committed, rolled
// back; split_insert_transactions_test.cc has the rest of that). An extended batch whose Binds go
// to several shards before one Sync (libpq pipeline mode, asyncpg executemany) runs as one
// transaction per shard committed together, answers in the client's order; an error answers the
// units before it. A pipeline that reads each unit's answer at a Flush before its Sync (libpq with
// flush requests, psycopg's executemany with RETURNING) runs as one transaction over the shards'
// legs committed at its Sync; a unique violation in its last unit leaves nothing anywhere and
// nothing prepared.
#include "it_test.h"

#include <chrono>
#include <map>
#include <optional>

#include "harness/sharded_fixture.h"
#include "split_insert_support.h"

using namespace it;
using namespace it::split;

TEST_SUITE("split_insert") {
  TEST_CASE("a multi-row INSERT over 3 shards: RETURNING in VALUES order, each row on its owner") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    PgResult r = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.c) +
                             ", 1, 'c, (1)'), (" + k(t.a) + ", 2, 'a'), (" + k(t.b) + ", 3, 'b'), (" +
                             k(t.a2) + ", 4, 'a2') RETURNING id, note");
    REQUIRE_OK(r);
    CHECK(r.command_tag() == "INSERT 0 4");
    CHECK(returned(r) == std::vector<std::string>{"1|c, (1)", "2|a", "3|b", "4|a2"});
    std::vector<std::string> on_first = {row_of(t.a, "a"), row_of(t.a2, "a2")};
    std::sort(on_first.begin(), on_first.end());
    CHECK(f.rows_on(0) == on_first);
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(t.b, "b")});
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(t.c, "c, (1)")});
    for (int s = 0; s < kShards; ++s) CHECK(f.misplaced_on(s) == 0);
    CHECK(shardwire_prepared(f) == 0);

    // Without RETURNING: the summed tag only; the session goes on with its next statement.
    PgResult plain = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.b) +
                                 ", 5, 'b5'), (" + k(t.c) + ", 6, 'c6')");
    REQUIRE_OK(plain);
    CHECK(plain.command_tag() == "INSERT 0 2");
    CHECK(plain.rows() == 0);
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.c)) == "2");
    CHECK(rows_everywhere(f) == 6);

    // psql: the rows as psql prints them, in VALUES order.
    const std::string script =
        "\\set ON_ERROR_STOP 1\n\\pset format unaligned\n\\pset tuples_only on\n"
        "INSERT INTO orders (tenant_id, id, note) VALUES (" +
        k(t.b) + ", 7, 'p1'), (" + k(t.a) + ", 8, 'p2'), (" + k(t.c) + ", 9, 'p3'), (" + k(t.b) +
        ", 10, 'p4') RETURNING id, note;\n";
    CommandResult psql_run =
        run_command({psql(), "-X", "-q", "-d", f.proxy->conninfo()}, script, std::chrono::seconds(60));
    INFO("psql: " << psql_run.describe());
    REQUIRE(psql_run.exit_code == 0);
    CHECK(psql_run.out == "7|p1\n8|p2\n9|p3\n10|p4\n");
    CHECK(f.rows_on(1, "id IN (7, 10)") == std::vector<std::string>{row_of(t.b, "p1"), row_of(t.b, "p4")});
    CHECK(f.rows_on(0, "id = 8") == std::vector<std::string>{row_of(t.a, "p2")});
    CHECK(f.rows_on(2, "id = 9") == std::vector<std::string>{row_of(t.c, "p3")});
    CHECK(shardwire_prepared(f) == 0);
    CHECK(f.idle_in_transaction(0) == 0);
  }

  TEST_CASE("ON CONFLICT runs per shard; DO NOTHING RETURNING gives the inserted rows in VALUES order") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    const std::string rows = "(" + k(t.a) + ", 1, 'a'), (" + k(t.b) + ", 2, 'b'), (" + k(t.a2) + ", 3, 'a2')";
    REQUIRE_OK(client.exec("INSERT INTO orders (tenant_id, id, note) VALUES " + rows));
    // DO UPDATE on every shard: every row returned, in VALUES order.
    PgResult updated = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES " + rows +
                                   " ON CONFLICT (tenant_id, id) DO UPDATE SET note = excluded.note || '!' "
                                   "RETURNING id, note");
    REQUIRE_OK(updated);
    CHECK(updated.command_tag() == "INSERT 0 3");
    CHECK(returned(updated) == std::vector<std::string>{"1|a!", "2|b!", "3|a2!"});
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(t.b, "b!")});
    // DO NOTHING: only the new row counts; a part whose every row conflicted returns none.
    PgResult nothing =
        client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 1, 'x'), (" + k(t.c) +
                    ", 4, 'c'), (" + k(t.a2) + ", 3, 'x') ON CONFLICT DO NOTHING RETURNING id, note");
    REQUIRE_OK(nothing);
    CHECK(nothing.command_tag() == "INSERT 0 1");
    CHECK(returned(nothing) == std::vector<std::string>{"4|c"});
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(t.c, "c")});
    CHECK(f.rows_on(0, "note = 'x'").empty());
    // DO NOTHING skipped one of a part's two rows: the rows it inserted, in VALUES order (each
    // row its own INSERT in its part's transaction), as PostgreSQL returns them.
    PgResult skipped =
        client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 1, 'y'), (" + k(t.b) +
                    ", 20, 'y'), (" + k(t.a2) + ", 21, 'y') ON CONFLICT DO NOTHING RETURNING id, note");
    REQUIRE_OK(skipped);
    CHECK(skipped.command_tag() == "INSERT 0 2");
    CHECK(returned(skipped) == std::vector<std::string>{"20|y", "21|y"});
    CHECK(f.rows_on(0, "note = 'y'") == std::vector<std::string>{row_of(t.a2, "y")});
    CHECK(f.rows_on(1, "note = 'y'") == std::vector<std::string>{row_of(t.b, "y")});
    // The extended protocol, the skipped row in the middle of its part: each row its own
    // Parse/Bind/Execute with only its parameters.
    PgResult extended = client.exec_params(
        "INSERT INTO orders (tenant_id, id, note) VALUES ($1, 30, $2), ($3, 21, 'z'), ($4, 31, $2), ($5, 32, "
        "'z') "
        "ON CONFLICT DO NOTHING RETURNING id, note",
        {k(t.a), "z", k(t.a2), k(t.a), k(t.b)});
    REQUIRE_OK(extended);
    CHECK(extended.command_tag() == "INSERT 0 3");
    CHECK(returned(extended) == std::vector<std::string>{"30|z", "31|z", "32|z"});
    // Without RETURNING one INSERT per part: no order to keep.
    PgResult counted =
        client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 40, 'w'), (" + k(t.b) +
                    ", 20, 'w'), (" + k(t.a2) + ", 41, 'w') ON CONFLICT DO NOTHING");
    REQUIRE_OK(counted);
    CHECK(counted.command_tag() == "INSERT 0 2");
    CHECK(shardwire_prepared(f) == 0);
  }

  TEST_CASE("a unique violation in one shard's part leaves no row anywhere and nothing prepared") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    insert_directly(f, 1, t.b, 2);
    PgConn client = f.client();
    PgResult r = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) + ", 1, 'a'), (" +
                             k(t.b) + ", 2, 'b'), (" + k(t.c) + ", 3, 'c') RETURNING id");
    CHECK(r.sqlstate() == "23505");
    CHECK(contains(r.error(), "failed on shard s1"));
    CHECK(contains(r.error(), "rolled back on every shard"));
    CHECK(f.rows_on(0).empty());
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(t.b, "there")});
    CHECK(f.rows_on(2).empty());
    CHECK(shardwire_prepared(f) == 0);
    for (int s = 0; s < kShards; ++s) CHECK(f.idle_in_transaction(s) == 0);
    // The session is usable: the same rows without the duplicate go in.
    PgResult again = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) +
                                 ", 1, 'a'), (" + k(t.c) + ", 3, 'c')");
    REQUIRE_OK(again);
    CHECK(rows_everywhere(f) == 3);
  }

  TEST_CASE("extended protocol: each shard gets its own rows' parameters, RETURNING in VALUES order") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    // b's note is $4 and the ON CONFLICT value $7: each shard's part renumbers its own.
    const std::string sql =
        "INSERT INTO orders (tenant_id, id, note) VALUES ($1, 1, $2), ($3, 2, $4), ($5, 3, $6) "
        "ON CONFLICT (tenant_id, id) DO UPDATE SET note = $7 RETURNING id, note";
    const std::vector<std::optional<std::string>> values = {k(t.c), "c", k(t.a), "a", k(t.b), "b", "again"};
    PgResult first = client.exec_params(sql, values);
    REQUIRE_OK(first);
    CHECK(first.command_tag() == "INSERT 0 3");
    CHECK(returned(first) == std::vector<std::string>{"1|c", "2|a", "3|b"});
    CHECK(f.rows_on(0) == std::vector<std::string>{row_of(t.a, "a")});
    CHECK(f.rows_on(1) == std::vector<std::string>{row_of(t.b, "b")});
    CHECK(f.rows_on(2) == std::vector<std::string>{row_of(t.c, "c")});
    PgResult second = client.exec_params(sql, values);
    REQUIRE_OK(second);
    CHECK(returned(second) == std::vector<std::string>{"1|again", "2|again", "3|again"});
    for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = 'again'").size() == 1);
    // Without RETURNING, a unique violation on one shard: nothing written anywhere.
    insert_directly(f, 0, t.a, 9);
    PgResult violated = client.exec_params(
        "INSERT INTO orders (tenant_id, id, note) VALUES ($1, 9, 'n'), ($2, 9, 'n')", {k(t.b), k(t.a)});
    CHECK(violated.sqlstate() == "23505");
    CHECK(contains(violated.error(), "failed on shard s0"));
    CHECK(f.rows_on(1, "note = 'n'").empty());
    CHECK(shardwire_prepared(f) == 0);
    // The session goes on (its next statement on one shard).
    CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.b)) == "1");
  }

  TEST_CASE("psycopg and asyncpg: a multi-row INSERT over 3 shards returns its rows in VALUES order") {
    PROXY_ONLY();
    ShardedFixture f;
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    const std::string script =
        std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/python/split_insert_check.py";
    const std::string tenants = k(t.a) + "," + k(t.b) + "," + k(t.c);
    const std::string url =
        "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
    const std::map<std::string, std::string> outputs = {
        {"psycopg",
         "returning_0=T-0-0:0,T-0-1:1,T-0-2:2,T-0-3:3\nrowcount_0=4\n"
         "returning_1=T-1-0:10,T-1-1:11,T-1-2:12,T-1-3:13\nrowcount_1=4\n"
         "returning_2=T-2-0:20,T-2-1:21,T-2-2:22,T-2-3:23\nrowcount_2=4\n"
         "executemany=T-3-0:30,T-3-1:31,T-3-2:32,T-3-3:33\nunique=23505\ndup_rows=0\n"
         "executemany_unique=23505\nexecutemany_rows=0\n"
         "tx_returning_commit=txc-T-4-0:40,txc-T-4-1:41,txc-T-4-2:42,txc-T-4-3:43\ntx_seen_commit=2\n"
         "tx_returning_rollback=txr-T-4-0:40,txr-T-4-1:41,txr-T-4-2:42,txr-T-4-3:43\ntx_seen_rollback=2\n"
         "tx_rows=2,1,1\ndone\n"},
        {"asyncpg",
         "returning_0=T-0-0:0,T-0-1:1,T-0-2:2,T-0-3:3\n"
         "returning_1=T-1-0:10,T-1-1:11,T-1-2:12,T-1-3:13\nexecutemany=2,1,1\nunique=23505\ndup_rows=0\n"
         "executemany_unique=23505\nexecutemany_rows=0\ndone\n"},
    };
    for (const auto& entry : outputs) {
      const auto& driver = entry.first;  // not a structured binding: doctest's INFO captures it
      const auto& output = entry.second;
      CommandResult r = run_command({"/usr/bin/python3", script, url, driver, tenants, driver}, "",
                                    std::chrono::seconds(120));
      INFO(driver << ": " << r.describe());
      REQUIRE(r.exit_code == 0);
      std::string want = output;
      for (size_t at = want.find('T'); at != std::string::npos; at = want.find("T-", at + 1))
        want.replace(at, 1, driver);
      CHECK(r.out == want);
      // Rows t2, t0, t1, t0 per round: tenant a (s0) has rows 1 and 3, b (s1) row 2, c (s2) row 0.
      // psycopg: 3 multi-row INSERTs and its executemany (round 3); asyncpg: 2 and its executemany.
      const size_t rounds = driver == "psycopg" ? 4 : 3;
      std::vector<std::string> on_a, on_b, on_c;
      for (size_t round = 0; round < rounds; ++round) {
        const std::string prefix = driver + "-" + std::to_string(round) + "-";
        on_c.push_back(row_of(t.c, prefix + "0"));
        on_a.push_back(row_of(t.a, prefix + "1"));
        on_b.push_back(row_of(t.b, prefix + "2"));
        on_a.push_back(row_of(t.a, prefix + "3"));
      }
      std::sort(on_a.begin(), on_a.end());
      const std::string mine = "note LIKE '" + driver + "-%'";
      CHECK(f.rows_on(0, mine) == on_a);
      CHECK(f.rows_on(1, mine) == on_b);
      CHECK(f.rows_on(2, mine) == on_c);
      // psycopg's transaction: the committed split on every owner, the rolled back one nowhere.
      const std::vector<size_t> committed = {2, 1, 1};
      for (int s = 0; s < kShards; ++s) {
        CHECK(f.rows_on(s, "note LIKE 'txc-" + driver + "-%'").size() ==
              (driver == "psycopg" ? committed[s] : 0u));
        CHECK(f.rows_on(s, "note LIKE 'txr-%'").empty());
      }
      PgConn s1 = f.setup.shard(1);
      REQUIRE_OK(s1.exec("DELETE FROM orders WHERE id = 424242"));  // the next driver's duplicate
    }
    CHECK(shardwire_prepared(f) == 0);
  }

  TEST_CASE(
      "libpq pipeline: one Sync over 3 shards, answers in order; an error answers the units before it") {
    PROXY_ONLY();
    // Each unit: one row for a tenant, RETURNING its note; one Sync for all of them.
    PipelineCase pipeline(ReadAnswers::AtSync);
    INFO("proxy log:\n" << pipeline.f.log_tail());
    const Tenants& t = pipeline.t;
    pipeline.commit_first_batch();
    // The second unit's row (tenant a, id 7) is there: 23505 on s0; the first unit's answer comes
    // before it, the rest is skipped, and nothing of the batch is written anywhere.
    CHECK(pipeline.run({{t.c, "x"}, {t.a, "x"}, {t.b, "x"}}, "8") ==
          "PGRES_TUPLES_OK:x\nPGRES_FATAL_ERROR:23505\nPGRES_PIPELINE_ABORTED\n");
    pipeline.check_nothing_left("note = 'x'");
  }

  TEST_CASE(
      "libpq pipeline with a Flush after each unit: answered at each Flush, committed on 3 shards at Sync") {
    PROXY_ONLY();
    // Each unit is sent with a flush request and its answer read before the next is sent (as
    // psycopg's pipeline executemany reads at its Flush); one Sync at the end.
    PipelineCase pipeline(ReadAnswers::AtEachFlush);
    INFO("proxy log:\n" << pipeline.f.log_tail());
    const Tenants& t = pipeline.t;
    pipeline.commit_first_batch();
    // The last unit's row (tenant a, id 7) is there: 23505 on s0 after units on s2 and s1 ran;
    // nothing of the batch is written anywhere, nothing stays prepared or open.
    CHECK(pipeline.run({{t.c, "x"}, {t.b, "x"}, {t.a, "x"}}, "8") ==
          "PGRES_TUPLES_OK:x\nPGRES_TUPLES_OK:x\nPGRES_FATAL_ERROR:23505\n");
    // An error in the middle: the unit after it is skipped (answered PIPELINE_ABORTED at the Sync).
    CHECK(pipeline.run({{t.c, "y"}, {t.a, "y"}, {t.b, "y"}}, "9") ==
          "PGRES_TUPLES_OK:y\nPGRES_FATAL_ERROR:23505\nPGRES_PIPELINE_ABORTED\n");
    pipeline.check_nothing_left("note IN ('x', 'y')");
    // The session goes on: a later single-shard statement runs outside any transaction.
    CHECK(pipeline.c.value("SELECT note FROM orders WHERE tenant_id = " + k(t.b)) == "b");
    CHECK(PQtransactionStatus(pipeline.c.get()) == PQTRANS_IDLE);
  }

  TEST_CASE("under cross_shard_transactions: refuse a split INSERT is refused and writes nothing") {
    PROXY_ONLY();
    ShardedFixture f(refusing_cross_shard_transactions());
    INFO("proxy log:\n" << f.log_tail());
    const Tenants t;
    PgConn client = f.client();
    PgResult refused = client.exec("INSERT INTO orders (tenant_id, id, note) VALUES (" + k(t.a) +
                                   ", 1, 'a'), (" + k(t.b) + ", 2, 'b')");
    CHECK(refused.sqlstate() == "0A000");
    CHECK(contains(refused.error(), "sharding.cross_shard_transactions is refuse"));
    CHECK(rows_everywhere(f) == 0);
    // A pipeline answered at a Flush does not spread to a second shard either: its Bind for
    // another shard is refused in place, and the batch's first unit is rolled back at its Sync.
    PGconn* p = client.get();
    REQUIRE(PQenterPipelineMode(p) == 1);
    std::vector<std::string> got;
    for (int64_t tenant : {t.a, t.b}) {
      const std::string key = k(tenant);
      const char* values[1] = {key.c_str()};
      REQUIRE(PQsendQueryParams(p, "INSERT INTO orders (tenant_id, id, note) VALUES ($1, 1, 'p')", 1, nullptr,
                                values, nullptr, nullptr, 0) == 1);
      REQUIRE(PQsendFlushRequest(p) == 1);
      REQUIRE(PQflush(p) == 0);
      PGresult* r = PQgetResult(p);
      REQUIRE(r != nullptr);
      const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      got.push_back(std::string(PQresStatus(PQresultStatus(r))) + (state ? std::string(":") + state : ""));
      PQclear(r);
      CHECK(PQgetResult(p) == nullptr);
    }
    CHECK(got == std::vector<std::string>{"PGRES_COMMAND_OK", "PGRES_FATAL_ERROR:0A000"});
    REQUIRE(PQpipelineSync(p) == 1);
    PGresult* sync = PQgetResult(p);
    REQUIRE(sync != nullptr);
    CHECK(PQresultStatus(sync) == PGRES_PIPELINE_SYNC);
    PQclear(sync);
    REQUIRE(PQexitPipelineMode(p) == 1);
    CHECK(PQtransactionStatus(p) == PQTRANS_IDLE);
    CHECK(rows_everywhere(f) == 0);
  }
}
