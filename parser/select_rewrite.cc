// rewrite_select(): the statement text with LIMIT/OFFSET values and avg calls replaced, spliced
// at the parse tree's locations (no deparse: libpg_query's deparser needs its protobuf tree,
// and splicing keeps everything else exactly as the client wrote it).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "parser/analyze.h"

namespace sw::parser {
namespace {

struct Edit {
  size_t begin;
  size_t end;
  std::string text;
};

Status cannot(const std::string& what) {
  return Status::client("0A000", "cannot rewrite this statement for the shards: " + what);
}

// The span of a LIMIT/OFFSET value in the statement text: a number, a parameter, NULL or ALL.
Result<Edit> value_span(const Value& value, size_t base, std::string_view text, const char* clause) {
  if (value.location < 0 || static_cast<size_t>(value.location) < base)
    return cannot(std::string(clause) + " without a literal value");
  const size_t at = static_cast<size_t>(value.location) - base;
  if (value.kind == ValueKind::Number && !value.text.empty() && value.text[0] != '-' &&
      text.substr(at, value.text.size()) == value.text) {
    return Edit{at, at + value.text.size(), {}};
  }
  if (value.kind == ValueKind::Param && at < text.size() && text[at] == '$') {
    size_t end = at + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end > at + 1) return Edit{at, end, {}};
  }
  if (value.kind == ValueKind::Null) {
    size_t end = at;
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    if (end - at == 3 || end - at == 4) return Edit{at, end, {}};
  }
  return cannot(std::string(clause) +
                " must be a constant number or a parameter (an expression is not supported)");
}

// The end of the plain literal at `at`: a '...' string ('' for a quote), a number (after a
// unary minus folded into it), or NULL.
Result<size_t> literal_end(std::string_view text, size_t at) {
  if (at >= text.size()) return cannot("a key list item could not be located");
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  if (at < text.size() && text[at] == '\'') {
    for (size_t i = at + 1; i < text.size(); ++i) {
      if (text[i] != '\'') continue;
      if (i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
        continue;
      }
      return i + 1;
    }
    return cannot("an unterminated string in a key list");
  }
  size_t end = at;
  if (end < text.size() && text[end] == '-') {
    ++end;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
  }
  const size_t start = end;
  if (start < text.size() && (std::isdigit(static_cast<unsigned char>(text[start])) || text[start] == '.')) {
    while (end < text.size() && (is_word(text[end]) || ((text[end] == '+' || text[end] == '-') &&
                                                        (text[end - 1] == 'e' || text[end - 1] == 'E')))) {
      ++end;
    }
    return end;
  }
  if (start == at && text.size() - at >= 4 && (text[at] == 'N' || text[at] == 'n')) {
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    if (end - at == 4) return end;
  }
  return cannot("a key list item that is not a plain number or '...' string");
}

// Every output item whose aggregate the shards compute as several columns (avg, the variances)
// replaced by those columns.
Status split_avg(const SelectShape& shape, size_t base, const std::string& text, std::vector<Edit>& edits) {
  for (const OutputItem& item : shape.outputs) {
    if (output_width(item) == 1 && !item.ordered) continue;
    if (item.call_begin.location < 0 || item.call_end.location < 0 ||
        static_cast<size_t>(item.call_begin.location) < base)
      return cannot("the " + item.name + "() call could not be located");
    const size_t begin = static_cast<size_t>(item.call_begin.location) - base;
    const size_t end = static_cast<size_t>(item.call_end.location) - base;
    if (end > text.size() || end <= begin) return cannot("the " + item.name + "() call could not be located");
    const std::vector<std::string> split =
        item.ordered ? item.ordered->columns : partial_calls(item.aggregate, text.substr(begin, end - begin));
    if (split.empty()) return cannot("the " + item.name + "() call could not be located");
    std::string columns;
    for (const std::string& column : split) columns += (columns.empty() ? "" : ", ") + column;
    edits.push_back(Edit{begin, end, std::move(columns)});
  }
  return Status::ok();
}

// The leading columns, and every output position moved behind them and the split avg items.
Status add_columns(const SelectShape& shape, const SelectRewrite& rewrite, size_t base,
                   const std::string& text, std::vector<Edit>& edits) {
  if (!rewrite.leading_columns.empty()) {
    const Value& first = shape.outputs.empty() ? Value{} : shape.outputs.front().begin;
    if (first.location < 0 || static_cast<size_t>(first.location) < base)
      return cannot("the select list could not be located");
    std::string columns;
    for (const std::string& column : rewrite.leading_columns) columns += column + ", ";
    const size_t at = static_cast<size_t>(first.location) - base;
    edits.push_back(Edit{at, at, std::move(columns)});
  }
  if (rewrite.split_avg || !rewrite.leading_columns.empty()) {
    // Each avg before an output position adds a column (GROUP BY 2 after avg(x) becomes 3), and
    // so does each leading column.
    for (const Value& position : shape.positions) {
      int64_t n = 0;
      if (position.kind != ValueKind::Number || position.location < 0) continue;
      n = std::strtoll(position.text.c_str(), nullptr, 10);
      auto shift = static_cast<int64_t>(rewrite.leading_columns.size());
      for (int64_t i = 0; rewrite.split_avg && i + 1 < n && i < static_cast<int64_t>(shape.outputs.size());
           ++i) {
        shift += output_width(shape.outputs[static_cast<size_t>(i)]) - 1;
      }
      if (shift == 0) continue;
      const size_t at = static_cast<size_t>(position.location) - base;
      if (text.compare(at, position.text.size(), position.text) != 0)
        return cannot("a position could not be located");
      edits.push_back(Edit{at, at + position.text.size(), std::to_string(n + shift)});
    }
  }
  return Status::ok();
}

// The end of the (possibly schema-qualified, possibly quoted) name at `at`, and where its last
// component begins; false when the text there is not a name.
bool name_span(std::string_view text, size_t at, size_t& end, size_t& last) {
  auto ident_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || (c & 0x80) != 0;
  };
  size_t i = at;
  for (;;) {
    last = i;
    if (i < text.size() && text[i] == '"') {
      ++i;
      for (;; ++i) {
        if (i >= text.size()) return false;
        if (text[i] != '"') continue;
        if (i + 1 < text.size() && text[i + 1] == '"') {
          ++i;
          continue;
        }
        ++i;
        break;
      }
    } else {
      const size_t start = i;
      while (i < text.size() && ident_char(text[i])) ++i;
      if (i == start) return false;
    }
    size_t next = i;
    while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    if (next >= text.size() || text[next] != '.') break;
    ++next;
    while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    i = next;
  }
  end = i;
  return true;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The keyword before `at` (lower case), skipping white space; "" when none.
std::string word_before(std::string_view text, size_t at) {
  size_t end = at;
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  size_t begin = end;
  while (begin > 0 && std::isalpha(static_cast<unsigned char>(text[begin - 1]))) --begin;
  return lower(text.substr(begin, end - begin));
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

Status table_edits(const StatementFacts& facts, const std::vector<TableSplice>& splices, size_t base,
                   const std::string& text, std::vector<Edit>& edits) {
  const std::string folded = lower(text);
  for (const TableSplice& splice : splices) {
    if (splice.table < 0 || static_cast<size_t>(splice.table) >= facts.tables.size())
      return cannot("a table reference could not be located");
    const TableRef& table = facts.tables[static_cast<size_t>(splice.table)];
    if (table.at.location < 0 || static_cast<size_t>(table.at.location) < base)
      return cannot("table " + table.name + " could not be located");
    const size_t at = static_cast<size_t>(table.at.location) - base;
    size_t end = 0, last = 0;
    if (at >= text.size() || !name_span(text, at, end, last))
      return cannot("table " + table.name + " could not be located");
    const std::string_view written_last = std::string_view(text).substr(last, end - last);
    const std::string bare = written_last.front() == '"'
                                 ? std::string(written_last.substr(1, written_last.size() - 2))
                                 : lower(written_last);
    if (bare != table.name) return cannot("table " + table.name + " could not be located");
    const std::string before = word_before(text, at);
    if (before == "only" || before == "table")
      return cannot(std::string(before == "only" ? "ONLY " : "TABLE ") + table.name +
                    " (write SELECT * FROM " + table.name + " instead)");
    if (!table.schema.empty() &&
        folded.find(lower(table.schema) + "." + table.name + ".") != std::string::npos)
      return cannot("a column qualified with its schema (" + table.schema + "." + table.name +
                    ".column); qualify it with the table name or an alias");
    std::string replacement = splice.text;
    replace_all(replacement, "{name}", std::string_view(text).substr(at, end - at));
    replace_all(replacement, "{last}", written_last);
    edits.push_back(Edit{at, end, std::move(replacement)});
  }
  return Status::ok();
}

Result<std::string> apply(const std::string& text, std::vector<Edit> edits) {
  std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  for (size_t i = 1; i < edits.size(); ++i) {
    if (edits[i].end > edits[i - 1].begin) return cannot("two rewrites of one place");
  }
  std::string out = text;
  for (const Edit& edit : edits) out.replace(edit.begin, edit.end - edit.begin, edit.text);
  return out;
}

// Where the list item whose literal is at `at` begins: after the `(`, `[` or `,` before it. A
// literal written after its type name (int8 '2', varchar(8) 'a') starts at the type name, so a
// NULL put in its place replaces the name too (`int8 NULL` is not SQL).
size_t item_begin(std::string_view text, size_t at) {
  size_t before = at;
  while (before > 0 && std::isspace(static_cast<unsigned char>(text[before - 1]))) --before;
  const char last = before > 0 ? text[before - 1] : '(';
  if (!std::isalnum(static_cast<unsigned char>(last)) && last != '_' && last != '"' && last != ')') return at;
  size_t begin = at;
  int depth = 0;
  while (begin > 0) {
    const char c = text[begin - 1];
    if (depth == 0 && (c == '(' || c == '[' || c == ',')) break;
    if (c == ')') ++depth;
    if (c == '(') --depth;
    --begin;
  }
  while (begin < at && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  return begin;
}

// count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x) -> array_agg(DISTINCT x) for each output
// item in `items`.
Status distinct_arrays(const SelectShape& shape, const std::vector<int>& items, size_t base,
                       const std::string& text, std::vector<Edit>& edits) {
  for (int index : items) {
    if (index < 0 || static_cast<size_t>(index) >= shape.outputs.size())
      return cannot("the aggregate (DISTINCT) call could not be located");
    const Value& at = shape.outputs[static_cast<size_t>(index)].call_begin;
    if (at.location < 0 || static_cast<size_t>(at.location) < base)
      return cannot("the aggregate (DISTINCT) call could not be located");
    const size_t begin = static_cast<size_t>(at.location) - base;
    size_t length = 0;
    for (const char* name : {"count", "sum", "avg"}) {
      const std::string_view word(name);
      if (begin + word.size() <= text.size() && lower(text.substr(begin, word.size())) == word)
        length = word.size();
    }
    if (length == 0) return cannot("the aggregate (DISTINCT) call could not be located");
    edits.push_back(Edit{begin, begin + length, "array_agg"});
  }
  return Status::ok();
}

// Each expression as `CASE WHEN false THEN (<expression>) END`: PostgreSQL types it and its
// parameters as the expression, folds it to NULL when planning, and never computes it (no error
// of a shard's partial values, such as a division by zero).
Status unevaluated(const std::vector<SelectRewrite::Unevaluated>& spans, size_t base, const std::string& text,
                   std::vector<Edit>& edits) {
  for (const SelectRewrite::Unevaluated& span : spans) {
    if (span.begin < 0 || span.end <= span.begin || static_cast<size_t>(span.begin) < base ||
        static_cast<size_t>(span.end) - base > text.size())
      return cannot("an expression over aggregates could not be located");
    const size_t begin = static_cast<size_t>(span.begin) - base;
    const size_t end = static_cast<size_t>(span.end) - base;
    std::string wrapped = "CASE WHEN false THEN (" + text.substr(begin, end - begin) + ") END";
    if (!span.alias.empty()) {
      wrapped += " AS \"";
      for (char c : span.alias) wrapped += c == '"' ? std::string("\"\"") : std::string(1, c);
      wrapped += '"';
    }
    edits.push_back(Edit{begin, end, std::move(wrapped)});
  }
  return Status::ok();
}

Status literal_edits(const std::vector<LiteralEdit>& literals, size_t base, const std::string& text,
                     std::vector<Edit>& edits) {
  for (const LiteralEdit& literal : literals) {
    if (literal.location < 0 || static_cast<size_t>(literal.location) < base)
      return cannot("a key list item could not be located");
    const size_t at = static_cast<size_t>(literal.location) - base;
    auto end = literal_end(text, at);
    if (!end) return end.status();
    const size_t begin =
        literal.text == "NULL" && at < text.size() && text[at] == '\'' ? item_begin(text, at) : at;
    edits.push_back(Edit{begin, end.value(), literal.text});
  }
  return Status::ok();
}

}  // namespace

Result<std::string> rewrite_select(const StatementFacts& facts, const SelectRewrite& rewrite) {
  const SelectShape& shape = facts.select;
  if (!shape.plain || shape.begin.location < 0) return cannot("not a plain SELECT");
  const auto base = static_cast<size_t>(shape.begin.location);
  const std::string& text = facts.text;
  std::vector<Edit> edits;
  if (!rewrite.limit.empty()) {
    if (!shape.has_limit) return cannot("no LIMIT to replace");
    auto span = value_span(shape.limit, base, text, "LIMIT");
    if (!span) return span.status();
    span->text = rewrite.limit;
    edits.push_back(std::move(span.value()));
  }
  if (rewrite.drop_offset && shape.has_offset) {
    auto span = value_span(shape.offset, base, text, "OFFSET");
    if (!span) return span.status();
    if (rewrite.offset.empty()) {
      span->text = '0';
    } else {
      span->text = rewrite.offset;
    }
    edits.push_back(std::move(span.value()));
  }
  if (rewrite.drop_having) {
    if (shape.having_begin < 0 || static_cast<size_t>(shape.having_begin) < base ||
        shape.having_end < shape.having_begin || static_cast<size_t>(shape.having_end) - base > text.size())
      return cannot("HAVING could not be located");
    const size_t begin = static_cast<size_t>(shape.having_begin) - base;
    const size_t end = static_cast<size_t>(shape.having_end) - base;
    std::string kept;
    if (rewrite.neutral_having && end >= begin + 6) {
      std::string_view condition = std::string_view(text).substr(begin + 6, end - begin - 6);
      while (!condition.empty() && std::isspace(static_cast<unsigned char>(condition.front())))
        condition.remove_prefix(1);
      while (!condition.empty() && std::isspace(static_cast<unsigned char>(condition.back())))
        condition.remove_suffix(1);
      kept = "HAVING (" + std::string(condition) + ") IS NULL OR true ";
    }
    edits.push_back(Edit{begin, end, std::move(kept)});
  }
  if (rewrite.split_avg) {
    if (Status s = split_avg(shape, base, text, edits); !s) return s;
  }
  if (Status s = distinct_arrays(shape, rewrite.distinct_arrays, base, text, edits); !s) return s;
  if (Status s = unevaluated(rewrite.unevaluated, base, text, edits); !s) return s;
  if (Status s = add_columns(shape, rewrite, base, text, edits); !s) return s;
  if (Status s = literal_edits(rewrite.literals, base, text, edits); !s) return s;
  if (Status s = table_edits(facts, rewrite.tables, base, text, edits); !s) return s;
  return apply(text, std::move(edits));
}

Result<std::string> replace_literals(const StatementFacts& facts, const std::vector<LiteralEdit>& literals) {
  if (facts.begin.location < 0) return cannot("the statement could not be located");
  std::vector<Edit> edits;
  if (Status s = literal_edits(literals, static_cast<size_t>(facts.begin.location), facts.text, edits); !s)
    return s;
  return apply(facts.text, std::move(edits));
}

Result<std::string> splice_tables(const StatementFacts& facts, const std::vector<TableSplice>& splices) {
  if (facts.begin.location < 0) return cannot("the statement could not be located");
  std::vector<Edit> edits;
  const auto base = static_cast<size_t>(facts.begin.location);
  if (Status s = table_edits(facts, splices, base, facts.text, edits); !s) return s;
  return apply(facts.text, std::move(edits));
}

}  // namespace sw::parser
