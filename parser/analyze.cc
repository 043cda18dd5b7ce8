// analyze(): libpg_query parse -> per-statement facts, behind two thread-local caches.
//
// Why libpg_query's JSON output, not the protobuf output: speed, measured with libpg_query
// 15-4.0 at -O2 for a typical 100-byte SELECT: pg_query_parse (JSON) ~5 us,
// pg_query_parse_protobuf ~20 us plus ~20 us to unpack it with protobuf-c. The JSON is read once
// into a JsonTree (json_tree.h: a real tokenizer, so quoted text in the statement cannot fool
// it; iterative, so deep trees cannot exhaust the stack); the node and field names in it are
// PostgreSQL's own parse-node names, and the unit tests pin every kind and fact.
//
// Caches (per thread, no locks): exact text -> facts; then normalized text (literals replaced
// by markers, sql_lexer.h) -> a facts template (facts_template.h) whose literals are re-read
// from the new text. Misses matter: simple-protocol statements with literals rarely repeat
// verbatim. Measured numbers are in README.md.
//
// Splitting: each RawStmt carries stmt_location/stmt_len (byte offsets; absent = 0, len 0 = to
// the end), the parser's own statement boundaries, so quoted semicolons, dollar quotes and
// CREATE RULE ... (a; b) split exactly as in PostgreSQL. StatementFacts::text is that substring
// with surrounding whitespace trimmed (leading comments stay; the ';' is not part of it).
#include "parser/analyze.h"

#include <pg_query.h>

#include <algorithm>
#include <new>

#include "parser/classify.h"
#include "parser/facts_builder.h"
#include "parser/facts_template.h"
#include "parser/guarded_parse.h"
#include "parser/json_tree.h"
#include "parser/prepared_view.h"
#include "parser/sql_lexer.h"
#include "parser/statement_cache.h"

namespace sw::parser {
namespace {

using detail::JsonRef;
using detail::JsonTree;

constexpr size_t kMaxCachedSqlBytes = size_t{8} * 1024;  // longer texts are rarely repeated verbatim

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Frees libpg_query's result on every path out of analyze_checked.
struct ParseResultGuard {
  PgQueryParseResult result{};
  ~ParseResultGuard() { pg_query_free_parse_result(result); }
};

Status parse_error(const PgQueryError& error) {
  std::string message = error.message != nullptr ? error.message : "syntax error";
  // Deeply nested input trips the parser's stack check, which PostgreSQL reports as 54001.
  if (message.rfind("stack depth limit exceeded", 0) == 0) {
    return Status::client("54001", std::move(message));
  }
  return Status::client("42601", std::move(message));
}

// The text of one statement, its offsets clamped to `sql` (libpg_query never produces bad ones,
// but the data path must not trust them blindly).
std::string_view statement_text(std::string_view sql, int64_t location, int64_t length) {
  size_t from = std::min(static_cast<size_t>(std::max<int64_t>(location, 0)), sql.size());
  size_t count = length > 0 ? static_cast<size_t>(length) : sql.size() - from;
  count = std::min(count, sql.size() - from);
  return trim(sql.substr(from, count));
}

// A parse's facts plus what a normalized-cache template needs.
struct Analysis {
  std::vector<std::pair<uint32_t, uint32_t>> spans;  // each statement's text in the SQL
  std::vector<int> constants;                        // locations of every A_Const
};

// {"version":N,"stmts":[{"stmt":{"<NodeType>":{...}},"stmt_location":N,"stmt_len":N}, ...]}
bool read_parse_tree(std::string_view json, std::string_view sql, QueryFacts& facts, Analysis* analysis) {
  JsonTree tree;
  if (!tree.parse(json)) return false;
  for (JsonRef raw : tree.root()["stmts"]) {
    JsonRef node = raw["stmt"];
    StatementFacts statement;
    const std::string_view type = node.node_type();
    detail::classify(type, node.body(), statement);
    detail::FactsBuilder(sql, statement).build(type, node.body());
    statement.reads_prepared_statements =
        std::any_of(statement.tables.begin(), statement.tables.end(), names_prepared_statements_view);
    const std::string_view text =
        statement_text(sql, raw["stmt_location"].integer(0), raw["stmt_len"].integer(0));
    statement.text = std::string(text);
    statement.begin.location = static_cast<int>(text.data() - sql.data());
    if (statement.select.plain) statement.select.begin.location = static_cast<int>(text.data() - sql.data());
    if (analysis != nullptr) {
      const auto begin = static_cast<uint32_t>(text.data() - sql.data());
      analysis->spans.emplace_back(begin, begin + static_cast<uint32_t>(text.size()));
    }
    facts.statements.push_back(std::move(statement));
  }
  if (analysis != nullptr) {
    for (JsonRef constant : tree.find_all("A_Const")) {
      analysis->constants.push_back(static_cast<int>(constant["location"].integer(-1)));
    }
  }
  return true;
}

Result<std::shared_ptr<const QueryFacts>> analyze_checked(std::string_view sql, Analysis* analysis) {
  if (sql.find('\0') != std::string_view::npos) {
    // The wire protocol cannot carry it either; PostgreSQL's message for the same input.
    return Status::client("22021", "invalid byte sequence for encoding \"UTF8\": 0x00");
  }
  const std::string text(sql);  // libpg_query wants a NUL-terminated string
  ParseResultGuard parsed{};
  Status refused;
  if (!detail::guarded_parse(text, parsed.result, refused)) return refused;
  if (parsed.result.error != nullptr) return parse_error(*parsed.result.error);
  if (parsed.result.parse_tree == nullptr) {
    return Status::proxy("XX000", "libpg_query returned no parse tree");
  }

  auto facts = std::make_shared<QueryFacts>();
  if (!read_parse_tree(parsed.result.parse_tree, sql, *facts, analysis)) {
    return Status::proxy("XX000", "cannot read libpg_query's parse tree");
  }
  if (facts->statements.empty()) {
    // Only whitespace and comments: PostgreSQL answers EmptyQueryResponse.
    StatementFacts empty;
    empty.kind = StatementKind::Empty;
    empty.query_kind = StatementKind::Empty;
    facts->statements.push_back(std::move(empty));
    if (analysis != nullptr) analysis->spans.emplace_back(0, 0);
  }
  return std::shared_ptr<const QueryFacts>(std::move(facts));
}

Result<std::shared_ptr<const QueryFacts>> analyze_guarded(std::string_view sql, Analysis* analysis) {
  try {
    return analyze_checked(sql, analysis);
  } catch (const std::bad_alloc&) {
    return Status::proxy("53200", "out of memory while analyzing a statement");
  } catch (...) {
    return Status::proxy("XX000", "unexpected error while analyzing a statement");
  }
}

struct Caches {
  detail::StatementCache exact{kDefaultCacheEntries};
  detail::ClockMap<detail::FactsTemplate> normalized{kDefaultCacheEntries};
  // The current call's normalized text, kept so its key and slot buffers are reused (analyze()
  // never re-enters itself on a thread).
  detail::NormalizedSql scratch;
  // The last normalized hit and its text: the session analyzes a Query when routing it and again
  // when forwarding it, and the second call then costs one compare (counted as an exact hit).
  std::string last_text;
  std::shared_ptr<const QueryFacts> last_hit;
  CacheStats stats;
};

Caches& caches() {
  thread_local Caches per_thread;
  return per_thread;
}

}  // namespace

Result<std::shared_ptr<const QueryFacts>> analyze_uncached(std::string_view sql) {
  return analyze_guarded(sql, nullptr);
}

Result<std::shared_ptr<const QueryFacts>> analyze(std::string_view sql) {
  Caches& cache = caches();
  const bool cacheable = sql.size() <= kMaxCachedSqlBytes;
  try {
    if (cacheable) {
      if (std::shared_ptr<const QueryFacts> hit = cache.exact.find(sql)) {
        ++cache.stats.exact_hits;
        return hit;
      }
      if (cache.last_hit != nullptr && sql == cache.last_text) {
        ++cache.stats.exact_hits;
        return cache.last_hit;
      }
    }
    detail::NormalizedSql& normalized = cache.scratch;
    const bool templatable = cacheable && detail::normalize_sql(sql, normalized) && !normalized.slots.empty();
    if (templatable) {
      if (auto tmpl = cache.normalized.find(normalized.key)) {
        ++cache.stats.normalized_hits;
        cache.last_hit.reset();  // so its instance can be reused for this text
        cache.last_hit = detail::instantiate(*tmpl, sql, normalized, cache.stats.normalized_hits);
        cache.last_text.assign(sql);  // reuses the buffer
        return cache.last_hit;
      }
    }
    ++cache.stats.misses;
    Analysis analysis;
    Result<std::shared_ptr<const QueryFacts>> result =
        analyze_guarded(sql, templatable ? &analysis : nullptr);
    if (cacheable && result.is_ok()) cache.exact.insert(sql, result.value());
    if (templatable && result.is_ok()) {
      if (auto tmpl =
              detail::make_template(sql, normalized, result.value(), analysis.constants, analysis.spans)) {
        cache.normalized.insert(normalized.key, std::move(tmpl));
      }
    }
    return result;
  } catch (...) {  // only allocation failures can get here
    return Status::proxy("53200", "out of memory while analyzing a statement");
  }
}

void set_cache_capacity(size_t entries) {
  Caches& cache = caches();
  cache.exact.set_capacity(entries);
  cache.normalized.set_capacity(entries);
  cache.last_hit.reset();
  cache.last_text.clear();
}

CacheStats cache_stats() { return caches().stats; }

}  // namespace sw::parser
