// Sharding through shardwire against a catalog and 3 real shard databases:
// rows written with the simple protocol (psql), the extended protocol (text and binary int8
// parameters) and prepared statements land only on the shard that owns their bucket; keyed
// SELECT/UPDATE/DELETE touch exactly the right rows; pgbench with a keyed custom script runs clean
// in -M simple/extended/prepared; reads without a key scatter, or are refused when no merge
// computes them. Every case has its own catalog + 3 shard databases and proxy (harness/sharded_fixture.h).
// Transactions and refused writes are in sharding_transactions_test.cc; directory changes, fences
// and the lease in sharding_directory_test.cc.
#include "it_test.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "harness/sharded_fixture.h"

using namespace it;

namespace {

// Describes how `actual` differs from `expected` (both sorted multisets); "" when equal.
std::string diff_rows(std::vector<std::string> expected, std::vector<std::string> actual) {
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                      std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  if (missing.empty() && extra.empty()) return "";
  std::ostringstream out;
  out << expected.size() << " rows expected, " << actual.size() << " found; " << missing.size() << " missing";
  for (size_t i = 0; i < missing.size() && i < 5; ++i) out << (i ? ", " : ": ") << missing[i];
  out << "; " << extra.size() << " unexpected";
  for (size_t i = 0; i < extra.size() && i < 5; ++i) out << (i ? ", " : ": ") << extra[i];
  return out.str();
}

long long grab(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern))) return std::stoll(m[1]);
  return -1;
}

std::string k(int64_t key) { return std::to_string(key); }

// n keys whose buckets are on shard `shard` (initial directory), the first >= from.
std::vector<int64_t> keys_on(int shard, size_t n, int64_t from = 1) {
  std::vector<int64_t> out;
  for (int64_t key = from; out.size() < n; ++key)
    if (shard_of_key(key) == shard) out.push_back(key);
  return out;
}

// Runs `sql` (one key parameter $1) in protocol 0 = simple (literal), 1 = extended, 2 = prepared.
PgResult run_keyed(PgConn& c, int protocol, const std::string& sql_with_param, int64_t key,
                   const std::string& name) {
  switch (protocol) {
    case 0: {
      std::string sql = sql_with_param;
      sql.replace(sql.find("$1"), 2, k(key));
      return c.exec(sql);
    }
    case 1: return c.exec_params(sql_with_param, {k(key)});
    default: {
      PgResult p = c.prepare(name, sql_with_param);
      if (!p.ok() && p.sqlstate() != "42P05") return p;  // already prepared on this connection
      return c.exec_prepared(name, {k(key)});
    }
  }
}

const char* protocol_name(int protocol) {
  return protocol == 0 ? "simple" : protocol == 1 ? "extended" : "prepared";
}

}  // namespace

TEST_SUITE("sharding") {
  TEST_CASE("rows written through shardwire land only on the shard that owns their bucket") {
    PROXY_ONLY();
    ShardedFixture f;
    std::map<int, std::vector<std::string>> expected;
    size_t total = 0;
    auto expect_row = [&](int64_t key, const std::string& note) {
      expected[shard_of_key(key)].push_back(row_of(key, note));
      ++total;
    };

    // CREATE TABLE through shardwire ran on every shard and installed the fence trigger there.
    for (int i = 0; i < kShards; ++i) {
      PgConn s = f.setup.shard(i);
      CHECK_MESSAGE(s.value("SELECT count(*) FROM pg_trigger WHERE tgname = 'shardwire_fence' "
                            "AND tgrelid = 'orders'::regclass") == "1",
                    "shard s" << i);
    }

    // Simple protocol: psql, one INSERT per Query message, with a few literal forms and multi-row
    // INSERTs whose rows all fall on one shard.
    {
      std::vector<int64_t> keys = spread_keys(300, 1, /*extremes=*/true);
      std::string script;
      for (size_t i = 0; i < keys.size(); ++i) {
        int64_t key = keys[i];
        if (i % 10 == 3) {
          script += "INSERT INTO orders (note, tenant_id) VALUES ('psql', " + k(key) + ") RETURNING id;\n";
        } else if (i % 10 == 7) {
          script += "insert into public.orders(tenant_id,note) values ('" + k(key) + "','psql');\n";
        } else {
          script += "INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'psql');\n";
        }
        expect_row(key, "psql");
      }
      for (int shard = 0; shard < kShards; ++shard) {
        std::vector<int64_t> same = keys_on(shard, 3, 1000000 + shard * 1000);
        script += "INSERT INTO orders (tenant_id, note) VALUES (" + k(same[0]) + ", 'psql-multi'), (" +
                  k(same[1]) + ", 'psql-multi'), (" + k(same[2]) + ", 'psql-multi');\n";
        for (int64_t key : same) expect_row(key, "psql-multi");
      }
      CommandResult r =
          run_command({psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", f.proxy->conninfo()}, script, 120s);
      INFO("psql: " << r.describe());
      INFO("proxy log:\n" << f.log_tail());
      REQUIRE(r.exit_code == 0);
    }

    PgConn c = f.client();
    // Extended protocol, text parameters: $1 untyped (the key's configured type) and typed int8.
    {
      std::vector<int64_t> keys = spread_keys(300, 2, true);
      for (size_t i = 0; i < keys.size(); ++i) {
        PgResult r = exec_params_typed(c, "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)",
                                       {k(keys[i]), "ext-text"}, {i % 2 ? 20u : 0u, 0u}, {0, 0});
        REQUIRE_MESSAGE(r.ok(), "key " << keys[i] << ": " << r.describe() << "\n" << f.log_tail());
        expect_row(keys[i], "ext-text");
      }
    }
    // Extended protocol, binary parameters: int8 (typed 20 and untyped) and int4 (typed 23).
    {
      std::vector<int64_t> keys = spread_keys(200, 3, true);
      for (size_t i = 0; i < keys.size(); ++i) {
        PgResult r = exec_params_typed(c, "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)",
                                       {be_int8(keys[i]), "ext-bin8"}, {i % 2 ? 20u : 0u, 0u}, {1, 0});
        REQUIRE_MESSAGE(r.ok(), "key " << keys[i] << ": " << r.describe() << "\n" << f.log_tail());
        expect_row(keys[i], "ext-bin8");
      }
      std::vector<int64_t> small;
      for (int64_t key : spread_keys(400, 4, true))
        if (key >= INT32_MIN && key <= INT32_MAX && small.size() < 60) small.push_back(key);
      REQUIRE(small.size() == 60);
      for (int64_t key : small) {
        PgResult r = exec_params_typed(c, "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)",
                                       {be_int4(static_cast<int>(key)), "ext-bin4"}, {23u, 0u}, {1, 0});
        REQUIRE_MESSAGE(r.ok(), "key " << key << ": " << r.describe() << "\n" << f.log_tail());
        expect_row(key, "ext-bin4");
      }
    }
    // Prepared statements: PQprepare once, PQexecPrepared per row (text), and a statement whose
    // key parameter is cast in the SQL, executed with binary int8 values.
    {
      REQUIRE_OK(c.prepare("ins_text", "INSERT INTO orders (tenant_id, note) VALUES ($1, $2)"));
      REQUIRE_OK(c.prepare("ins_bin", "INSERT INTO orders (tenant_id, note) VALUES ($1::bigint, $2)"));
      std::vector<int64_t> keys = spread_keys(300, 5, true);
      for (int64_t key : keys) {
        PgResult r = c.exec_prepared("ins_text", {k(key), "prepared"});
        REQUIRE_MESSAGE(r.ok(), "key " << key << ": " << r.describe() << "\n" << f.log_tail());
        expect_row(key, "prepared");
      }
      for (int64_t key : spread_keys(100, 6, true)) {
        PgResult r = exec_prepared_typed(c, "ins_bin", {be_int8(key), "prepared-bin"}, {1, 0});
        REQUIRE_MESSAGE(r.ok(), "key " << key << ": " << r.describe() << "\n" << f.log_tail());
        expect_row(key, "prepared-bin");
      }
    }

    // Direct to each shard: exactly the rows whose bucket the shard owns (C++ bucket hash), and no
    // row whose shardwire.bucket_of (SQL, on the shard) names another shard.
    size_t found = 0;
    for (int i = 0; i < kShards; ++i) {
      std::vector<std::string> rows = f.rows_on(i);
      found += rows.size();
      CHECK_MESSAGE(!expected[i].empty(), "no key fell on shard s" << i);
      std::string diff = diff_rows(expected[i], rows);
      CHECK_MESSAGE(diff.empty(), "shard s" << i << ": " << diff);
      CHECK_MESSAGE(f.misplaced_on(i) == 0, "shard s" << i << " holds rows of buckets it does not own");
      MESSAGE("shard s" << i << ": " << rows.size() << " rows");
    }
    CHECK(found == total);
    CHECK(total >= 1200);
  }

  TEST_CASE("keyed SELECT, UPDATE and DELETE through shardwire touch exactly the key's rows on its shard") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    std::vector<int64_t> keys = spread_keys(90, 11, true);
    for (int64_t key : keys)
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(key) + ", 'r1'), (" + k(key) +
                        ", 'r2'), (" + k(key) + ", 'r3')"));
    // Decoys: rows of some keys planted directly on a shard that does not own their bucket (the
    // fence is bypassed as the mover does). Keyed statements through shardwire must never see them.
    std::map<int, std::vector<std::string>> decoys;
    for (size_t i = 0; i < keys.size(); i += 3) {
      int wrong = (shard_of_key(keys[i]) + 1) % kShards;
      PgConn s = f.setup.shard(wrong);
      REQUIRE_OK(mark_fences_holding_rows(s));
      REQUIRE_OK(s.exec("SET session_replication_role = replica"));
      REQUIRE_OK(s.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(keys[i]) + ", 'decoy')"));
      decoys[wrong].push_back(row_of(keys[i], "decoy"));
    }

    // SELECT by key, in each protocol: the three rows, read on the owning shard.
    for (size_t i = 0; i < keys.size(); ++i) {
      int protocol = static_cast<int>(i % 3);
      PgResult r = run_keyed(c, protocol,
                             "SELECT count(*), string_agg(note, ',' ORDER BY note), min(current_database()) "
                             "FROM orders WHERE tenant_id = $1",
                             keys[i], "sel");
      INFO("key " << keys[i] << " via " << protocol_name(protocol));
      REQUIRE_MESSAGE(r.ok(), r.describe() << "\n" << f.log_tail());
      CHECK(r.value(0, 0) == "3");
      CHECK(r.value(0, 1) == "r1,r2,r3");
      CHECK(r.value(0, 2) == f.setup.shard_db(shard_of_key(keys[i])));
    }
    // An IN list whose keys are all on one shard reads them all there.
    {
      std::vector<int64_t> same;
      for (int64_t key : keys)
        if (shard_of_key(key) == 1 && same.size() < 3) same.push_back(key);
      REQUIRE(same.size() == 3);
      PgResult r = c.exec("SELECT count(*) FROM orders WHERE tenant_id IN (" + k(same[0]) + ", " +
                          k(same[1]) + ", " + k(same[2]) + ")");
      REQUIRE_OK(r);
      CHECK(r.value() == "9");
    }

    // UPDATE every other key, DELETE every fifth (some of them updated first); each protocol.
    std::set<int64_t> updated, deleted;
    for (size_t i = 0; i < keys.size(); i += 2) {
      int protocol = static_cast<int>((i / 2) % 3);
      PgResult r = run_keyed(c, protocol,
                             "UPDATE orders SET qty = qty + 5, note = note || '-upd' WHERE tenant_id = $1",
                             keys[i], "upd");
      INFO("UPDATE key " << keys[i] << " via " << protocol_name(protocol));
      REQUIRE_MESSAGE(r.ok(), r.describe() << "\n" << f.log_tail());
      CHECK(r.command_tag() == "UPDATE 3");
      updated.insert(keys[i]);
    }
    for (size_t i = 1; i < keys.size(); i += 5) {
      int protocol = static_cast<int>(i % 3);
      PgResult r = run_keyed(c, protocol, "DELETE FROM orders WHERE tenant_id = $1", keys[i], "del");
      INFO("DELETE key " << keys[i] << " via " << protocol_name(protocol));
      REQUIRE_MESSAGE(r.ok(), r.describe() << "\n" << f.log_tail());
      CHECK(r.command_tag() == "DELETE 3");
      deleted.insert(keys[i]);
    }
    {
      // UPDATE ... RETURNING by key: the key's rows, from its shard.
      int64_t key = keys[2];
      PgResult r = c.exec("UPDATE orders SET qty = qty WHERE tenant_id = " + k(key) +
                          " RETURNING tenant_id, current_database()");
      REQUIRE_OK(r);
      REQUIRE(r.rows() == 3);
      for (int row = 0; row < 3; ++row) {
        CHECK(r.value(row, 0) == k(key));
        CHECK(r.value(row, 1) == f.setup.shard_db(shard_of_key(key)));
      }
    }

    // Direct to each shard: exactly the expected rows; decoys untouched.
    std::map<int, std::vector<std::string>> expected = decoys;
    for (int64_t key : keys) {
      if (deleted.count(key)) continue;
      for (const char* note : {"r1", "r2", "r3"})
        expected[shard_of_key(key)].push_back(
            row_of(key, std::string(note) + (updated.count(key) ? "-upd" : "")));
    }
    for (int i = 0; i < kShards; ++i) {
      std::string diff = diff_rows(expected[i], f.rows_on(i));
      CHECK_MESSAGE(diff.empty(), "shard s" << i << ": " << diff);
      PgConn s = f.setup.shard(i);
      CHECK(s.value("SELECT count(*) FROM orders WHERE (note LIKE '%-upd') <> (qty = 5)") == "0");
      CHECK(s.value("SELECT count(*) FROM orders WHERE note = 'decoy' AND qty <> 0") == "0");
    }
  }

  namespace {

  // pgbench with a keyed custom script (autocommit and BEGIN/END variants, picked at random per
  // transaction) through shardwire: 0 failed transactions, and every row on the shard its bucket
  // names, each row updated by its own transaction (so the UPDATE went where the INSERT went).
  void keyed_pgbench(const std::string& mode) {
    ShardedFixture f;
    TempDir dir("shardwire-keyed-");
    const std::string statements =
        "INSERT INTO orders (tenant_id, note) VALUES (:k, 'pgbench');\n"
        "UPDATE orders SET qty = qty + 1 WHERE tenant_id = :k;\n"
        "SELECT count(*), sum(qty) FROM orders WHERE tenant_id = :k;\n";
    write_file(dir.file("auto.sql"), "\\set k random(1, 100000)\n" + statements);
    write_file(dir.file("tx.sql"), "\\set k random(1, 100000)\nBEGIN;\n" + statements + "END;\n");
    const int clients = 8, per_client = 250;
    {  // the pgbench output and the proxy log are shown only with these checks
      CommandResult r = run_command({pgbench(), "-n", "-M", mode, "-c", std::to_string(clients), "-j", "2",
                                     "-t", std::to_string(per_client), "-f", dir.file("auto.sql"), "-f",
                                     dir.file("tx.sql"), f.proxy->conninfo()},
                                    "", 300s);
      INFO("pgbench -M " << mode << ": " << r.describe());
      INFO("proxy log:\n" << f.log_tail());
      CHECK(r.exit_code == 0);
      CHECK(contains(r.out, "query mode: " + mode));
      CHECK(grab(r.out, R"(number of transactions actually processed: (\d+))") == clients * per_client);
      CHECK(grab(r.out, R"(number of failed transactions: (\d+))") == 0);
      CHECK_FALSE(contains(lower(r.err), "error"));
      CHECK_FALSE(contains(r.err, "aborted"));
      std::smatch m;
      if (std::regex_search(r.out, m, std::regex(R"(tps = ([0-9.]+))")))
        MESSAGE("-M " << mode << ": tps " << m[1]);
    }

    long long rows = 0;
    for (int i = 0; i < kShards; ++i) {
      PgConn s = f.setup.shard(i);
      long long n = std::stoll(s.value("SELECT count(*) FROM orders"));
      rows += n;
      CHECK_MESSAGE(n > 0, "shard s" << i << " got no row");
      CHECK_MESSAGE(f.misplaced_on(i) == 0, "shard s" << i << " holds rows of buckets it does not own");
      CHECK_MESSAGE(s.value("SELECT count(*) FROM orders WHERE qty < 1") == "0",
                    "shard s" << i << ": a row was not reached by its transaction's UPDATE");
      MESSAGE("-M " << mode << ": shard s" << i << " has " << n << " rows");
    }
    CHECK(rows == clients * per_client);
  }

  }  // namespace

  TEST_CASE(
      "pgbench keyed script through shardwire, -M simple, 8 clients: 0 failed, rows on their buckets' "
      "shards") {
    PROXY_ONLY();
    keyed_pgbench("simple");
  }

  TEST_CASE(
      "pgbench keyed script through shardwire, -M extended, 8 clients: 0 failed, rows on their buckets' "
      "shards") {
    PROXY_ONLY();
    keyed_pgbench("extended");
  }

  TEST_CASE(
      "pgbench keyed script through shardwire, -M prepared, 8 clients: 0 failed, rows on their buckets' "
      "shards") {
    PROXY_ONLY();
    keyed_pgbench("prepared");
  }

  TEST_CASE("a read without a key returns every shard's rows; one no merge computes is refused") {
    PROXY_ONLY();
    ShardedFixture f;
    PgConn c = f.client();
    std::vector<int64_t> keys = spread_keys(60, 21, true);
    std::vector<std::string> all;
    for (size_t i = 0; i < keys.size(); ++i) {
      std::string note = i % 2 ? "odd" : "even";
      REQUIRE_OK(c.exec("INSERT INTO orders (tenant_id, note) VALUES (" + k(keys[i]) + ", '" + note + "')"));
      all.push_back(row_of(keys[i], note));
    }
    std::vector<std::string> direct;
    for (int i = 0; i < kShards; ++i) {
      auto rows = f.rows_on(i);
      CHECK_MESSAGE(!rows.empty(), "shard s" << i << " has no row; the scatter would prove nothing");
      direct.insert(direct.end(), rows.begin(), rows.end());
    }
    CHECK(diff_rows(all, direct).empty());

    auto rows_of = [](const PgResult& r) {
      std::vector<std::string> out;
      for (const auto& row : r.data()) out.push_back(row.at(0));
      return out;
    };
    {
      PgResult r = c.exec("SELECT tenant_id::text || '|' || note FROM orders");
      INFO(r.describe() << "\n" << f.log_tail());
      REQUIRE_OK(r);
      std::string diff = diff_rows(all, rows_of(r));
      CHECK_MESSAGE(diff.empty(), diff);
    }
    {
      PgResult r = c.exec("SELECT tenant_id::text || '|' || note FROM orders WHERE note = 'odd'");
      REQUIRE_OK(r);
      std::vector<std::string> odd;
      for (const auto& row : all)
        if (contains(row, "|odd")) odd.push_back(row);
      std::string diff = diff_rows(odd, rows_of(r));
      CHECK_MESSAGE(diff.empty(), diff);
    }
    {
      // psql (simple protocol) sees the same rows.
      CommandResult r = run_command({psql(), "-X", "-A", "-t", "-d", f.proxy->conninfo(), "-c",
                                     "SELECT tenant_id::text || '|' || note FROM orders"},
                                    "", 60s);
      REQUIRE(r.exit_code == 0);
      std::vector<std::string> lines;
      std::istringstream in(r.out);
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(line);
      std::string diff = diff_rows(all, lines);
      CHECK_MESSAGE(diff.empty(), diff);
    }

    // Merged reads are integration.merged_reads' subject; what no merge computes stays refused.
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"SELECT DISTINCT note FROM orders ORDER BY length(note)", "ORDER BY"},
        {"SELECT json_agg(DISTINCT id) FROM orders", "json_agg(DISTINCT id)"},
        {"SELECT note, count(*) FROM orders GROUP BY note HAVING max(length(note)) ^ 2 > 0", "HAVING"},
        {"SELECT DISTINCT ON (note) note FROM orders", "DISTINCT ON"},
        {"SELECT id, rank() OVER (ORDER BY id) FROM orders", "window functions"},
    };
    for (const auto& entry : refused) {
      const auto& sql = entry.first;  // not a structured binding: doctest's macros capture it
      const auto& what = entry.second;
      PgResult r = c.exec(sql);
      INFO(sql << " -> " << r.describe());
      CHECK(r.sqlstate() == "0A000");
      CHECK(contains(r.error(), "orders"));
      CHECK(contains(r.error(), what));
      CHECK(contains(r.error(), "tenant_id"));  // says how to make it routable
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }
    // The same aggregate with a key is routed to one shard and answered.
    PgResult keyed = c.exec("SELECT count(*) FROM orders WHERE tenant_id = " + k(keys[5]));
    REQUIRE_OK(keyed);
    CHECK(keyed.value() == "1");

    // Extended protocol: the same scatter, unnamed and prepared, rows concatenated.
    {
      PgResult r =
          c.exec_params("SELECT tenant_id::text || '|' || note FROM orders WHERE note <> $1", {"none"});
      REQUIRE_MESSAGE(r.ok(), r.describe());
      std::string diff = diff_rows(all, rows_of(r));
      CHECK_MESSAGE(diff.empty(), diff);
      REQUIRE_OK(c.prepare("all_orders", "SELECT tenant_id::text || '|' || note FROM orders"));
      PgResult p = c.exec_prepared("all_orders", {});
      REQUIRE_MESSAGE(p.ok(), p.describe());
      diff = diff_rows(all, rows_of(p));
      CHECK_MESSAGE(diff.empty(), diff);
    }
  }

}  // TEST_SUITE
