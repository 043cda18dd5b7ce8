// analyze(): libpg_query parse -> per-statement facts, behind a thread-local LRU cache.
//
// Why the protobuf output (pg_query_parse_protobuf + pg_query__parse_result__unpack) and not
// the JSON one: the unpacked tree is a set of C structs generated from the same pg_query.proto
// the library was built with, so node types, enums and field names are checked by the compiler
// (a libpg_query upgrade that renames something breaks the build instead of silently
// misclassifying), there is no string scanning that quoting or nesting could fool, and the whole
// tree is there for the facts the router needs next (tables, key predicates). Decoding costs a
// fraction of the parse itself, and repeated texts skip both through the cache.
//
// Splitting: each RawStmt carries stmt_location/stmt_len (byte offsets; len 0 = to the end), the
// parser's own statement boundaries, so quoted semicolons, dollar quotes and
// CREATE RULE ... (a; b) are handled exactly as PostgreSQL does. StatementFacts::text is that
// substring with surrounding whitespace trimmed (leading comments stay; the ';' is not part of
// it).
#include "parser/analyze.h"

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "parser/classify.h"
#include "parser/statement_cache.h"

namespace sw::parser {
namespace {

constexpr size_t kCacheEntries = 1024;
constexpr size_t kMaxCachedSqlBytes = 8 * 1024;  // longer texts are rarely repeated verbatim

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// Frees libpg_query's result and the unpacked tree on every path out of analyze_uncached.
struct ParseResources {
  PgQueryProtobufParseResult parsed{};
  PgQuery__ParseResult* tree = nullptr;
  ~ParseResources() {
    if (tree != nullptr) pg_query__parse_result__free_unpacked(tree, nullptr);
    pg_query_free_protobuf_parse_result(parsed);
  }
};

Status parse_error(const PgQueryError& error) {
  std::string message = error.message != nullptr ? error.message : "syntax error";
  // Deeply nested input trips the parser's stack check, which PostgreSQL reports as 54001.
  if (message.rfind("stack depth limit exceeded", 0) == 0) {
    return Status::client("54001", std::move(message));
  }
  return Status::client("42601", std::move(message));
}

// The text of one RawStmt, its offsets clamped to `sql` (libpg_query never produces bad ones,
// but the data path must not trust them blindly).
std::string_view statement_text(std::string_view sql, const PgQuery__RawStmt& raw) {
  size_t location = static_cast<size_t>(std::max<int32_t>(raw.stmt_location, 0));
  location = std::min(location, sql.size());
  size_t length = raw.stmt_len > 0 ? static_cast<size_t>(raw.stmt_len) : sql.size() - location;
  length = std::min(length, sql.size() - location);
  return trim(sql.substr(location, length));
}

Result<std::shared_ptr<const QueryFacts>> analyze_checked(std::string_view sql) {
  if (sql.find('\0') != std::string_view::npos) {
    // The wire protocol cannot carry it either; PostgreSQL's message for the same input.
    return Status::client("22021", "invalid byte sequence for encoding \"UTF8\": 0x00");
  }
  const std::string text(sql);  // libpg_query wants a NUL-terminated string
  ParseResources res;
  res.parsed = pg_query_parse_protobuf(text.c_str());
  if (res.parsed.error != nullptr) return parse_error(*res.parsed.error);
  res.tree = pg_query__parse_result__unpack(
      nullptr, res.parsed.parse_tree.len,
      reinterpret_cast<const uint8_t*>(res.parsed.parse_tree.data));
  if (res.tree == nullptr) {
    return Status::proxy("XX000", "cannot decode the parse tree from libpg_query");
  }

  auto facts = std::make_shared<QueryFacts>();
  facts->statements.reserve(res.tree->n_stmts);
  for (size_t i = 0; i < res.tree->n_stmts; ++i) {
    const PgQuery__RawStmt* raw = res.tree->stmts[i];
    if (raw == nullptr) continue;
    StatementFacts statement;
    statement.text = std::string(statement_text(sql, *raw));
    detail::classify(raw->stmt, statement);
    facts->statements.push_back(std::move(statement));
  }
  if (facts->statements.empty()) {
    // Only whitespace and comments: PostgreSQL answers EmptyQueryResponse.
    StatementFacts empty;
    empty.kind = StatementKind::Empty;
    facts->statements.push_back(std::move(empty));
  }
  return std::shared_ptr<const QueryFacts>(std::move(facts));
}

}  // namespace

Result<std::shared_ptr<const QueryFacts>> analyze_uncached(std::string_view sql) {
  try {
    return analyze_checked(sql);
  } catch (const std::bad_alloc&) {
    return Status::proxy("53200", "out of memory while analyzing a statement");
  } catch (...) {
    return Status::proxy("XX000", "unexpected error while analyzing a statement");
  }
}

Result<std::shared_ptr<const QueryFacts>> analyze(std::string_view sql) {
  thread_local detail::StatementCache cache(kCacheEntries);
  const bool cacheable = sql.size() <= kMaxCachedSqlBytes;
  try {
    if (cacheable) {
      if (std::shared_ptr<const QueryFacts> hit = cache.find(sql)) return hit;
    }
    Result<std::shared_ptr<const QueryFacts>> result = analyze_uncached(sql);
    if (cacheable && result.is_ok()) cache.insert(sql, result.value());
    return result;
  } catch (...) {  // only allocation failures can get here
    return Status::proxy("53200", "out of memory while analyzing a statement");
  }
}

}  // namespace sw::parser
