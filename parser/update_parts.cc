// update_parts(): an UPDATE's text cut at its top-level keywords (docs/architecture.md §6.3,
// "Updates that move rows"), so an UPDATE of the key can be run as a DELETE of the old rows and
// the SET list evaluated on them, every part as the client wrote it.
#include <cctype>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser {
namespace {

using detail::SqlToken;

Status cannot(const std::string& why) {
  return Status::client("0A000", "cannot run this UPDATE of the key as a move between shards: " + why);
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool is_punctuation(std::string_view text, const SqlToken& token, char c) {
  return token.kind == SqlToken::Kind::Punctuation && text[token.begin] == c;
}

// The text between two offsets with its surrounding space removed.
std::string_view trimmed(std::string_view text, size_t begin, size_t end) {
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

// The index of the token closing the bracket opened by token `open`; tokens.size() when none.
size_t closing(std::string_view text, const std::vector<SqlToken>& tokens, size_t open) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (is_punctuation(text, tokens[i], '(') || is_punctuation(text, tokens[i], '[')) ++depth;
    if ((is_punctuation(text, tokens[i], ')') || is_punctuation(text, tokens[i], ']')) && --depth == 0)
      return i;
  }
  return tokens.size();
}

// The top-level keywords of the UPDATE, as token indexes (0: absent), and the top-level commas
// of its SET list (token indexes).
struct Cuts {
  size_t update = 0, set = 0, from = 0, where = 0, returning = 0;
  std::vector<size_t> commas;
};

Status find_cuts(std::string_view text, const std::vector<SqlToken>& tokens, Cuts& cuts) {
  int depth = 0;
  const bool with = detail::token_is_word(text, tokens.front(), "with");
  for (size_t i = 1; i < tokens.size(); ++i) {
    const SqlToken& token = tokens[i];
    if (token.kind == SqlToken::Kind::Punctuation) {
      const char c = text[token.begin];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == ',' && depth == 0 && cuts.set != 0 && cuts.from == 0 && cuts.where == 0 && cuts.returning == 0)
        cuts.commas.push_back(i);
      continue;
    }
    if (depth != 0) continue;
    auto is = [&](std::string_view word) { return detail::token_is_word(text, token, word); };
    if (with && cuts.update == 0) {
      if (is("update")) cuts.update = i;
      continue;
    }
    if (cuts.set == 0 && is("set")) cuts.set = i;
    const bool in_set = cuts.set != 0 && cuts.where == 0 && cuts.returning == 0;
    const bool distinct_from =
        detail::token_is_word(text, tokens[i - 1], "distinct");  // IS [NOT] DISTINCT FROM
    if (in_set && cuts.from == 0 && is("from") && !distinct_from) cuts.from = i;
    if (in_set && is("where")) cuts.where = i;
    if (cuts.set != 0 && cuts.returning == 0 && is("returning")) cuts.returning = i;
  }
  if (with && cuts.update == 0) return cannot("no UPDATE after its WITH clause");
  if (cuts.set == 0) return cannot("no SET found");
  return Status::ok();
}

// The expression of one SET item (`column = expression`): after the '=' that follows its column
// name (a word or a quoted identifier); empty when the item has another shape.
std::string_view item_value(std::string_view item) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < item.size() && is_space(item[i])) ++i;
  };
  skip_space();
  if (i < item.size() && item[i] == '"') {
    for (++i; i < item.size(); ++i) {
      if (item[i] == '"' && (i + 1 == item.size() || item[i + 1] != '"')) break;
      if (item[i] == '"') ++i;
    }
    ++i;
  } else {
    while (i < item.size() && (std::isalnum(static_cast<unsigned char>(item[i])) || item[i] == '_' ||
                               static_cast<unsigned char>(item[i]) >= 0x80))
      ++i;
  }
  skip_space();
  if (i >= item.size() || item[i] != '=') return {};
  return item.substr(i + 1);
}

// A multi-column SET item, tokens [first, last) ending at offset `end`: `(a, b) = (x, y)`,
// `= ROW(x, y)` or `= (SELECT ...)`, one value per column into `parts`.
Status add_columns(std::string_view text, const std::vector<SqlToken>& tokens, size_t first, size_t last,
                   size_t end, UpdateParts& parts) {
  auto shape = [] {
    return cannot("a SET item is not `column = expression` nor `(columns) = (expressions)`");
  };
  const size_t names_end = closing(text, tokens, first);
  if (names_end + 1 >= last) return shape();
  size_t columns = 1;
  for (size_t i = first + 1; i < names_end; ++i) columns += is_punctuation(text, tokens[i], ',') ? 1 : 0;
  const std::string_view equals = trimmed(text, tokens[names_end].end, tokens[names_end + 1].begin);
  size_t open = names_end + 1;
  if (open < last && detail::token_is_word(text, tokens[open], "row")) ++open;
  if (equals != "=" || open >= last || !is_punctuation(text, tokens[open], '(')) return shape();
  const size_t close = closing(text, tokens, open);
  if (close + 1 != last || !trimmed(text, tokens[close].end, end).empty()) return shape();
  if (open + 1 < close && detail::token_is_word(text, tokens[open + 1], "select")) {
    parts.queries.emplace_back(text.substr(tokens[open].end, tokens[close].begin - tokens[open].end));
    for (size_t f = 0; f < columns; ++f)
      parts.values.push_back({"", static_cast<int>(parts.queries.size() - 1), f});
    return Status::ok();
  }
  size_t begin = tokens[open].end;
  size_t values = 0;
  for (size_t i = open + 1; i <= close; ++i) {
    if (i < close && (is_punctuation(text, tokens[i], '(') || is_punctuation(text, tokens[i], '['))) {
      i = closing(text, tokens, i);
      continue;
    }
    if (i < close && !is_punctuation(text, tokens[i], ',')) continue;
    parts.values.push_back({std::string(text.substr(begin, tokens[i].begin - begin)), -1, 0});
    begin = tokens[i].end;
    ++values;
  }
  if (values != columns) return cannot("a SET item's column list and value list differ in length");
  return Status::ok();
}

// The SET items between token `set` and the first of FROM, WHERE, RETURNING (offset `set_end`).
Status add_items(std::string_view text, const std::vector<SqlToken>& tokens, const Cuts& cuts, size_t set_end,
                 UpdateParts& parts) {
  std::vector<size_t> ends = cuts.commas;  // token index ending each item
  ends.push_back(cuts.from != 0        ? cuts.from
                 : cuts.where != 0     ? cuts.where
                 : cuts.returning != 0 ? cuts.returning
                                       : tokens.size());
  size_t first = cuts.set + 1;
  for (size_t last : ends) {
    const size_t begin = tokens[first - 1].end;
    const size_t end = last < tokens.size() ? tokens[last].begin : set_end;
    if (first < last && is_punctuation(text, tokens[first], '(') &&
        trimmed(text, begin, tokens[first].begin).empty()) {
      if (Status added = add_columns(text, tokens, first, last, end, parts); !added.is_ok()) return added;
    } else {
      const std::string_view value = item_value(text.substr(begin, end - begin));
      if (value.empty()) return cannot("a SET item is not `column = expression`");
      parts.values.push_back({std::string(value), -1, 0});
    }
    first = last + 1;
  }
  return Status::ok();
}

}  // namespace

Result<UpdateParts> update_parts(const StatementFacts& facts) {
  if (facts.node_type != "UpdateStmt") return cannot("not a plain UPDATE");
  const std::string_view text = facts.text;
  std::vector<SqlToken> tokens;
  if (!detail::scan_tokens(text, tokens) || tokens.empty())
    return cannot("its text has a form the proxy does not edit");
  Cuts cuts;
  if (Status found = find_cuts(text, tokens, cuts); !found.is_ok()) return found;
  if (cuts.where != 0 && cuts.where + 1 < tokens.size() &&
      detail::token_is_word(text, tokens[cuts.where + 1], "current"))
    return cannot("WHERE CURRENT OF names a cursor of one shard");
  size_t end = text.size();
  while (end > 0 && (is_space(text[end - 1]) || text[end - 1] == ';')) --end;
  auto part = [&](size_t keyword, size_t until) {
    return std::string(text.substr(tokens[keyword].end, until - tokens[keyword].end));
  };
  const size_t returning_at = cuts.returning != 0 ? tokens[cuts.returning].begin : end;
  const size_t where_at = cuts.where != 0 ? tokens[cuts.where].begin : returning_at;
  const size_t from_at = cuts.from != 0 ? tokens[cuts.from].begin : where_at;
  UpdateParts parts;
  if (cuts.update != 0) parts.with = part(0, tokens[cuts.update].begin);
  parts.target = part(cuts.update, tokens[cuts.set].begin);
  if (Status added = add_items(text, tokens, cuts, from_at, parts); !added.is_ok()) return added;
  if (cuts.from != 0) parts.from = part(cuts.from, where_at);
  if (cuts.where != 0) parts.where = part(cuts.where, returning_at);
  if (cuts.returning != 0) parts.returning = part(cuts.returning, end);
  return parts;
}

}  // namespace sw::parser
