// Reads that span shards, merged by the proxy, against the same data in one plain PostgreSQL
// database: a few thousand rows (NULLs, duplicates, mixed-case and non-ASCII text, negatives,
// NaN, timestamps written in several time zones) loaded through shardwire onto 3 shards and,
// with the same statements, into a reference database. Generated queries (ORDER BY with every
// direction and NULLS placement, LIMIT/OFFSET, every mergeable aggregate with and without
// GROUP BY, GROUP BY on the key, DISTINCT) must return the same rows through shardwire as from
// the reference: in the same order when ORDER BY fixes it (every ORDER BY ends in the unique
// (tenant_id, id) or a unique group key), as the same multiset otherwise; in the simple protocol,
// and in the extended protocol with text results and with binary results (compared byte for
// byte). The queries no merge computes are listed with the error each must get in each protocol,
// and that list is checked too.
#include "it_test.h"

#include <algorithm>
#include <sstream>

#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreate =
    "CREATE TABLE m (id bigint NOT NULL, tenant_id bigint NOT NULL, grp integer, i integer, big bigint, "
    "n numeric, f double precision, t text, b boolean, ts timestamptz, d date, iv interval, "
    "PRIMARY KEY (tenant_id, id))";

const char* const kTexts[] = {"apple",
                              "Apple",
                              "APPLE",
                              "\xc3\xa9"
                              "clair",
                              "\xc3\x89"
                              "clair",
                              "zebra",
                              "Zebra",
                              "stra\xc3\x9f"
                              "e",
                              "\xe6\x97\xa5\xe6\x9c\xac",
                              "",
                              "a b",
                              "apple ",
                              "_x",
                              "0",
                              "~"};
const char* const kZones[] = {"+00", "-08", "+05:30", "+09", "-03:30", "+14"};

std::string row_values(int i, int64_t tenant) {
  auto opt = [](bool null, const std::string& v) { return null ? std::string("NULL") : v; };
  std::ostringstream v;
  const int f4 = (i * 31) % 4001 - 2000;  // quarters: sums of these are exact in double
  v << "(" << i << ", " << tenant << ", " << opt(i % 13 == 0, std::to_string(i % 7)) << ", "
    << opt(i % 17 == 0, std::to_string((i * 37) % 2001 - 1000)) << ", "
    << opt(i % 19 == 0,
           std::to_string((static_cast<int64_t>(i) * 2654435761LL) % 9000000000000LL - 4500000000000LL))
    << ", "
    << opt(i % 11 == 0, i % 97 == 0
                            ? "'NaN'"
                            : std::to_string((i * 7919) % 100000 - 50000) + "." + std::to_string(10 + i % 90))
    << ", " << opt(i % 23 == 0, i % 101 == 0 ? "'NaN'" : std::to_string(f4 / 4.0)) << ", "
    << opt(i % 29 == 0, '\'' + std::string(kTexts[(i * 7) % 15]) + std::string(i % 3 == 0 ? "" : "-") +
                            std::to_string(i % 40) + "'")
    << ", " << opt(i % 31 == 0, i % 5 < 3 ? "true" : "false") << ", "
    << opt(i % 37 == 0, std::string("'2024-03-").append(std::to_string(10 + i % 5)) + " " +
                            std::to_string(i % 24) + ":" + std::to_string(10 + i % 50) + ":00" +
                            kZones[i % 6] + "'")
    << ", "
    << opt(i % 41 == 0, '\'' + std::to_string(1990 + i % 40) + "-0" + std::to_string(1 + i % 9) + "-1" +
                            std::to_string(i % 10) + "'")
    << ", "
    << opt(i % 43 == 0, '\'' + std::to_string(i % 3) + " mons " + std::to_string(i % 45 - 10) + " days " +
                            std::to_string(i % 30) + ":00:00'")
    << ")";
  return v.str();
}

struct Query {
  std::string sql;
  bool ordered;
};

std::vector<Query> generated_queries() {
  std::vector<Query> out;
  const char* columns[] = {"i", "big", "n", "f", "t", "b", "ts", "d", "iv", "grp"};
  const char* directions[] = {"", " DESC", " DESC NULLS LAST", " NULLS FIRST"};
  const char* limits[] = {
      "",         " LIMIT 10",         " LIMIT 25 OFFSET 40",       " OFFSET 2990",
      " LIMIT 0", " LIMIT 7 OFFSET 0", " FETCH FIRST 15 ROWS ONLY", " LIMIT ALL OFFSET 100"};
  int k = 0;
  for (const char* column : columns) {
    for (const char* direction : directions) {
      out.push_back({std::string("SELECT tenant_id, id, ") + column + " FROM m ORDER BY " + column +
                         direction + ", tenant_id, id" + limits[k++ % 8],
                     true});
    }
  }
  out.push_back({"SELECT grp, t, tenant_id, id FROM m ORDER BY grp DESC, t, tenant_id, id LIMIT 50", true});
  out.push_back({"SELECT * FROM m ORDER BY n, tenant_id, id LIMIT 30 OFFSET 3", true});
  out.push_back({"SELECT * FROM m ORDER BY ts DESC NULLS LAST, tenant_id DESC, id LIMIT 40", true});
  out.push_back({"SELECT t AS x, tenant_id, id FROM m ORDER BY x DESC, 2, 3 LIMIT 20", true});
  out.push_back({"SELECT f, d, tenant_id, id FROM m WHERE grp = 3 ORDER BY f, d DESC, tenant_id, id", true});
  out.push_back({"SELECT tenant_id, id FROM m WHERE i > 990 ORDER BY 1, 2", true});
  // HAVING without the key (applied by the proxy to the final groups); ORDER BY expressions not
  // selected (selected hidden, sorted on, dropped).
  for (const char* sql :
       {"SELECT grp, count(*), avg(n) FROM m GROUP BY grp HAVING count(*) > 400 AND avg(n) < 1000 ORDER BY "
        "grp",
        "SELECT t, count(*) FROM m GROUP BY t HAVING count(*) >= 200 OR t = 'apple' ORDER BY 1",
        "SELECT b, min(i), max(ts) FROM m GROUP BY b HAVING NOT (min(i) > 0) OR b = true ORDER BY 1",
        "SELECT count(*), max(i) FROM m HAVING max(i) > 5",
        "SELECT count(*), max(i) FROM m WHERE i > 100000 HAVING max(i) > 5",
        "SELECT grp, sum(big) FROM m GROUP BY grp HAVING 0 < sum(big) AND grp <> 3 ORDER BY 2 DESC LIMIT 3",
        "SELECT tenant_id, id FROM m ORDER BY i + 1, tenant_id, id",
        "SELECT tenant_id, id, t FROM m ORDER BY lower(t) DESC NULLS LAST, 1, 2 LIMIT 30",
        "SELECT tenant_id, id FROM m ORDER BY (i % 7) * -1, abs(big) DESC, 1, 2 LIMIT 40 OFFSET 3",
        "SELECT id, tenant_id FROM m m1 ORDER BY m1.grp + m1.i NULLS FIRST, coalesce(t, 'none'), 2, 1 LIMIT "
        "25"})
    out.push_back({sql, true});
  out.push_back({"SELECT tenant_id, id FROM m WHERE i > 100000 ORDER BY 1, 2 LIMIT 5", true});

  // Aggregates without GROUP BY: each alone, then all together, then over no rows.
  const char* numeric_columns[] = {"i", "big", "n", "f", "grp"};
  for (const char* column : numeric_columns) {
    for (const char* aggregate : {"sum", "avg", "min", "max", "count"}) {
      out.push_back({std::string("SELECT ") + aggregate + "(" + column + ") FROM m", true});
    }
  }
  out.push_back({"SELECT count(b) FROM m", true});
  for (const char* column : {"t", "ts", "d", "iv"}) {
    for (const char* aggregate : {"min", "max", "count"}) {
      out.push_back({std::string("SELECT ") + aggregate + "(" + column + ") FROM m", true});
    }
  }
  out.push_back({"SELECT bool_and(b), bool_or(b), every(b) FROM m", true});
  out.push_back({"SELECT count(*) FROM m", true});
  out.push_back(
      {"SELECT count(*), sum(i), avg(i), avg(big), avg(n), avg(f), min(t), max(t), min(ts), max(d), "
       "bool_and(b), bool_or(b) FROM m WHERE grp = 2",
       true});
  out.push_back(
      {"SELECT count(*), count(i), sum(i), avg(n), min(t), max(ts), bool_or(b) FROM m WHERE i > 100000",
       true});
  out.push_back({"SELECT avg(i) AS mean, sum(n) total FROM m WHERE b", true});

  // GROUP BY without the key: partial aggregates per shard, final ones in the proxy.
  const std::string all_aggregates =
      "count(*), count(i), sum(i), avg(i), sum(big), avg(big), sum(n), avg(n), sum(f), avg(f), min(t), "
      "max(t), "
      "min(ts), max(ts), min(d), max(iv), bool_and(b), bool_or(b)";
  for (const char* key : {"grp", "b", "d", "t", "grp, b", "i % 5"}) {
    out.push_back({std::string("SELECT ") + key + ", " + all_aggregates + " FROM m GROUP BY " + key, false});
  }
  out.push_back({"SELECT grp, count(*), avg(n) FROM m GROUP BY grp ORDER BY grp NULLS FIRST", true});
  out.push_back({"SELECT grp, count(*), avg(n) FROM m GROUP BY grp ORDER BY grp DESC LIMIT 3", true});
  out.push_back({"SELECT grp, count(*) AS c FROM m GROUP BY 1 ORDER BY c DESC, grp LIMIT 4 OFFSET 1", true});
  out.push_back({"SELECT t, count(*), sum(i) FROM m GROUP BY t ORDER BY t LIMIT 30", true});
  out.push_back(
      {"SELECT t, count(*), sum(i) FROM m GROUP BY t ORDER BY 3 DESC NULLS LAST, 1 OFFSET 5", true});
  out.push_back({"SELECT d, max(ts), min(f) FROM m GROUP BY d ORDER BY d DESC NULLS LAST LIMIT 25", true});
  out.push_back({"SELECT b, grp, avg(f), sum(n) FROM m GROUP BY b, grp ORDER BY 1, 2", true});
  out.push_back({"SELECT grp, avg(i) FROM m WHERE i < 0 GROUP BY grp ORDER BY 2, 1", true});
  out.push_back({"SELECT avg(i), grp, avg(f), count(*) FROM m GROUP BY 2 ORDER BY 2 DESC, 4", true});
  out.push_back({"SELECT grp, count(*) FROM m WHERE i > 100000 GROUP BY grp", false});

  // GROUP BY the key: the shards' groups are final.
  out.push_back({"SELECT tenant_id, count(*), sum(i), avg(n) FROM m GROUP BY tenant_id", false});
  out.push_back(
      {"SELECT tenant_id, count(*), sum(i) FROM m GROUP BY tenant_id ORDER BY 2 DESC, 1 LIMIT 10", true});
  out.push_back({"SELECT tenant_id, max(t) FROM m GROUP BY tenant_id HAVING count(*) > 30 ORDER BY 1", true});
  out.push_back(
      {"SELECT tenant_id, grp, count(*) FROM m GROUP BY tenant_id, grp ORDER BY 1, 2 LIMIT 40 OFFSET 10",
       true});

  for (const char* column : columns) {
    out.push_back({std::string("SELECT ") + column + ", count(*) FROM m GROUP BY " + column + " ORDER BY " +
                       column + " DESC NULLS LAST",
                   true});
  }
  for (const char* column : numeric_columns) {
    out.push_back({std::string("SELECT grp, sum(") + column + "), avg(" + column + "), min(" + column +
                       "), max(" + column + ") FROM m GROUP BY grp ORDER BY grp",
                   true});
  }
  for (const char* keys : {"b, f", "d DESC, t", "grp, n DESC NULLS LAST", "iv, ts"}) {
    out.push_back({std::string("SELECT ") + "b, f, d, t, grp, n, iv, ts, tenant_id, id FROM m ORDER BY " +
                       keys + ", tenant_id, id LIMIT 33",
                   true});
  }

  // DISTINCT.
  for (const char* column : columns) {
    out.push_back({std::string("SELECT DISTINCT ") + column + " FROM m ORDER BY 1 DESC LIMIT 12", true});
  }
  for (const char* column : {"grp", "t", "b", "f", "n", "d", "ts", "iv", "b, grp"}) {
    out.push_back({std::string("SELECT DISTINCT ") + column + " FROM m", false});
  }
  out.push_back({"SELECT DISTINCT t FROM m ORDER BY t", true});
  out.push_back({"SELECT DISTINCT grp, b FROM m ORDER BY grp DESC, b", true});
  out.push_back({"SELECT DISTINCT n FROM m ORDER BY n DESC LIMIT 20 OFFSET 5", true});
  out.push_back({"SELECT DISTINCT d FROM m ORDER BY 1 NULLS FIRST LIMIT 10", true});
  return out;
}

struct Refusal {
  std::string sql;
  std::string sqlstate;
  std::string says;
};

const std::vector<Refusal> kRefused = {
    {"SELECT json_agg(DISTINCT i) FROM m", "0A000", "json_agg(DISTINCT i)"},
    {"SELECT string_agg(t, t) FROM m", "0A000", "with a literal separator"},
    {"SELECT json_agg(t) FROM m", "0A000", "cannot be combined"},
    {"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY i) FROM m", "0A000", "cannot be combined"},
    {"SELECT count(*) ^ 2 FROM m", "0A000", "from aggregates"},
    {"SELECT grp, count(*) FROM m GROUP BY grp ORDER BY grp + 1", "0A000", "not in the select list"},
    {"SELECT tenant_id, id FROM m ORDER BY (SELECT 1) + i, 1, 2", "0A000", "a subquery"},
    {"SELECT count(*) FROM m GROUP BY grp", "0A000", "not in the select list"},
    {"SELECT grp, count(*) FROM m GROUP BY grp HAVING sqrt(abs(sum(i))) > 5", "0A000", "HAVING"},
    {"SELECT id, rank() OVER (ORDER BY i) FROM m", "0A000", "window functions"},
    {"SELECT DISTINCT ON (grp) grp, i FROM m", "0A000", "DISTINCT ON"},
    {"SELECT tenant_id, id FROM m ORDER BY 1, 2 FETCH FIRST 3 ROWS WITH TIES", "0A000", "WITH TIES"},
    {"SELECT tenant_id, id FROM m ORDER BY 1, 2 LIMIT 2 + 3", "0A000", "LIMIT"},
    {"SELECT grp, count(*) FROM m GROUP BY ROLLUP (grp)", "0A000", "GROUPING SETS"},
    {"SELECT sum(iv) FROM m", "0A000", "sum of interval"},
    {"SELECT avg(i::real) FROM m", "0A000", "avg of real"},
    {"SELECT tenant_id, id FROM m ORDER BY 1 USING >", "0A000", "USING"},
    {"SELECT t COLLATE \"und-x-icu\" AS u, tenant_id, id FROM m ORDER BY 1, 2, 3", "0A000",
     "COLLATE \"und-x-icu\""},
};

// The three ways a client asks: the simple protocol (text), and Parse/Bind/Execute with every
// result column in text or in binary.
enum class Protocol { Simple, ExtendedText, ExtendedBinary };
constexpr Protocol kProtocols[] = {Protocol::Simple, Protocol::ExtendedText, Protocol::ExtendedBinary};

std::string protocol_name(Protocol protocol) {
  switch (protocol) {
    case Protocol::Simple: return "simple";
    case Protocol::ExtendedText: return "extended, text results";
    case Protocol::ExtendedBinary: return "extended, binary results";
  }
  return "?";
}

ResultFormat result_format(Protocol protocol) {
  return protocol == Protocol::ExtendedBinary ? ResultFormat::Binary : ResultFormat::Text;
}

PgResult run(PgConn& conn, const std::string& sql, Protocol protocol) {
  return protocol == Protocol::Simple ? conn.exec(sql) : conn.exec_extended(sql, result_format(protocol));
}

}  // namespace

TEST_SUITE("merged_reads") {
  TEST_CASE("merged reads across 3 shards return what one PostgreSQL database returns") {
    PROXY_ONLY();
    ShardedOptions options;
    options.tables_yaml += "    - name: m\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(options);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(kCreate));
    PgConn ref = reference_database(f, "swmerged_ref", kCreate);

    // 3000 rows, 200 tenants: one multi-row INSERT per shard's batch (a statement stays on one shard).
    constexpr int kRows = 3000;
    std::vector<std::vector<std::string>> per_shard(kShards);
    std::vector<int> rows_per_shard(kShards, 0);
    for (int i = 1; i <= kRows; ++i) {
      const int64_t tenant = (i * 7) % 200 - 60;
      const int shard = shard_of_key(tenant);
      per_shard[static_cast<size_t>(shard)].push_back(row_values(i, tenant));
      ++rows_per_shard[static_cast<size_t>(shard)];
    }
    for (int s = 0; s < kShards; ++s) {
      CHECK_MESSAGE(rows_per_shard[static_cast<size_t>(s)] > 500, "shard s" << s << " holds too few rows");
      const auto& rows = per_shard[static_cast<size_t>(s)];
      for (size_t at = 0; at < rows.size(); at += 250) {
        std::string sql = "INSERT INTO m (id, tenant_id, grp, i, big, n, f, t, b, ts, d, iv) VALUES ";
        for (size_t j = at; j < rows.size() && j < at + 250; ++j) sql += (j > at ? ", " : "") + rows[j];
        PgResult through = c.exec(sql);
        REQUIRE_MESSAGE(through.ok(), through.describe() << "\n" << f.log_tail());
        REQUIRE_OK(ref.exec(sql));
      }
    }
    for (int s = 0; s < kShards; ++s) {
      PgConn direct = f.setup.shard(s);
      CHECK(direct.value("SELECT count(*) FROM m") == std::to_string(rows_per_shard[static_cast<size_t>(s)]));
    }

    const std::vector<Query> queries = generated_queries();
    CHECK(queries.size() >= 150);
    for (const Protocol protocol : kProtocols) {
      int matched = 0;
      for (const Query& query : queries) {
        PgResult expected = run(ref, query.sql, protocol);
        PgResult actual = run(c, query.sql, protocol);
        const std::string diff = compare_results(expected, actual, query.ordered, result_format(protocol));
        CHECK_MESSAGE(diff.empty(), protocol_name(protocol) << ": " << query.sql << "\n  " << diff);
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
        if (diff.empty()) ++matched;
      }
      MESSAGE("merged reads (" << protocol_name(protocol) << "): " << matched << " of " << queries.size()
                               << " queries returned the reference's rows");
    }

    // Without ORDER BY, LIMIT takes any rows: as many as asked, each a row of the table.
    PgResult any = c.exec("SELECT tenant_id, id FROM m LIMIT 17");
    REQUIRE_OK(any);
    CHECK(any.rows() == 17);
    CHECK(any.command_tag() == "SELECT 17");
    for (int r = 0; r < any.rows(); ++r) {
      CHECK(ref.value("SELECT count(*) FROM m WHERE tenant_id = " + any.value(r, 0) +
                      " AND id = " + any.value(r, 1)) == "1");
    }

    for (const Protocol protocol : kProtocols) {
      for (const Refusal& refusal : kRefused) {
        PgResult r = run(c, refusal.sql, protocol);
        INFO(protocol_name(protocol) << ": " << refusal.sql << " -> " << r.describe());
        CHECK(r.sqlstate() == refusal.sqlstate);
        CHECK(r.error().find(refusal.says) != std::string::npos);
        CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
        CHECK(run(ref, refusal.sql, protocol).ok());  // PostgreSQL itself runs it: the refusal is shardwire's
      }
    }
    // A LIMIT parameter is the Bind's value (tests/integration/sql_forms/30_limits.sql has more).
    PgResult extended = c.exec_params("SELECT tenant_id, id FROM m ORDER BY 1, 2 LIMIT $1", {"3"});
    REQUIRE_OK(extended);
    CHECK(extended.rows() == 3);
    PgResult after = c.exec("SELECT count(*) FROM m");
    REQUIRE_OK(after);
    CHECK(after.value() == std::to_string(kRows));
  }
}
