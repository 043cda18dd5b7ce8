// Facts templates for the normalized statement cache (internal to sw_parser).
//
// A template is the analyzed facts of one text plus, for every located value in them, where it
// sits in the text's normalized key (sql_lexer.h). Another text with the same key parses to the
// same tree up to its literal values, so its facts are the template's with each literal's text
// and every location re-read from the new text: no parse. make_template() refuses a text unless
// every literal the scanner found is a constant of libpg_query's tree (`constants`: the
// locations of every A_Const), so the scanner is checked against the real parser on each entry.
//
// Per-text overlay without a copy: everything in a template's facts but the located values (a
// literal's text, every location) and the statement texts is the same for every text of its
// key. instantiate() therefore keeps the facts it hands out (`instances`) and, when one is held
// by nobody else any more, rewrites only that overlay in it, reusing its buffers: a hit costs no
// deep copy and, once the instances exist, no allocation. An instance still held (a session
// routing it) is never touched; a new one is copied from the template then, up to
// kMaxInstances per template (more concurrent holders get a copy that is not kept).
// Only a warm template (hit within the thread's last kWarmHits normalized hits) reuses and keeps
// instances: a cold one's instance is out of the CPU caches too, and rewriting it in place was
// measured slower than a copy into freshly freed, cached heap memory (tests/bench/README.md,
// bench_statement_cache with 10 000 shapes hit in random order).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser::detail {

struct FactsTemplate {
  struct Fix {
    KeyOffset at;          // the value's location, as an offset in the key
    int32_t slot = -1;     // literal slot whose text it takes; -1: location only
    bool negated = false;  // a number PostgreSQL folded a unary minus into
  };
  std::shared_ptr<const QueryFacts> facts;
  std::vector<Fix> fixes;  // one per located value, in for_each_value order
  std::vector<std::pair<KeyOffset, KeyOffset>> statement_spans;  // key offsets of each text
  // Facts handed out for texts of this key (see above). Mutable: the cache hands out const
  // templates; only the owning thread's analyze() touches this list.
  mutable std::vector<std::shared_ptr<QueryFacts>> instances;
  mutable uint64_t last_hit = 0;  // the thread's normalized-hit number of its last hit; 0: none
};

inline constexpr size_t kMaxInstances = 8;
inline constexpr uint64_t kWarmHits = 2048;  // ~2048 instances of ~1.5 KiB: a last-level cache

// `spans`: each statement's text as [begin, end) offsets in `sql`.
std::shared_ptr<const FactsTemplate> make_template(std::string_view sql, const NormalizedSql& normalized,
                                                   std::shared_ptr<const QueryFacts> facts,
                                                   const std::vector<int>& constants,
                                                   const std::vector<std::pair<uint32_t, uint32_t>>& spans);

// The facts of `sql`, whose normalized key is the template's: for a warm template a kept
// instance no one else holds with its overlay rewritten, else a copy of the template's facts
// (kept when the template is warm and there is room). `hit` numbers the thread's normalized hits
// (from 1, increasing).
std::shared_ptr<const QueryFacts> instantiate(const FactsTemplate& tmpl, std::string_view sql,
                                              const NormalizedSql& normalized, uint64_t hit);

}  // namespace sw::parser::detail
