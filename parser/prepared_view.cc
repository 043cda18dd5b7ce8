#include "parser/prepared_view.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sw::parser {
namespace {

constexpr std::string_view kView = "pg_prepared_statements";
constexpr size_t kNone = std::string_view::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool starts_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool continues_word(char c) { return starts_word(c) || (c >= '0' && c <= '9') || c == '$'; }

// The identifier at `at` (a plain word, folded to lower case as PostgreSQL folds ASCII letters, or
// a quoted identifier with "" for a quote) into `*value`; its end, or kNone when there is none.
size_t read_identifier(std::string_view sql, size_t at, std::string* value) {
  value->clear();
  if (at >= sql.size()) return kNone;
  if (sql[at] == '"') {
    for (size_t i = at + 1; i < sql.size(); ++i) {
      if (sql[i] != '"') {
        *value += sql[i];
      } else if (i + 1 < sql.size() && sql[i + 1] == '"') {
        *value += '"';
        ++i;
      } else {
        return i + 1;
      }
    }
    return kNone;
  }
  if (!starts_word(sql[at])) return kNone;
  size_t end = at;
  for (; end < sql.size() && continues_word(sql[end]); ++end)
    *value += (sql[end] >= 'A' && sql[end] <= 'Z') ? static_cast<char>(sql[end] - 'A' + 'a') : sql[end];
  return end;
}

size_t skip_spaces(std::string_view sql, size_t at) {
  while (at < sql.size() && is_space(sql[at])) ++at;
  return at;
}

// The end of the relation name `table` located at its location: `name` or `schema . name`; kNone
// when the text there is not that name.
size_t relation_end(std::string_view sql, const TableRef& table) {
  if (table.at.location < 0) return kNone;
  std::string word;
  size_t end = read_identifier(sql, static_cast<size_t>(table.at.location), &word);
  if (end == kNone) return kNone;
  if (!table.schema.empty()) {
    if (word != table.schema) return kNone;
    const size_t dot = skip_spaces(sql, end);
    if (dot >= sql.size() || sql[dot] != '.') return kNone;
    end = read_identifier(sql, skip_spaces(sql, dot + 1), &word);
    if (end == kNone) return kNone;
  }
  return word == kView ? end : kNone;
}

// The statement runs the view once, when sent: a replacement by the rows of that moment keeps
// its meaning (a view's definition or a PREPARE's statement would keep them for later runs).
bool replaceable(const StatementFacts& statement) {
  return statement.reads_prepared_statements && statement.kind != StatementKind::Ddl &&
         statement.kind != StatementKind::Prepare;
}

struct Span {
  size_t begin = 0;
  size_t end = 0;
  bool aliased = false;
};

}  // namespace

bool names_prepared_statements_view(const TableRef& table) {
  return table.role == TableRole::Read && table.name == kView &&
         (table.schema.empty() || table.schema == "pg_catalog");
}

std::optional<ExpandedSql> replace_prepared_statements_view(std::string_view sql, const QueryFacts& facts,
                                                            std::string_view subquery) {
  std::vector<Span> spans;
  for (const StatementFacts& statement : facts.statements) {
    if (!replaceable(statement)) continue;
    for (const TableRef& table : statement.tables) {
      if (!names_prepared_statements_view(table)) continue;
      const size_t end = relation_end(sql, table);
      if (end == kNone) return std::nullopt;
      spans.push_back({static_cast<size_t>(table.at.location), end, !table.alias.empty()});
    }
  }
  if (spans.empty()) return std::nullopt;
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  ExpandedSql out;
  size_t from = 0;
  auto keep_client_bytes = [&](size_t until) {
    if (until <= from) return;
    out.pieces.push_back({static_cast<uint32_t>(out.sql.size()), static_cast<uint32_t>(until - from),
                          static_cast<uint32_t>(from)});
    out.sql.append(sql.substr(from, until - from));
  };
  for (const Span& span : spans) {
    if (span.begin < from) return std::nullopt;  // two references at one place: not located exactly
    keep_client_bytes(span.begin);
    out.sql += '(';
    out.sql.append(subquery);
    out.sql += ')';
    if (!span.aliased) out.sql.append(" pg_prepared_statements");
    from = span.end;
  }
  keep_client_bytes(sql.size());
  return out;
}

}  // namespace sw::parser
