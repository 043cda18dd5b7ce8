// SQL forms through shardwire on 3 shards against the same statements in one plain PostgreSQL
// database (in the spirit of sqllogictest): the files in tests/integration/sql_forms/ are run line
// by line on both, and every query must give the reference's result (rows, column names, command
// tag), every expected error the same SQLSTATE on both: in the simple protocol and in the extended
// protocol with text and with binary results (compared byte for byte).
//
// A line is `<header>: <sql>` (one statement on one line); `--` starts a comment line. Headers:
//   statement                 runs on both, must succeed on both (simple protocol)
//   query [rowsort]           compared in each protocol; rowsort compares the rows as a multiset
//   error <SQLSTATE>          must fail on both with that SQLSTATE, in each protocol
//   refused <SQLSTATE>        a form shardwire refuses rather than answer differently: the
//                             reference runs it, shardwire fails with that SQLSTATE and a message
//                             saying what to write instead (" instead", "; ..." or ": add ...")
// and the options, after the first word:
//   once                      the simple protocol only (a statement in a transaction, an error
//                             that aborts one)
//   params(<v>, <v>, ...)     $1, $2, ... in the extended protocol (text, NULL for NULL); the
//                             simple protocol gets the values written into the text
// Sharded tables: sf_* below, each with key tenant_id (bigint) except sf_small (k integer).
#include "it_test.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/reference_compare.h"
#include "harness/sharded_fixture.h"

using namespace it;

namespace {

const char* const kTables =
    "    - name: sf_keys\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_small\n      key: k\n      type: integer\n"
    "    - name: sf_agg\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_dates\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_conflict\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_forms\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_merged\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_merged_tags\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_writes\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_moves\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_move_forms\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_move_src\n      key: tenant_id\n      type: bigint\n"

    "    - name: sf_blocks\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_exprs\n      key: tenant_id\n      type: bigint\n"
    "    - name: sf_dsums\n      key: tenant_id\n      type: bigint\n";

enum class Protocol { Simple, ExtendedText, ExtendedBinary };
constexpr Protocol kProtocols[] = {Protocol::Simple, Protocol::ExtendedText, Protocol::ExtendedBinary};

const char* protocol_name(Protocol protocol) {
  switch (protocol) {
    case Protocol::Simple: return "simple";
    case Protocol::ExtendedText: return "extended, text results";
    case Protocol::ExtendedBinary: return "extended, binary results";
  }
  return "?";
}

ResultFormat format_of(Protocol protocol) {
  return protocol == Protocol::ExtendedBinary ? ResultFormat::Binary : ResultFormat::Text;
}

struct Line {
  std::string where;  // file:line
  std::string kind;   // statement, query, error
  std::string sqlstate;
  bool rowsort = false;
  bool once = false;
  bool has_params = false;
  std::vector<std::optional<std::string>> params;
  std::string sql;
};

std::string trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return text.substr(i);
}

std::vector<std::optional<std::string>> parse_params(const std::string& list) {
  std::vector<std::optional<std::string>> out;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = trim(list.substr(at, comma - at));
    if (item == "NULL") {
      out.emplace_back(std::nullopt);
    } else {
      out.emplace_back(item);
    }
    at = comma + 1;
  }
  return out;
}

std::vector<Line> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<Line> out;
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    text = trim(text);
    if (text.empty() || text.rfind("--", 0) == 0) continue;
    const size_t colon = text.find(": ");
    if (colon == std::string::npos) throw std::runtime_error(path.string() + ":" + std::to_string(number));
    Line line;
    line.where = path.filename().string() + ":" + std::to_string(number);
    line.sql = trim(text.substr(colon + 2));
    std::string header = text.substr(0, colon);
    if (size_t open = header.find("params("); open != std::string::npos) {
      const size_t close = header.find(')', open);
      line.params = parse_params(header.substr(open + 7, close - open - 7));
      line.has_params = true;
      header.erase(open, close - open + 1);
    }
    std::istringstream words(header);
    words >> line.kind;
    for (std::string word; words >> word;) {
      if (word == "rowsort") {
        line.rowsort = true;
      } else if (word == "once") {
        line.once = true;
      } else if ((line.kind == "error" || line.kind == "refused") && line.sqlstate.empty()) {
        line.sqlstate = word;
      } else {
        throw std::runtime_error(line.where + ": unknown option " + word);
      }
    }
    out.push_back(std::move(line));
  }
  return out;
}

// The values in place of $n, for the simple protocol (highest number first: $1 is in $10).
std::string with_values(std::string sql, const std::vector<std::optional<std::string>>& params) {
  for (size_t n = params.size(); n >= 1; --n) {
    const std::string name = '$' + std::to_string(n);
    const std::string value = params[n - 1] ? *params[n - 1] : "NULL";
    for (size_t at = sql.find(name); at != std::string::npos; at = sql.find(name, at + value.size()))
      sql.replace(at, name.size(), value);
  }
  return sql;
}

PgResult run(PgConn& conn, const Line& line, Protocol protocol) {
  if (protocol == Protocol::Simple)
    return conn.exec(line.has_params ? with_values(line.sql, line.params) : line.sql);
  if (!line.has_params) return conn.exec_extended(line.sql, format_of(protocol));
  if (protocol == Protocol::ExtendedText) return conn.exec_params(line.sql, line.params);
  std::vector<const char*> values;
  for (const auto& p : line.params) values.push_back(p ? p->c_str() : nullptr);
  if (!PQsendQueryParams(conn.get(), line.sql.c_str(), static_cast<int>(values.size()), nullptr,
                         values.data(), nullptr, nullptr, 1))
    return PgResult::failure("PQsendQueryParams");
  return conn.wait_result();
}

// Runs one file on both connections; returns the lines checked.
int run_file(const std::filesystem::path& path, PgConn& proxy, PgConn& ref) {
  int checked = 0;
  for (const Line& line : read_lines(path)) {
    INFO(line.where << ": " << line.sql);
    if (line.kind == "statement") {
      PgResult expected = run(ref, line, Protocol::Simple);
      PgResult actual = run(proxy, line, Protocol::Simple);
      CHECK_MESSAGE(expected.ok(), "reference: " << expected.describe());
      CHECK_MESSAGE(actual.ok(), "shardwire: " << actual.describe());
      ++checked;
      continue;
    }
    REQUIRE_MESSAGE((line.kind == "query" || line.kind == "error" || line.kind == "refused"),
                    "unknown line kind " << line.kind);
    for (const Protocol protocol : kProtocols) {
      if (line.once && protocol != Protocol::Simple) break;
      INFO(protocol_name(protocol));
      PgResult expected = run(ref, line, protocol);
      PgResult actual = run(proxy, line, protocol);
      if (line.kind == "error") {
        CHECK_MESSAGE(expected.sqlstate() == line.sqlstate, "reference: " << expected.describe());
        CHECK_MESSAGE(actual.sqlstate() == line.sqlstate, "shardwire: " << actual.describe());
      } else if (line.kind == "refused") {
        CHECK_MESSAGE(expected.ok(), "reference: " << expected.describe());
        CHECK_MESSAGE(actual.sqlstate() == line.sqlstate, "shardwire: " << actual.describe());
        const std::string message = actual.error();
        CHECK_MESSAGE(
            (message.find(" instead") != std::string::npos || message.find("; ") != std::string::npos ||
             message.find(": add ") != std::string::npos),
            "no fix in: " << message);
      } else {
        const std::string diff = compare_results(expected, actual, !line.rowsort, format_of(protocol));
        CHECK_MESSAGE(diff.empty(), diff);
      }
      CHECK(PQtransactionStatus(proxy.get()) == PQtransactionStatus(ref.get()));
      ++checked;
    }
  }
  return checked;
}

// SHARDWIRE_SQL_FORMS=<text>: only the files whose name contains it (a file that reads tables an
// earlier file made needs that file too).
bool selected(const std::filesystem::path& file) {
  const char* only = std::getenv("SHARDWIRE_SQL_FORMS");
  return only == nullptr || *only == '\0' || file.filename().string().find(only) != std::string::npos;
}

}  // namespace

TEST_SUITE("sql_forms") {
  TEST_CASE("SQL forms give through 3 shards what one PostgreSQL gives, in every protocol") {
    PROXY_ONLY();
    ShardedOptions options;
    options.tables_yaml += kTables;
    // Small enough for 95_count_distinct.sql to pass it (54000), large enough for its other reads.
    options.proxy.extra_yaml += "fanout:\n  max_distinct_values: 60\n";
    ShardedFixture f(options);
    PgConn proxy = f.client();
    PgConn ref = reference_database(f, "swsqlforms_ref", "SELECT 1");
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(SHARDWIRE_SOURCE_DIR) +
                                                                 "/tests/integration/sql_forms"))
      if (entry.path().extension() == ".sql" && selected(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 1);
    for (const auto& file : files) {
      const int checked = run_file(file, proxy, ref);
      MESSAGE(file.filename().string() << ": " << checked << " checks");
      for (PgConn* conn : {&proxy, &ref}) {  // the next file starts from a clean session
        conn->exec("ROLLBACK");
        REQUIRE_OK(conn->exec("RESET ALL"));
      }
    }
  }
}
