// The normalized statement cache: sql_lexer's keys, template substitution through analyze(),
// and its cost against a full parse (printed; the README quotes a Release build's numbers).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "parser/analyze.h"
#include "parser/json_tree.h"
#include "parser/sql_lexer.h"

using sw::parser::analyze;
using sw::parser::analyze_uncached;
using sw::parser::cache_stats;
using sw::parser::describe_facts;
using sw::parser::detail::normalize_sql;
using sw::parser::detail::NormalizedSql;

namespace {

std::string key_of(const std::string& sql) {
  NormalizedSql normalized;
  if (!normalize_sql(sql, normalized)) return "<refused>";
  std::string printable;
  for (char c : normalized.key) printable += c == '\x01' ? std::string("#") : std::string(1, c);
  return printable;
}

// Everything analyze() says about a string, as text (statement texts included).
std::string everything(const std::shared_ptr<const sw::parser::QueryFacts>& facts) {
  std::string out;
  for (const auto& s : facts->statements) {
    out += "[" + s.text + "]\n" + describe_facts(s);
    for (const auto& p : s.predicates) {
      for (const auto& v : p.values) out += '@' + std::to_string(v.location);
    }
    for (const auto& i : s.inserts) {
      for (const auto& row : i.rows) {
        for (const auto& v : row) out += '@' + std::to_string(v.location);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("sql_lexer: plain literals become markers, everything else stays") {
  CHECK(key_of("SELECT * FROM t WHERE a = 5 AND b = 'x''y' AND c = 1.5") ==
        "SELECT * FROM t WHERE a = #i AND b = #s AND c = #n");
  CHECK(key_of("SELECT 2147483647, 2147483648, 007, 1e3, .5") == "SELECT #i, #n, #i, #n, #n");
  // Not literals: parameters, identifiers, quoted identifiers, comments, dollar quotes, E''.
  CHECK(key_of("SELECT $1, a1, \"x 5 'y'\", $$ 7 $$, $q$ ' $q$, E'\\'5', x -- 5\n/* 'a' /* 9 */ */") ==
        "SELECT $1, a1, \"x 5 'y'\", $$ 7 $$, $q$ ' $q$, E'\\'5', x -- 5\n/* 'a' /* 9 */ */");
  CHECK(key_of("SELECT -5, x-1, B'101', X'1F', N'n'") == "SELECT -#i, x-#i, B'101', X'1F', N'n'");
  // Refused: forms the scanner does not model exactly.
  CHECK(key_of("SELECT U&'d\\0061t'") == "<refused>");
  CHECK(key_of("SELECT 'a'\n'b'") == "<refused>");
  CHECK(key_of("SELECT 'a' 'b'") == "<refused>");
  CHECK(key_of("SELECT 12abc") == "<refused>");
  CHECK(key_of("SELECT 1.2.3") == "<refused>");
  CHECK(key_of("SELECT 'open") == "<refused>");
  CHECK(key_of("SELECT /* open") == "<refused>");
  CHECK(key_of("SELECT $a$ open") == "<refused>");
  CHECK(key_of(std::string("SELECT '\x01' , \x01i")) == "<refused>");
}

TEST_CASE("a text that differs only in literals gets the cached facts with its own values") {
  const std::string first =
      "SELECT * FROM norm_t WHERE k = 5 AND s = 'a' AND n = -3; "
      "INSERT INTO norm_t (k, s) VALUES (1, 'x'), (-2, 'y''z') RETURNING k";
  const std::string second =
      "SELECT * FROM norm_t WHERE k = 123456 AND s = 'it''s long' AND n = -0; "
      "INSERT INTO norm_t (k, s) VALUES (77, ''), (-2147483647, '5') RETURNING k";
  REQUIRE(analyze(first).is_ok());
  const auto before = cache_stats();
  auto hit = analyze(second);
  REQUIRE(hit.is_ok());
  const auto after = cache_stats();
  CHECK(after.normalized_hits == before.normalized_hits + 1);
  CHECK(after.misses == before.misses);
  // Identical to a full parse of the second text: values, locations, statement texts.
  auto parsed = analyze_uncached(second);
  REQUIRE(parsed.is_ok());
  CHECK(everything(hit.value()) == everything(parsed.value()));
  CHECK(hit.value()->statements[0].predicates[1].values[0].text == "it's long");
  CHECK(hit.value()->statements[1].inserts[0].rows[1][0].text == "-2147483647");
  // An INSERT ... SELECT's constant select-list items too (a constant key routes the rows).
  REQUIRE(analyze("INSERT INTO norm_t (k, s) SELECT 4, s FROM norm_u").is_ok());
  auto select_hit = analyze("INSERT INTO norm_t (k, s) SELECT 17, s FROM norm_u");
  REQUIRE(select_hit.is_ok());
  CHECK(select_hit.value()->statements[0].inserts[0].select_values.at(0).text == "17");
}

TEST_CASE("texts the parser does not confirm are not templated") {
  // FETCH's count is not a constant node: both texts must be parsed.
  REQUIRE(analyze("FETCH 5 FROM norm_c").is_ok());
  const auto before = cache_stats();
  REQUIRE(analyze("FETCH 6 FROM norm_c").is_ok());
  CHECK(cache_stats().normalized_hits == before.normalized_hits);
  CHECK(cache_stats().misses == before.misses + 1);
  // A different literal kind is a different key.
  REQUIRE(analyze("SELECT * FROM norm_k WHERE a = 1").is_ok());
  auto text = analyze("SELECT * FROM norm_k WHERE a = 'x'");
  REQUIRE(text.is_ok());
  CHECK(text.value()->statements[0].predicates[0].values[0].kind == sw::parser::ValueKind::String);
  // A syntax error is still an error even when its shape resembles a cached text.
  REQUIRE(analyze("SELECT * FROM norm_e WHERE a = 1").is_ok());
  CHECK_FALSE(analyze("SELECT * FROM norm_e WHERE a = 1 1").is_ok());
}

TEST_CASE("a NUL byte inside a literal is refused even when a NUL-free twin is cached") {
  // Found by tests/fuzz/parser_facts_fuzz (corpus/parser_facts/regression_nul_in_cached_literal):
  // the NUL vanished into the literal's marker, so the cached twin's facts came back.
  const std::string with_nul("SELECT * FROM norm_z WHERE a = 21 AND b = 'x\0y'", 47);
  REQUIRE(with_nul.size() == 47);
  REQUIRE(analyze("SELECT * FROM norm_z WHERE a = 21 AND b = 'x'").is_ok());
  CHECK(key_of(with_nul) == "<refused>");
  auto result = analyze(with_nul);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().sqlstate == "22021");
}

TEST_CASE("json_tree: navigation and scalars") {
  sw::parser::detail::JsonTree tree;
  REQUIRE(tree.parse(R"({"a": {"B": {"x": -12, "s": "q\"\u00e9"}}, "l": [1, {}, true, null]})"));
  auto root = tree.root();
  CHECK(root["a"].node_type() == "B");
  CHECK(root["a"].body()["x"].integer() == -12);
  CHECK(root["a"].body()["s"].string() == "q\"\xc3\xa9");
  CHECK(root["l"].size() == 4);
  CHECK(root["missing"]["deeper"].string().empty());
  CHECK_FALSE(tree.parse(R"({"a": })"));
  CHECK_FALSE(tree.parse(R"({"a": 1} x)"));
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "[";
  for (int i = 0; i < 100000; ++i) deep += "]";
  CHECK(tree.parse(deep));  // iterative: no stack exhaustion
}

// The reshard workload's statements with random int8 keys, through the caches (exact and
// normalized) and through a fresh parse: every one analyzes, to the same key, in both ways.
TEST_CASE("workload statements with random int8 keys analyze through the caches") {
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 30000; ++i) {
    const int64_t key = static_cast<int64_t>(rng());
    const std::string note = 'c' + std::to_string(i % 7) + '-' + std::to_string(rng() % 100000);
    std::string sql;
    switch (i % 3) {
      case 0:
        sql = "INSERT INTO orders (tenant_id, note, qty) VALUES (" + std::to_string(key) + ", '" + note +
              "a', 0), (" + std::to_string(key) + ", '" + note + "b', 0)";
        break;
      case 1:
        sql = "UPDATE orders SET qty = qty + 1 WHERE tenant_id = " + std::to_string(key) + " AND note IN ('" +
              note + "a', '" + note + "b')";
        break;
      default:
        sql = "DELETE FROM orders WHERE tenant_id = " + std::to_string(key) + " AND note IN ('" + note +
              "a', '" + note + "b')";
    }
    CAPTURE(sql);
    auto cached = sw::parser::analyze(sql);
    REQUIRE_MESSAGE(cached.is_ok(), cached.status().sqlstate << " " << cached.status().message);
    auto fresh = sw::parser::analyze_uncached(sql);
    REQUIRE(fresh.is_ok());
    REQUIRE((*cached)->statements.size() == 1);
    CHECK((*cached)->statements.front().kind == (*fresh)->statements.front().kind);
  }
}

TEST_CASE("the same text right after a normalized hit gets the same facts without a second scan") {
  REQUIRE(analyze("SELECT * FROM norm_m WHERE k = 1 AND s = 'a'").is_ok());
  const std::string sql = "SELECT * FROM norm_m WHERE k = 22 AND s = 'bb'";
  const auto before = cache_stats();
  auto first = analyze(sql);
  REQUIRE(first.is_ok());
  auto second = analyze(sql);
  REQUIRE(second.is_ok());
  CHECK(cache_stats().normalized_hits == before.normalized_hits + 1);
  CHECK(cache_stats().exact_hits == before.exact_hits + 1);
  CHECK(second.value() == first.value());
  // Another text of the shape in between: the memo follows it.
  auto other = analyze("SELECT * FROM norm_m WHERE k = 333 AND s = 'ccc'");
  REQUIRE(other.is_ok());
  auto third = analyze(sql);
  REQUIRE(third.is_ok());
  CHECK(cache_stats().normalized_hits == before.normalized_hits + 3);
  CHECK(*third.value() == *analyze_uncached(sql).value());
  CHECK(third.value()->statements[0].predicates[0].values[0].text == "22");
}
