// update_parts(): an UPDATE's text cut at its top-level keywords (docs/architecture.md §6.3,
// "Updates that move rows"), so an UPDATE of the key can be run as a DELETE of the old rows and
// the SET list evaluated on them, every part as the client wrote it.
#include <cctype>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser {
namespace {

Status cannot(const std::string& why) {
  return Status::client("0A000", "cannot run this UPDATE of the key as a move between shards: " + why);
}

// The expression of one SET item (`column = expression`): after the '=' that follows its column
// name (a word or a quoted identifier); empty when the item has another shape.
std::string_view item_value(std::string_view item) {
  size_t i = 0;
  auto skip_space = [&] {
    while (i < item.size() && std::isspace(static_cast<unsigned char>(item[i]))) ++i;
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

}  // namespace

Result<UpdateParts> update_parts(const StatementFacts& facts) {
  if (facts.node_type != "UpdateStmt") return cannot("not a plain UPDATE");
  const std::string_view text = facts.text;
  std::vector<detail::SqlToken> tokens;
  if (!detail::scan_tokens(text, tokens)) return cannot("its text has a form the proxy does not edit");
  if (tokens.empty() || !detail::token_is_word(text, tokens.front(), "update"))
    return cannot("it has a WITH clause");
  size_t set = 0, where = 0, returning = 0;
  std::vector<size_t> commas;  // top-level commas of the SET list
  int depth = 0;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const detail::SqlToken& token = tokens[i];
    if (token.kind == detail::SqlToken::Kind::Punctuation) {
      const char c = text[token.begin];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      if (c == ',' && depth == 0 && set != 0 && where == 0 && returning == 0) commas.push_back(token.begin);
      continue;
    }
    if (depth != 0) continue;
    if (set == 0 && detail::token_is_word(text, token, "set")) set = i;
    if (set != 0 && where == 0 && returning == 0 && detail::token_is_word(text, token, "from"))
      return cannot("UPDATE ... FROM reads other tables (join them in a subquery of the WHERE)");
    if (set != 0 && where == 0 && returning == 0 && detail::token_is_word(text, token, "where")) where = i;
    if (set != 0 && returning == 0 && detail::token_is_word(text, token, "returning")) returning = i;
  }
  if (set == 0) return cannot("no SET found");
  if (where != 0 && where + 1 < tokens.size() && detail::token_is_word(text, tokens[where + 1], "current"))
    return cannot("WHERE CURRENT OF names a cursor of one shard");
  size_t end = text.size();
  while (end > 0 && (std::isspace(static_cast<unsigned char>(text[end - 1])) || text[end - 1] == ';')) --end;
  UpdateParts parts;
  const size_t set_end = where != 0 ? tokens[where].begin : returning != 0 ? tokens[returning].begin : end;
  parts.target = std::string(text.substr(tokens[0].end, tokens[set].begin - tokens[0].end));
  size_t begin = tokens[set].end;
  commas.push_back(set_end);
  for (size_t comma : commas) {
    const std::string_view value = item_value(text.substr(begin, comma - begin));
    if (value.empty()) return cannot("a SET item is not `column = expression`");
    parts.values.emplace_back(value);
    begin = comma + 1;
  }
  if (where != 0) {
    const size_t where_end = returning != 0 ? tokens[returning].begin : end;
    parts.where = std::string(text.substr(tokens[where].end, where_end - tokens[where].end));
  }
  if (returning != 0)
    parts.returning = std::string(text.substr(tokens[returning].end, end - tokens[returning].end));
  return parts;
}

}  // namespace sw::parser
