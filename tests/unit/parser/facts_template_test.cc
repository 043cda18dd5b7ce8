// The normalized cache's per-text overlay (facts_template.cc): a hit with literals of other
// lengths and values gives exactly the facts a fresh parse gives, field by field, whether its
// instance is a copy (a cold template), reused after its holder let go, or one of many held at once.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "parser/analyze.h"
#include "parser/facts_template.h"

using sw::parser::analyze;
using sw::parser::analyze_uncached;
using sw::parser::cache_stats;
using sw::parser::QueryFacts;

namespace {

// Literal values per marker: `#i` an int4, `#n` another number, `#s` the inside of a '...'
// string, `#a` the inside of an array literal '{...}'. Lengths vary so that an instance's buffers
// must grow and shrink; more of each than a template keeps instances, so no hit repeats the
// text that made the template.
const std::vector<std::vector<std::string>> kValues = {
    {"7", "2147483647", "0", "42", "123456", "9", "31", "100000", "5", "77", "1000000000", "12"},
    {"1.5", "12345678901234", "0.000001", "3e10", "99999999999", "2.25", "1e-3", "4294967296", "0.5", "7.125",
     "2147483648", "1.0"},
    {"", "a", "it''s long enough to leave the small-string buffer", "\xc3\xbcn\xc3\xaf", "{1,2}", "x''",
     "open-5", "a much longer value again, longer than the first long one was", "b", "q", "''''", "zz"},
    {"{1,2,3}", "{}", "{42}", "{7,8}", "{100000,200000,300000,400000}", "{1}", "{5,6}", "{9}", "{3}", "{4,4}",
     "{}", "{11,12}"},
};

std::string fill(const std::string& pattern, int seed) {
  std::string out;
  int occurrence = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '#' && i + 1 < pattern.size()) {
      const size_t kind = std::string("insa").find(pattern[i + 1]);
      if (kind != std::string::npos) {
        const auto& values = kValues[kind];
        out += values[static_cast<size_t>(seed + occurrence++) % values.size()];
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

struct Case {
  std::string pattern;
  bool templated = true;  // its literals are all constants of the tree: a normalized hit
};

const std::vector<Case> kCorpus = {
    {"SELECT id, total, note FROM ov_orders WHERE tenant_id = #i AND status = '#s'"},
    {"SELECT * FROM ov_orders WHERE tenant_id IN (#i, #i, #i) AND note <> '#s'"},
    {"SELECT * FROM ov_orders WHERE tenant_id = ANY(ARRAY[#i, #i]) AND total > #n"},
    {"SELECT * FROM ov_orders WHERE tenant_id = ANY('#a') AND note = '#s'"},
    {"SELECT * FROM ov_orders WHERE tenant_id = ANY('#a'::bigint[])"},
    {"INSERT INTO ov_orders (tenant_id, note, qty) VALUES (#i, '#s', #n), (#i, '#s', -#i), (-#n, E'x', #i) "
     "ON CONFLICT (tenant_id) DO UPDATE SET qty = #i RETURNING id"},
    {"UPDATE ov_orders SET note = '#s', qty = qty + #i WHERE tenant_id = #i"},
    {"DELETE FROM ov_orders WHERE tenant_id = #i AND note IN ('#s', '#s')"},
    {"COPY (SELECT * FROM ov_orders WHERE tenant_id = #i) TO STDOUT WITH (FORMAT csv, HEADER)"},
    {"COPY ov_orders (tenant_id, note) FROM STDIN WITH (FORMAT csv, DELIMITER '#s')", false},
    {"SELECT tenant_id, count(*), sum(total), avg(total) FROM ov_orders WHERE status = '#s' "
     "GROUP BY tenant_id ORDER BY 2 DESC LIMIT #i OFFSET #i"},
    {"SELECT note, total AS t FROM ov_orders WHERE total > #n ORDER BY total DESC NULLS LAST, 1 LIMIT #i"},
    {"SELECT DISTINCT status FROM ov_orders WHERE tenant_id IN (#i, #i) ORDER BY status"},
    // Collation sources hold names only (no literal text): cached.
    {"SELECT note COLLATE \"C\" AS n, max(status COLLATE \"POSIX\"), lower(note) FROM ov_orders WHERE qty > "
     "#i "
     "AND note <> '#s' GROUP BY 1, 3 ORDER BY 1 LIMIT #i"},
    {"SELECT id FROM ov_orders WHERE total > #n ORDER BY note COLLATE \"C\" DESC LIMIT #i", false},
    {"SELECT max(total) FROM ov_orders o JOIN ov_lines l ON l.tenant_id = o.tenant_id "
     "WHERE o.tenant_id = #i AND l.sku = '#s' HAVING count(*) > #i",
     false},
    {"SELECT status, count(*), sum(total) FROM ov_orders WHERE note <> '#s' GROUP BY status "
     "HAVING count(*) > #i AND (sum(total) <= #n OR status = '#s') ORDER BY status LIMIT #i",
     false},
    {"SELECT note FROM ov_orders WHERE qty > #i ORDER BY total * #i DESC, lower(note) || '#s' LIMIT #i",
     false},
    {"SELECT set_config('#s', '#s', false); SELECT * FROM ov_a a JOIN ov_b b USING (k) WHERE a.k = #i"},
    {"WITH w AS (INSERT INTO ov_orders (tenant_id) VALUES (#i) RETURNING *) SELECT * FROM w WHERE note = "
     "'#s'"},
    {"SELECT * FROM public.ov_orders o WHERE o.tenant_id = #i::bigint AND o.status = '#s'::text OR o.qty = "
     "-#n"},
    {"/* c */ SELECT #i , '#s' ; ; SELECT 1 WHERE false"},
};

const QueryFacts& facts_of(const std::string& sql) {
  static std::shared_ptr<const QueryFacts> kept;
  auto result = analyze_uncached(sql);
  REQUIRE_MESSAGE(result.is_ok(), sql, " ", result.status().message);
  kept = result.value();
  return *kept;
}

}  // namespace

TEST_CASE("a normalized hit equals a fresh parse field by field, held or reused") {
  for (const Case& c : kCorpus) {
    CAPTURE(c.pattern);
    REQUIRE(analyze(fill(c.pattern, 0)).is_ok());  // makes the template
    // More hits than a template keeps instances, every earlier one still held, then the same
    // texts again after they are released (instances rewritten in place).
    const int seeds = static_cast<int>(sw::parser::detail::kMaxInstances) + 3;
    std::vector<std::shared_ptr<const QueryFacts>> held;
    for (int round = 0; round < 2; ++round) {
      for (int seed = 1; seed <= seeds; ++seed) {
        const std::string sql = fill(c.pattern, seed);
        CAPTURE(sql);
        const auto before = cache_stats();
        auto hit = analyze(sql);
        REQUIRE(hit.is_ok());
        CHECK(cache_stats().normalized_hits == before.normalized_hits + (c.templated ? 1 : 0));
        CHECK(*hit.value() == facts_of(sql));
        if (round == 0) held.push_back(hit.value());
      }
      // Later hits never touched facts someone still held.
      for (int seed = 1; seed <= seeds && round == 0; ++seed) {
        CHECK(*held[static_cast<size_t>(seed - 1)] == facts_of(fill(c.pattern, seed)));
      }
      held.clear();
    }
  }
}

TEST_CASE("a warm template reuses a released instance: the same facts object, rewritten") {
  const std::string pattern = "SELECT * FROM ov_reuse WHERE k = #i AND s = '#s'";
  REQUIRE(analyze(fill(pattern, 0)).is_ok());
  REQUIRE(analyze(fill(pattern, 1)).is_ok());  // its first hit: cold, a copy that is not kept
  const QueryFacts* first = nullptr;
  {
    auto hit = analyze(fill(pattern, 2));  // warm: a copy, kept
    REQUIRE(hit.is_ok());
    first = hit.value().get();
  }
  auto again = analyze(fill(pattern, 3));
  REQUIRE(again.is_ok());
  CHECK(again.value().get() == first);
  CHECK(*again.value() == facts_of(fill(pattern, 3)));
  // Held: the next hit gets another object and leaves this one as it was.
  auto other = analyze(fill(pattern, 4));
  REQUIRE(other.is_ok());
  CHECK(other.value().get() != first);
  CHECK(*again.value() == facts_of(fill(pattern, 3)));
  CHECK(*other.value() == facts_of(fill(pattern, 4)));
  again = std::shared_ptr<const QueryFacts>();
  other = std::shared_ptr<const QueryFacts>();

  // Cold again after kWarmHits normalized hits of other shapes: a copy, the kept one untouched.
  REQUIRE(analyze("SELECT * FROM ov_other WHERE k = 1").is_ok());
  for (uint64_t i = 0; i <= sw::parser::detail::kWarmHits; ++i) {
    REQUIRE(analyze("SELECT * FROM ov_other WHERE k = " + std::to_string(i + 2)).is_ok());
  }
  const auto before = cache_stats();
  auto cold = analyze(fill(pattern, 5));
  REQUIRE(cold.is_ok());
  CHECK(cache_stats().normalized_hits == before.normalized_hits + 1);
  CHECK(cold.value().get() != first);
  CHECK(*cold.value() == facts_of(fill(pattern, 5)));
  cold = std::shared_ptr<const QueryFacts>();
  auto warm = analyze(fill(pattern, 6));
  REQUIRE(warm.is_ok());
  CHECK(warm.value().get() == first);
  CHECK(*warm.value() == facts_of(fill(pattern, 6)));
}
