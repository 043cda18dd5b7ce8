// restrict_write(): an UPDATE's or DELETE's text with one more condition ANDed to its WHERE (or
// a WHERE added), spliced at the statement's own top-level keywords so everything else stays
// exactly as the client wrote it (docs/architecture.md §6.3, "Writes without a key").
#include <cctype>

#include "parser/analyze.h"
#include "parser/sql_lexer.h"

namespace sw::parser {
namespace {

Status cannot(const std::string& why) {
  return Status::client("0A000", "cannot restrict this write to the shard's own rows: " + why);
}

}  // namespace

Result<std::string> restrict_write(const StatementFacts& facts, const std::string& condition) {
  if (facts.node_type != "UpdateStmt" && facts.node_type != "DeleteStmt")
    return cannot("not a plain UPDATE or DELETE");
  const std::string_view text = facts.text;
  std::vector<detail::SqlToken> tokens;
  if (!detail::scan_tokens(text, tokens)) return cannot("its text has a form the proxy does not edit");
  size_t where = tokens.size();
  size_t returning = tokens.size();
  int depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const detail::SqlToken& token = tokens[i];
    if (token.kind == detail::SqlToken::Kind::Punctuation) {
      const char c = text[token.begin];
      if (c == '(' || c == '[') ++depth;
      if (c == ')' || c == ']') --depth;
      continue;
    }
    if (depth != 0) continue;
    if (where == tokens.size() && returning == tokens.size() && detail::token_is_word(text, token, "where"))
      where = i;
    if (returning == tokens.size() && detail::token_is_word(text, token, "returning")) returning = i;
  }
  if (where + 1 < tokens.size() && detail::token_is_word(text, tokens[where + 1], "current"))
    return cannot("WHERE CURRENT OF names a cursor of one shard");
  // The end of the WHERE condition: RETURNING, else the statement's end (before a trailing ';'
  // and spaces; a newline first, so that a trailing -- comment cannot swallow what follows).
  size_t end = text.size();
  std::string tail;
  if (returning < tokens.size()) {
    end = tokens[returning].begin;
  } else {
    while (end > 0 && (std::isspace(static_cast<unsigned char>(text[end - 1])) || text[end - 1] == ';'))
      --end;
    tail = "\n";
  }
  std::string out;
  out.reserve(text.size() + condition.size() + 16);
  if (where < tokens.size()) {
    const size_t after = tokens[where].end;
    out.append(text.substr(0, after));
    out += " (";
    out.append(text.substr(after, end - after));
    out += tail + ") AND " + condition + " ";
  } else {
    out.append(text.substr(0, end));
    out += tail + " WHERE " + condition + " ";
  }
  out.append(text.substr(end));
  return out;
}

}  // namespace sw::parser
