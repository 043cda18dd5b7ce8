// COPY ... TO STDOUT of a sharded table, and of a query over one without a key, against the same
// rows in one plain PostgreSQL database: 600 rows (NULLs, tabs, commas, quotes, newlines,
// non-ASCII text, bytea, negative numerics) on 3 shards through shardwire and in a reference
// database. The client must get one copy: one CopyOutResponse, every row once (text, CSV, CSV
// with one HEADER line, binary with one header and one trailer), one CopyDone, `COPY n` with
// the total. COPY to or from a file on every shard stays refused.
#include "it_test.h"

#include <algorithm>
#include <sstream>

#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kCreate =
    "CREATE TABLE c (id bigint NOT NULL, tenant_id bigint NOT NULL, t text, n numeric, b bytea, "
    "ts timestamptz, PRIMARY KEY (tenant_id, id))";

std::string row_values(int i, int64_t tenant) {
  const char* texts[] = {"plain",       "tab\there",   "comma, \"quoted\"",
                         "line\nbreak", "back\\slash", "\xc3\xa9t\xc3\xa9"};
  std::string text = texts[i % 6];
  std::string quoted;
  for (char ch : text) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
  std::ostringstream out;
  out << "(" << i << ", " << tenant << ", " << (i % 10 == 0 ? "NULL" : "'" + quoted + std::to_string(i) + "'")
      << ", " << (i % 7 == 0 ? "NULL" : std::to_string((i * 7919) % 20000 - 10000) + ".5") << ", "
      << (i % 9 == 0 ? "NULL" : "'\\x" + std::string(i % 3 ? "00ff" : "") + "41'") << ", "
      << "'2024-01-0" << 1 + i % 9 << " 10:00:00+0" << i % 5 << "')";
  return out.str();
}

struct Copy {
  std::string error;                // "" on success
  std::vector<std::string> chunks;  // CopyData payloads, as received
  std::string tag;
};

Copy copy_out(PgConn& conn, const std::string& sql) {
  Copy out;
  PGresult* started = PQexec(conn.get(), sql.c_str());
  if (PQresultStatus(started) != PGRES_COPY_OUT) {
    out.error = std::string(PQresultErrorField(started, PG_DIAG_SQLSTATE)
                                ? PQresultErrorField(started, PG_DIAG_SQLSTATE)
                                : "") +
                " " + PQresultErrorMessage(started);
    PQclear(started);
    while (PGresult* more = PQgetResult(conn.get())) PQclear(more);
    return out;
  }
  PQclear(started);
  char* buffer = nullptr;
  int n = 0;
  while ((n = PQgetCopyData(conn.get(), &buffer, 0)) > 0) {
    out.chunks.emplace_back(buffer, static_cast<size_t>(n));
    PQfreemem(buffer);
  }
  if (n == -2) out.error = PQerrorMessage(conn.get());
  while (PGresult* result = PQgetResult(conn.get())) {
    if (PQresultStatus(result) != PGRES_COMMAND_OK) out.error += PQresultErrorMessage(result);
    out.tag = PQcmdStatus(result);
    PQclear(result);
  }
  return out;
}

uint32_t be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// A binary copy stream as "header" then its tuples (sorted) then "trailer"; "bad: ..." when the
// stream is not one header, whole tuples and one trailer at its very end.
std::vector<std::string> binary_parts(const Copy& copy) {
  std::string s;
  for (const std::string& chunk : copy.chunks) s += chunk;
  if (s.size() < 21 || s.compare(0, 11, std::string("PGCOPY\n\377\r\n\0", 11)) != 0) return {"bad: header"};
  std::vector<std::string> tuples;
  size_t at = 19 + be32(s, 15);
  for (;;) {
    if (at + 2 > s.size()) return {"bad: cut short"};
    const int16_t fields = static_cast<int16_t>((static_cast<unsigned char>(s[at]) << 8) |
                                                static_cast<unsigned char>(s[at + 1]));
    if (fields == -1) {
      if (at + 2 != s.size()) return {"bad: bytes after the trailer"};
      break;
    }
    const size_t begin = at;
    at += 2;
    for (int f = 0; f < fields; ++f) {
      if (at + 4 > s.size()) return {"bad: cut short"};
      const auto length = static_cast<int32_t>(be32(s, at));
      at += 4 + (length > 0 ? static_cast<size_t>(length) : 0);
    }
    if (at > s.size()) return {"bad: cut short"};
    tuples.push_back(s.substr(begin, at - begin));
  }
  std::sort(tuples.begin(), tuples.end());
  tuples.insert(tuples.begin(), s.substr(0, 19));
  return tuples;
}

// Text/CSV: the header line (when `header`) then every row, sorted.
std::vector<std::string> text_rows(const Copy& copy, bool header) {
  std::vector<std::string> rows = copy.chunks;
  std::sort(rows.begin() + (header && !rows.empty() ? 1 : 0), rows.end());
  return rows;
}

}  // namespace

TEST_SUITE("merged_copy") {
  TEST_CASE("COPY TO STDOUT of a sharded table or keyless query is one copy of every shard's rows") {
    PROXY_ONLY();
    ShardedOptions options;
    options.tables_yaml += "    - name: c\n      key: tenant_id\n      type: bigint\n";
    ShardedFixture f(options);
    PgConn client = f.client();
    REQUIRE_OK(client.exec(kCreate));
    PgConn ref = reference_database(f, "swcopy_ref", kCreate);
    std::vector<std::string> per_shard[kShards];
    for (int i = 1; i <= 600; ++i) {
      const int64_t tenant = (i * 13) % 90 - 30;
      per_shard[shard_of_key(tenant)].push_back(row_values(i, tenant));
    }
    for (const auto& rows : per_shard) {
      REQUIRE(rows.size() > 100);
      std::string sql = "INSERT INTO c (id, tenant_id, t, n, b, ts) VALUES ";
      for (size_t r = 0; r < rows.size(); ++r) sql += (r ? ", " : "") + rows[r];
      REQUIRE_OK(client.exec(sql));
      REQUIRE_OK(ref.exec(sql));
    }
    for (int s = 0; s < kShards; ++s) {
      PgConn direct = f.setup.shard(s);
      CHECK(direct.value("SELECT count(*) FROM c") == std::to_string(per_shard[s].size()));
    }

    struct Case {
      std::string sql;
      bool header;
      bool binary;
    };
    const int64_t one_tenant = 7;
    const std::vector<Case> cases = {
        {"COPY c TO STDOUT", false, false},
        {"COPY c (tenant_id, t, b) TO STDOUT", false, false},
        {"COPY c TO STDOUT (FORMAT csv)", false, false},
        {"COPY c TO STDOUT (FORMAT csv, HEADER)", true, false},
        {"COPY c (t, n) TO STDOUT CSV HEADER", true, false},
        {"COPY (SELECT tenant_id, id, t FROM c WHERE n > 0) TO STDOUT (FORMAT csv, HEADER true)", true,
         false},
        {"COPY (SELECT * FROM c WHERE false) TO STDOUT (FORMAT csv, HEADER)", true, false},
        {"COPY (SELECT id, upper(t) FROM c WHERE t IS NOT NULL) TO STDOUT", false, false},
        {"COPY c TO STDOUT (FORMAT binary)", false, true},
        {"COPY (SELECT id, n, b, ts FROM c WHERE id % 2 = 0) TO STDOUT (FORMAT binary)", false, true},
        {"COPY (SELECT * FROM c WHERE false) TO STDOUT (FORMAT binary)", false, true},
        {"COPY (SELECT id, t FROM c WHERE tenant_id = " + std::to_string(one_tenant) + ") TO STDOUT", false,
         false},
    };
    for (const Case& test : cases) {
      INFO(test.sql);
      Copy expected = copy_out(ref, test.sql);
      Copy actual = copy_out(client, test.sql);
      REQUIRE_MESSAGE(expected.error.empty(), expected.error);
      REQUIRE_MESSAGE(actual.error.empty(), actual.error << "\n" << f.log_tail(10));
      CHECK(actual.tag == expected.tag);
      if (test.binary) {
        CHECK(binary_parts(actual) == binary_parts(expected));
      } else {
        CHECK(text_rows(actual, test.header) == text_rows(expected, test.header));
      }
      CHECK(PQtransactionStatus(client.get()) == PQTRANS_IDLE);
    }
    CHECK(copy_out(client, "COPY c TO STDOUT").tag == "COPY 600");

    Copy to_file = copy_out(client, "COPY c TO '/tmp/shardwire_copy_test'");
    CHECK(to_file.error.find("0A000") == 0);
    CHECK(to_file.error.find("TO STDOUT") != std::string::npos);
    Copy sorted = copy_out(client, "COPY (SELECT * FROM c ORDER BY id) TO STDOUT");
    CHECK(sorted.error.find("0A000") == 0);
    PgResult from = client.exec("COPY c FROM '/tmp/shardwire_copy_test'");
    CHECK(from.sqlstate() == "0A000");
    CHECK(from.describe().find("FROM STDIN") != std::string::npos);
    CHECK(client.value("SELECT count(*) FROM c") == "600");
  }
}
