// analyze(): libpg_query parse -> per-statement facts, behind a thread-local LRU cache.
//
// Why libpg_query's JSON output read by a pull reader (json_reader.h), not the protobuf output:
// speed, measured with libpg_query 15-4.0 at -O2 for a typical 100-byte SELECT:
// pg_query_parse (JSON) ~5 us, pg_query_parse_protobuf ~20 us plus ~20 us to unpack it with
// protobuf-c. analyze_uncached() on the JSON path costs ~6 us in all, against ~41 us when built
// on protobuf; a cache hit ~15 ns. Misses matter: simple-protocol statements with literals
// rarely repeat verbatim. Robustness: the reader is a real JSON tokenizer (strings, escapes,
// nesting), not a substring search, so quoted text in the statement cannot fool it; it skips
// values iteratively, so deep trees cannot exhaust the stack; the node and field names in that
// JSON are PostgreSQL's own parse-node names, and the unit tests pin every kind.
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
#include "parser/guarded_parse.h"
#include "parser/json_reader.h"
#include "parser/statement_cache.h"

namespace sw::parser {
namespace {

using detail::JsonReader;

constexpr size_t kCacheEntries = 1024;
constexpr size_t kMaxCachedSqlBytes = 8 * 1024;  // longer texts are rarely repeated verbatim

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

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

// One element of "stmts": {"stmt":{"<NodeType>":{...}},"stmt_location":N,"stmt_len":N}.
bool read_statement(JsonReader& reader, std::string_view sql, StatementFacts& out) {
  int64_t location = 0;
  int64_t length = 0;
  if (!reader.begin_object()) return false;
  std::string_view key;
  while (reader.next_key(key)) {
    if (key == "stmt") {
      if (!reader.begin_object()) return false;
      std::string_view type_view;
      if (reader.next_key(type_view)) {
        const std::string node_type(type_view);  // the view may not survive further reads
        if (!detail::classify(node_type, reader, out)) return false;
        while (reader.next_key(key)) reader.skip_value();  // a Node has exactly one key
      }
    } else if (key == "stmt_location") {
      reader.read_int(location);
    } else if (key == "stmt_len") {
      reader.read_int(length);
    } else {
      reader.skip_value();
    }
  }
  out.text = std::string(statement_text(sql, location, length));
  return reader.ok();
}

// {"version":N,"stmts":[...]} -> facts.
bool read_parse_tree(std::string_view json, std::string_view sql, QueryFacts& facts) {
  JsonReader reader(json);
  if (!reader.begin_object()) return false;
  std::string_view key;
  while (reader.next_key(key)) {
    if (key != "stmts") {
      reader.skip_value();
      continue;
    }
    if (!reader.begin_array()) return false;
    while (reader.next_element()) {
      StatementFacts statement;
      if (!read_statement(reader, sql, statement)) return false;
      facts.statements.push_back(std::move(statement));
    }
  }
  return reader.ok();
}

Result<std::shared_ptr<const QueryFacts>> analyze_checked(std::string_view sql) {
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
  if (!read_parse_tree(parsed.result.parse_tree, sql, *facts)) {
    return Status::proxy("XX000", "cannot read libpg_query's parse tree");
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
