// An INSERT ... VALUES statement cut to some of its rows: the router runs an INSERT whose rows
// fall on several shards as one INSERT per shard (docs/architecture.md §6.3, "Split INSERT").
// The rows are located with the lexer's tokens (libpg_query gives a VALUES row no location):
// the top-level VALUES after the target table, then each parenthesized row. The facts' own
// values must fall inside the rows found, or the statement is not cut.
#include <algorithm>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser {
namespace {

using detail::SqlToken;

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

bool is_word(std::string_view text, const SqlToken& token, std::string_view word) {
  if (token.kind != SqlToken::Kind::Word || token.end - token.begin != word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if ((text[token.begin + i] | 0x20) != word[i]) return false;
  }
  return true;
}

bool is_punct(std::string_view text, const SqlToken& token, char c) {
  return token.kind == SqlToken::Kind::Punctuation && text[token.begin] == c;
}

// The first top-level VALUES at or after `from`: its token index, or tokens.size().
size_t find_values(std::string_view text, const std::vector<SqlToken>& tokens, size_t from) {
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].begin < from) continue;
    if (is_punct(text, tokens[i], '(')) ++depth;
    if (is_punct(text, tokens[i], ')')) --depth;
    if (depth == 0 && is_word(text, tokens[i], "values")) return i;
  }
  return tokens.size();
}

// The rows after VALUES: `( ... )` separated by commas. False when the text is not that shape.
bool find_rows(std::string_view text, const std::vector<SqlToken>& tokens, size_t i,
               std::vector<Span>& rows) {
  for (++i; i < tokens.size() && is_punct(text, tokens[i], '(');) {
    int depth = 0;
    const size_t begin = tokens[i].begin;
    for (; i < tokens.size(); ++i) {
      if (is_punct(text, tokens[i], '(')) ++depth;
      if (is_punct(text, tokens[i], ')') && --depth == 0) break;
    }
    if (i == tokens.size()) return false;
    rows.push_back({begin, tokens[i].end});
    if (++i == tokens.size() || !is_punct(text, tokens[i], ',')) break;
    ++i;
  }
  return !rows.empty();
}

// Whether every located value of row `row` lies in `span` (offsets in the statement text).
bool values_inside(const std::vector<Value>& row, const Span& span, int base) {
  return std::all_of(row.begin(), row.end(), [&](const Value& value) {
    if (value.location < 0) return true;
    const auto at = static_cast<size_t>(value.location - base);
    return value.location >= base && at >= span.begin && at < span.end;
  });
}

class RowCutter {
 public:
  RowCutter(std::string_view text, const std::vector<SqlToken>& tokens) : text_(text), tokens_(tokens) {}

  // Copies text [begin, end) with its parameters renumbered.
  void copy(size_t begin, size_t end) {
    for (const SqlToken& token : tokens_) {
      if (token.kind != SqlToken::Kind::Param || token.begin < begin || token.end > end) continue;
      out_.sql.append(text_.substr(begin, token.begin - begin));
      int client = 0;  // PostgreSQL refuses numbers beyond int range itself; saturate, never throw
      for (size_t k = token.begin + 1; k < token.end && client < 100000000; ++k)
        client = client * 10 + (text_[k] - '0');
      auto known = std::find(out_.params.begin(), out_.params.end(), client);
      if (known == out_.params.end()) known = out_.params.insert(out_.params.end(), client);
      out_.sql += '$';
      out_.sql += std::to_string(known - out_.params.begin() + 1);
      begin = token.end;
    }
    out_.sql.append(text_.substr(begin, end - begin));
  }
  void append(std::string_view text) { out_.sql.append(text); }
  InsertRows take() { return std::move(out_); }

 private:
  std::string_view text_;
  const std::vector<SqlToken>& tokens_;
  InsertRows out_;
};

}  // namespace

Result<InsertRows> insert_with_rows(const StatementFacts& facts, const std::vector<size_t>& rows) {
  auto cannot = [](const std::string& why) {
    return Status::client("0A000", "the INSERT cannot be split by shard: " + why);
  };
  if (facts.inserts.size() != 1 || facts.begin.location < 0) return cannot("not a single INSERT ... VALUES");
  const InsertFacts& insert = facts.inserts.front();
  const TableRef& target = facts.tables[static_cast<size_t>(insert.table)];
  const int base = facts.begin.location;
  if (target.at.location < base) return cannot("its target table could not be located");
  const std::string_view text = facts.text;
  std::vector<SqlToken> tokens;
  if (!detail::scan_tokens(text, tokens)) return cannot("its text has a form the proxy does not cut");
  std::vector<Span> spans;
  const size_t values = find_values(text, tokens, static_cast<size_t>(target.at.location - base));
  if (values == tokens.size() || !find_rows(text, tokens, values, spans) ||
      spans.size() != insert.rows.size())
    return cannot("its VALUES rows could not be located");
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!values_inside(insert.rows[i], spans[i], base)) return cannot("its VALUES rows could not be located");
  }
  RowCutter cutter(text, tokens);
  cutter.copy(0, spans.front().begin);
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= spans.size()) return cannot("no such row");
    if (i > 0) cutter.append(", ");
    cutter.copy(spans[rows[i]].begin, spans[rows[i]].end);
  }
  cutter.copy(spans.back().end, text.size());
  return cutter.take();
}

}  // namespace sw::parser
