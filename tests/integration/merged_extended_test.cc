// Merged reads in the extended protocol (Parse/Bind/Describe/Execute, unnamed and prepared
// statements, text and binary parameters) against the same rows in one plain PostgreSQL
// database: ORDER BY (also of a column not selected)/LIMIT, aggregates, GROUP BY, DISTINCT and key
// lists across shards return the reference's rows and column names. Binary result columns are
// PostgreSQL's exact bytes (converted from the merge's text: also numeric, interval, arrays),
// json ones refused with 0A000; HAVING with parameters (text, binary, psycopg 3) is applied by the
// proxy with the Bind's values; an Execute row limit returns PostgreSQL's rows then its
// PortalSuspended (raw messages); a refused or failed merge leaves the connection usable.
#include "it_test.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/process.h"
#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreate =
    "CREATE TABLE e (id bigint NOT NULL, tenant_id bigint NOT NULL, grp integer, i integer, n numeric, t "
    "text, "
    "PRIMARY KEY (tenant_id, id))";

std::string row_values(int i, int64_t tenant) {
  return '(' + std::to_string(i) + ", " + std::to_string(tenant) + ", " +
         (i % 11 == 0 ? "NULL" : std::to_string(i % 6)) + ", " +
         (i % 13 == 0 ? "NULL" : std::to_string((i * 37) % 2001 - 1000)) + ", " +
         (i % 7 == 0 ? "NULL" : std::to_string((i * 7919) % 100000 - 50000) + "." + std::to_string(i % 100)) +
         ", " +
         (i % 9 == 0 ? "NULL" : '\'' + std::string(i % 2 ? "Ab" : "zz") + std::to_string(i % 40) + "'") + ")";
}

// Parse, Bind, Describe portal, Execute(max_rows), Sync written on the connection's own socket
// (libpq has no row limit); the answer's messages up to ReadyForQuery.
std::vector<wire::Message> execute_with_limit(PgConn& conn, const std::string& sql, uint32_t max_rows) {
  using std::string;
  RawSocket socket = RawSocket::borrow(PQsocket(conn.get()));
  string batch = wire::message('P', string(1, '\0') + sql + string(3, '\0'));
  batch += wire::message('B', string(8, '\0'));  // unnamed portal and statement, no parameters, text
  batch += wire::message('D', string("P\0", 2));
  batch += wire::message('E', string(1, '\0') + wire::be32(max_rows));
  batch += wire::message('S', "");
  std::vector<wire::Message> out;
  if (!socket.send_all(batch)) return out;
  string pending;
  while (out.empty() || out.back().type != 'Z') {
    const string got = socket.read_some(10s);
    if (got.empty()) break;
    pending += got;
    for (wire::Message& m : wire::parse_messages(pending, &pending)) out.push_back(std::move(m));
  }
  return out;
}

// The answer's message types ("12TDDsZ") and its DataRows.
std::string kinds(const std::vector<wire::Message>& messages) {
  std::string out;
  for (const wire::Message& m : messages) out.push_back(m.type);
  return out;
}
std::vector<std::string> data_rows(const std::vector<wire::Message>& messages) {
  std::vector<std::string> out;
  for (const wire::Message& m : messages) {
    if (m.type == 'D') out.push_back(m.body);
  }
  return out;
}

struct Query {
  std::string sql;
  std::vector<std::optional<std::string>> params;
  bool ordered = true;
};

}  // namespace

TEST_SUITE("merged_extended") {
  TEST_CASE("merged reads in the extended protocol return what one PostgreSQL database returns") {
    PROXY_ONLY();
    ShardedOptions options;
    options.tables_yaml += "    - name: e\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(options);
    PgConn c = f.client();
    REQUIRE_OK(c.exec(kCreate));
    PgConn ref = reference_database(f, "swext_ref", kCreate);
    std::vector<std::string> per_shard[kShards];
    for (int i = 1; i <= 900; ++i) {
      const int64_t tenant = (i * 7) % 150 - 40;
      per_shard[shard_of_key(tenant)].push_back(row_values(i, tenant));
    }
    for (const auto& rows : per_shard) {
      REQUIRE(rows.size() > 150);
      std::string sql = "INSERT INTO e (id, tenant_id, grp, i, n, t) VALUES ";
      for (size_t r = 0; r < rows.size(); ++r) sql += (r ? ", " : "") + rows[r];
      REQUIRE_OK(c.exec(sql));
      REQUIRE_OK(ref.exec(sql));
    }
    std::string keys;  // two tenants on each shard
    for (int s = 0; s < kShards; ++s) {
      int found = 0;
      for (int64_t tenant = -40; tenant < 110 && found < 2; ++tenant) {
        if (shard_of_key(tenant) != s) continue;
        keys += (keys.empty() ? "" : ", ") + std::to_string(tenant);
        ++found;
      }
    }
    const std::vector<Query> queries = {
        {"SELECT tenant_id, id, i FROM e WHERE i > $1 ORDER BY i DESC, tenant_id, id LIMIT 10", {"100"}},
        {"SELECT tenant_id, id, t FROM e WHERE t >= $1 ORDER BY t NULLS FIRST, 1, 2 LIMIT 25 OFFSET 5",
         {"Ab2"}},
        {"SELECT grp, count(*), sum(i), avg(n), min(t), max(t) FROM e WHERE i < $1 GROUP BY grp ORDER BY grp",
         {"500"}},
        {"SELECT count(*), count(i), avg(i), sum(n), bool_or(i > $1) FROM e WHERE t LIKE $2", {"900", "Ab%"}},
        {"SELECT DISTINCT grp FROM e WHERE n > $1::numeric ORDER BY 1 DESC NULLS LAST", {"0"}},
        {"SELECT t, count(*) AS c FROM e GROUP BY t ORDER BY c DESC, t NULLS FIRST LIMIT 5 OFFSET 2", {}},
        {"SELECT grp, avg(i) FROM e WHERE n < $1 GROUP BY grp", {"10000.5"}, false},
        {"SELECT tenant_id, id, i FROM e WHERE tenant_id IN (" + keys + ") AND i > $1 ORDER BY 1, 2", {"0"}},
        {"SELECT tenant_id, count(*) FROM e WHERE tenant_id = ANY('{" + keys + "}') GROUP BY 1 ORDER BY 2, 1",
         {}},
        {"SELECT max(n), min(i) FROM e WHERE t IS DISTINCT FROM $1", {std::nullopt}},
        {"SELECT tenant_id, id FROM e WHERE i > $1 ORDER BY n DESC NULLS LAST, tenant_id, id LIMIT 15",
         {"0"}},
        {"SELECT tenant_id, id FROM e WHERE i > $1 ORDER BY i * $2::int DESC, lower(t), 1, 2 LIMIT 12",
         {"0", "-3"}},
        {"SELECT grp, count(*), max(t) FROM e WHERE i > $1 GROUP BY grp HAVING count(*) > 60 ORDER BY grp",
         {"-500"}},
    };
    for (const Query& query : queries) {
      const std::string diff = compare_results(ref.exec_params(query.sql, query.params),
                                               c.exec_params(query.sql, query.params), query.ordered);
      CHECK_MESSAGE(diff.empty(), query.sql << "\n  " << diff << "\n" << f.log_tail(5));
      CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    }

    // A prepared statement (Parse and Describe first, then Bind/Execute by name), run twice.
    const std::string sorted = "SELECT tenant_id, id, i FROM e WHERE i BETWEEN $1 AND $2 ORDER BY i, 1, 2";
    REQUIRE_OK(c.prepare("merged_s", sorted));
    REQUIRE_OK(ref.prepare("merged_s", sorted));
    for (const auto& range : {std::vector<std::optional<std::string>>{"-100", "100"}, {"500", "700"}}) {
      const std::string diff =
          compare_results(ref.exec_prepared("merged_s", range), c.exec_prepared("merged_s", range), true);
      CHECK_MESSAGE(diff.empty(), sorted << "\n  " << diff);
    }
    // Binary parameters (int4 in binary) are passed to the shards as sent.
    PgResult binary_param = exec_params_typed(c, "SELECT count(*), sum(i) FROM e WHERE i > $1",
                                              {std::string("\0\0\0\x64", 4)}, {23}, {1});
    REQUIRE_OK(binary_param);
    CHECK(render_row(binary_param, 0) ==
          render_row(ref.exec("SELECT count(*), sum(i) FROM e WHERE i > 100"), 0));

    // HAVING with parameters, applied by the proxy with the Bind's values as PostgreSQL types
    // them from the comparison (count and sum of int4: int8, avg: numeric, max of text: text).
    // Thresholds are the reference's medians, so each HAVING keeps some groups and drops others.
    const std::string median_count = ref.exec(
                                            "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY c) FROM "
                                            "(SELECT count(*) c FROM e GROUP BY "
                                            "grp) s")
                                         .value();
    const std::string median_avg =
        ref.exec(
               "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY a)::numeric, 3) FROM (SELECT "
               "avg(n) a FROM e GROUP BY grp) s")
            .value();
    const std::string by_count =
        "SELECT grp, count(*), sum(i) FROM e GROUP BY grp HAVING count(*) > $1 ORDER BY grp";
    const int kept = ref.exec_params(by_count, {median_count}).rows();
    CHECK((kept >= 1 && kept < ref.exec("SELECT DISTINCT grp FROM e").rows()));
    const std::vector<Query> having_queries = {
        {by_count, {median_count}},
        {"SELECT grp, avg(n), max(t) FROM e GROUP BY grp HAVING avg(n) >= $1 OR max(t) = $2 ORDER BY 1",
         {median_avg, "zz8"}},
        {"SELECT grp, sum(i) FROM e WHERE i > $1 GROUP BY grp HAVING $2 < sum(i) AND NOT grp = $3 ORDER BY 1",
         {"-500", "1000", "2"}},
        {"SELECT grp, count(*) FROM e GROUP BY grp HAVING count(*) > $1 ORDER BY 1", {std::nullopt}},
        {"SELECT count(*), max(t) FROM e WHERE i < $2 HAVING max(t) <> $1", {"zz8", "0"}},
    };
    for (const Query& query : having_queries) {
      const std::string diff = compare_results(ref.exec_params(query.sql, query.params),
                                               c.exec_params(query.sql, query.params), query.ordered);
      CHECK_MESSAGE(diff.empty(), query.sql << "\n  " << diff << "\n" << f.log_tail(5));
    }
    // Binary parameters: int8 with no Parse type (read as the compared count's int8), int4 declared.
    const long long threshold = std::stoll(median_count);
    for (const auto& typed : {std::make_pair(be_int8(threshold), 0u),
                              std::make_pair(be_int4(static_cast<int>(threshold)), 23u)}) {
      PgResult want = exec_params_typed(ref, by_count, {typed.first}, {typed.second}, {1});
      PgResult got = exec_params_typed(c, by_count, {typed.first}, {typed.second}, {1});
      REQUIRE_OK(want);
      const std::string diff = compare_results(want, got, true);
      CHECK_MESSAGE(diff.empty(), "binary parameter of type " << typed.second << "\n  " << diff);
    }

    // The same through psycopg 3's server-side binding (%s, %t, %b; its own parameter types).
    const std::string script =
        std::string(SHARDWIRE_SOURCE_DIR) + "/tests/drivers/python/merged_having_check.py";
    const std::string url =
        "postgresql://app:secret@127.0.0.1:" + std::to_string(f.proxy->port()) + "/app?sslmode=disable";
    CommandResult driver =
        run_command({"/usr/bin/python3", script, url, f.setup.cluster().conninfo(PQdb(ref.get()))}, "",
                    std::chrono::seconds(120));
    INFO("psycopg: " << driver.describe());
    CHECK(driver.exit_code == 0);
    CHECK(driver.out ==
          "count_s=True\navg_s=True\ntext_s=True\ncount_t=True\navg_t=True\ntext_t=True\ncount_b=True\n"
          "avg_b=True\ntext_b=True\nprepared=[True, True, True]\ndone\n");

    // Binary result columns: the merged text values converted to exactly PostgreSQL's bytes.
    const char* const binary_queries[] = {
        "SELECT i, tenant_id, t, i::int2 AS small, (n::float8), (i::float4 / 3), i > 0, ('2024-01-01'::date "
        "+ i), "
        "('2024-01-01 10:00:00+02'::timestamptz + i * interval '1 minute'), "
        "('2024-01-01 10:00:00'::timestamp - i * interval '1 hour'), ('10:00'::time + i * interval '1 "
        "second'), "
        "md5(t)::uuid, decode(md5(t), 'hex'), t::varchar, t::char(6), id::oid FROM e ORDER BY i NULLS FIRST, "
        "id "
        "LIMIT 40",
        "SELECT grp, count(*), max(t), min(i), sum(i) FROM e GROUP BY grp ORDER BY grp",
        // numeric (zero with a scale, tiny, long, negative, NaN, ±Infinity), interval (months,
        // days, negative microseconds) and arrays (NULLs, quoting, empty, 2-D, lower bounds).
        "SELECT id, i, n, n * 1e-20, n * 0, '-0.000'::numeric, -n / 1000, CASE i % 5 WHEN 0 THEN "
        "'NaN'::numeric "
        "WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity' WHEN 3 THEN 123456789.987654321 ELSE 1e-20 END, "
        "i * interval '1 mon 2 days -3 microseconds', make_interval(years => i % 3, days => -i, secs => i / "
        "7.0), "
        "ARRAY[i, NULL, grp], ARRAY[t, 'a b', 'say \"hi\" \\', 'NULL', '', '{x,y}'], '{}'::int[], "
        "ARRAY[[i, 1], [2, grp]], ARRAY[n, 0.000, 'NaN'], ARRAY[interval '1 day', i * interval '-1 sec'], "
        "('[0:1]={' || i || ',5}')::int[], ('[-3:-3][2:3]={{' || i || ',NULL}}')::int8[], ARRAY[i > 0, "
        "NULL], "
        "ARRAY[md5(t)::uuid], ARRAY[decode(md5(t), 'hex'), '\\x'], ARRAY['2024-01-01'::date + i], "
        "ARRAY[t::char(6)], ARRAY[t::varchar], ARRAY[i::float4 / 3, 'NaN'], ARRAY[n::float8], "
        "ARRAY[id::oid], "
        "ARRAY['2024-01-01 10:00:00+02'::timestamptz + i * interval '1 minute'], "
        "ARRAY['2024-01-01 10:00:00'::timestamp], ARRAY['10:00'::time], ARRAY[i::int2] FROM e "
        "WHERE id % 3 <> 0 ORDER BY id LIMIT 60",
        "SELECT grp, sum(n), avg(n), min(n), max(n), avg(i) FROM e GROUP BY grp ORDER BY grp"};
    for (const char* sql : binary_queries) {
      using Held = std::unique_ptr<PGresult, decltype(&PQclear)>;
      Held want(PQexecParams(ref.get(), sql, 0, nullptr, nullptr, nullptr, nullptr, 1), &PQclear);
      Held got(PQexecParams(c.get(), sql, 0, nullptr, nullptr, nullptr, nullptr, 1), &PQclear);
      REQUIRE_MESSAGE(PQresultStatus(want.get()) == PGRES_TUPLES_OK,
                      std::string(PQresultErrorMessage(want.get())));
      REQUIRE_MESSAGE(PQresultStatus(got.get()) == PGRES_TUPLES_OK, PQresultErrorMessage(got.get())
                                                                        << "\n"
                                                                        << f.log_tail(5));
      REQUIRE(PQntuples(got.get()) == PQntuples(want.get()));
      REQUIRE(PQnfields(got.get()) == PQnfields(want.get()));
      CHECK(PQntuples(want.get()) > 5);
      for (int r = 0; r < PQntuples(want.get()); ++r) {
        for (int col = 0; col < PQnfields(want.get()); ++col) {
          CHECK(PQfformat(got.get(), col) == 1);
          const std::string a(PQgetvalue(want.get(), r, col),
                              static_cast<size_t>(PQgetlength(want.get(), r, col)));
          const std::string b(PQgetvalue(got.get(), r, col),
                              static_cast<size_t>(PQgetlength(got.get(), r, col)));
          CHECK_MESSAGE(a == b, std::string(sql) << "\n  row " << r << " column " << col + 1 << ": want "
                                                 << hex_of(a) << ", got " << hex_of(b));
          CHECK(PQgetisnull(want.get(), r, col) == PQgetisnull(got.get(), r, col));
        }
      }
    }
    // A type without a binary conversion here (json): refused before any row, and the
    // connection goes on.
    PgResult binary(PQexecParams(c.get(), "SELECT i, to_json(t) FROM e ORDER BY i LIMIT 3", 0, nullptr,
                                 nullptr, nullptr, nullptr, 1));
    CHECK(binary.sqlstate() == "0A000");
    CHECK(binary.error().find("column 2 (type OID 114)") != std::string::npos);
    CHECK(PQtransactionStatus(c.get()) == PQTRANS_IDLE);
    CHECK(c.exec_params("SELECT count(*) FROM e WHERE id > $1", {"0"}).value() == "900");
    // Execute with a row limit (asyncpg's fetchrow sends Execute(1)): at most that many rows, then
    // PortalSuspended; fewer rows left: CommandComplete. As PostgreSQL answers, row for row.
    const std::pair<const char*, uint32_t> limited[] = {
        {"SELECT tenant_id, id, i FROM e ORDER BY i DESC NULLS LAST, tenant_id, id", 5},
        {"SELECT tenant_id, id, t FROM e ORDER BY lower(t), id LIMIT 30", 1},
        {"SELECT grp, count(*), avg(n) FROM e GROUP BY grp ORDER BY grp", 100},
        {"SELECT grp, count(*) FROM e GROUP BY grp ORDER BY grp", 7},  // exactly all 7 groups: suspended
    };
    for (const auto& entry : limited) {
      const auto& sql = entry.first;  // not a structured binding: doctest's INFO captures it
      const auto max_rows = entry.second;
      const auto want = execute_with_limit(ref, sql, max_rows);
      const auto got = execute_with_limit(c, sql, max_rows);
      INFO(sql << " Execute(" << max_rows << "): want " << kinds(want) << ", got " << kinds(got));
      CHECK(kinds(got) == kinds(want));
      CHECK(data_rows(got) == data_rows(want));
      CHECK(c.exec_params("SELECT count(*) FROM e WHERE id > $1", {"0"}).value() == "900");
    }
    CHECK(kinds(execute_with_limit(c, "SELECT tenant_id, id FROM e ORDER BY 1, 2", 5)) == "12TDDDDDsZ");
    CHECK(kinds(execute_with_limit(c, "SELECT grp, count(*) FROM e GROUP BY grp ORDER BY grp", 100)) ==
          "12TDDDDDDDCZ");
    // A plain concatenation (no ORDER BY) with a row limit runs through the merge too.
    const auto any = execute_with_limit(c, "SELECT id FROM e WHERE id <= 30", 4);
    CHECK(kinds(any) == "12TDDDDsZ");
    CHECK(c.exec("SELECT count(*) FROM e").value() == "900");

    // A shard's error (division by zero) fails the statement once.
    PgResult failed = c.exec_params("SELECT sum(1 / (i - i + $1::int)) FROM e", {"0"});
    INFO(failed.describe());
    CHECK(failed.sqlstate() == "22012");
    CHECK(c.exec_params("SELECT count(*) FROM e ORDER BY 1", {}).value() == "900");
  }
}
