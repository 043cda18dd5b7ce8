// PREPARE / EXECUTE / DEALLOCATE from libpg_query's tree (prepared_sql.h).
//
// The tree gives the names (folded as PostgreSQL folds them), the number of declared types and
// arguments, and each $n's location; it gives no location for the EXECUTE itself nor the end of
// an argument or type, so those are found with sql_lexer's tokens (outside strings, comments and
// quoted identifiers) and checked against the tree: the lists must have as many items as the tree.
#include "parser/prepared_sql.h"

#include <pg_query.h>

#include <algorithm>
#include <cctype>

#include "parser/guarded_parse.h"
#include "parser/json_tree.h"
#include "parser/sql_lexer.h"

namespace sw::parser {
namespace {

using detail::JsonRef;
using detail::JsonTree;
using detail::SqlToken;

// The statement's tree and tokens, alive together.
class ParsedStatement {
 public:
  explicit ParsedStatement(std::string_view text) : text_(text) {
    Status status;
    if (!detail::guarded_parse(std::string(text), result_, status) || result_.error != nullptr ||
        result_.parse_tree == nullptr || !tree_.parse(result_.parse_tree))
      return;
    JsonRef statements = tree_.root()["stmts"];
    if (statements.size() != 1) return;
    for (JsonRef raw : statements) node_ = raw["stmt"];
    tokens_ok_ = detail::scan_tokens(text, tokens_);
  }
  ~ParsedStatement() { pg_query_free_parse_result(result_); }
  ParsedStatement(const ParsedStatement&) = delete;
  ParsedStatement& operator=(const ParsedStatement&) = delete;

  JsonRef node() const { return node_; }  // {"<Type>": {...}}; Missing when it did not parse
  bool tokens_ok() const { return tokens_ok_ && node_.valid(); }
  const std::vector<SqlToken>& tokens() const { return tokens_; }
  const JsonTree& tree() const { return tree_; }

  std::string_view token_text(size_t i) const {
    return text_.substr(tokens_[i].begin, tokens_[i].end - tokens_[i].begin);
  }
  bool is_word(size_t i, std::string_view lower_word) const {
    if (i >= tokens_.size() || tokens_[i].kind != SqlToken::Kind::Word) return false;
    std::string_view word = token_text(i);
    return word.size() == lower_word.size() &&
           std::equal(word.begin(), word.end(), lower_word.begin(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  }
  bool is_punct(size_t i, char c) const {
    return i < tokens_.size() && tokens_[i].kind == SqlToken::Kind::Punctuation &&
           text_[tokens_[i].begin] == c;
  }
  // The items of the parenthesized list whose '(' is token `open`, split at its own commas (not
  // those inside parentheses or brackets: f(1, 2), ARRAY[1, 2]), each
  // trimmed; `close` is set to the index of its ')'. False when it is not closed.
  bool list_at(size_t open, std::vector<SqlExecute::Argument>& items, size_t& close) const;
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  PgQueryParseResult result_{};
  JsonTree tree_;
  JsonRef node_;
  std::vector<SqlToken> tokens_;
  bool tokens_ok_ = false;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

SqlExecute::Argument trimmed(std::string_view text, uint32_t begin, uint32_t end) {
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  return {std::string(text.substr(begin, end - begin)), begin};
}

bool ParsedStatement::list_at(size_t open, std::vector<SqlExecute::Argument>& items, size_t& close) const {
  int depth = 0;
  uint32_t item_begin = tokens_[open].end;
  for (size_t i = open; i < tokens_.size(); ++i) {
    if (is_punct(i, '(') || is_punct(i, '[')) {
      ++depth;
    } else if (is_punct(i, ']')) {
      --depth;
    } else if (is_punct(i, ')') && --depth == 0) {
      items.push_back(trimmed(text_, item_begin, tokens_[i].begin));
      close = i;
      return true;
    } else if (is_punct(i, ',') && depth == 1) {
      items.push_back(trimmed(text_, item_begin, tokens_[i].begin));
      item_begin = tokens_[i].end;
    }
  }
  return false;
}

// The EXECUTE keyword: the first top-level word "execute" that starts the statement or follows
// what PostgreSQL's grammar puts before one (EXPLAIN's options, CREATE TABLE's AS). Any other
// top-level "execute" word (a table or tablespace name) follows something else; one in a column
// list is not at the top level.
std::optional<size_t> execute_keyword(const ParsedStatement& parsed) {
  int depth = 0;
  std::optional<size_t> previous;  // the last top-level token
  for (size_t i = 0; i < parsed.tokens().size(); ++i) {
    if (parsed.is_punct(i, '(')) ++depth;
    if (parsed.is_punct(i, ')')) --depth;
    if (depth != 0) continue;
    if (parsed.is_word(i, "execute")) {
      const bool starts = !previous;
      const bool follows =
          previous && (parsed.is_word(*previous, "as") || parsed.is_word(*previous, "explain") ||
                       parsed.is_word(*previous, "analyze") || parsed.is_word(*previous, "analyse") ||
                       parsed.is_word(*previous, "verbose") || parsed.is_punct(*previous, ')'));
      if (starts || follows) return i;
    }
    previous = i;
  }
  return std::nullopt;
}

// The ExecuteStmt node, alone or inside EXPLAIN / CREATE TABLE AS.
JsonRef execute_node(JsonRef node, SqlExecute& out) {
  for (int level = 0; level < 3; ++level) {
    const std::string_view type = node.node_type();
    if (type == "ExecuteStmt") return node.body();
    if (type == "ExplainStmt") {
      node = node.body()["query"];
    } else if (type == "CreateTableAsStmt" && node.body()["objtype"].equals("OBJECT_TABLE")) {
      out.create_table_as = true;
      node = node.body()["query"];
    } else {
      return {};
    }
    out.wrapped = true;
  }
  return {};
}

// The EXECUTE's name: what stands between the keyword (token `keyword`) and `limit` (its
// arguments' '(' or its end), one word or one quoted identifier; false when it is anything else
// (a comment between them, say).
bool locate_name(const ParsedStatement& parsed, size_t keyword, uint32_t limit, SqlExecute& execute) {
  const std::string_view text = parsed.text();
  const SqlExecute::Argument name = trimmed(text, parsed.tokens()[keyword].end, limit);
  const auto end = name.at + static_cast<uint32_t>(name.text.size());
  const bool word = keyword + 1 < parsed.tokens().size() && parsed.tokens()[keyword + 1].begin == name.at &&
                    parsed.tokens()[keyword + 1].end == end &&
                    parsed.tokens()[keyword + 1].kind == SqlToken::Kind::Word;
  const bool quoted = name.text.size() >= 2 && name.text.front() == '"' && name.text.back() == '"' &&
                      (keyword + 1 >= parsed.tokens().size() || parsed.tokens()[keyword + 1].begin >= end);
  if (!word && !quoted) return false;
  execute.name_at = name.at;
  execute.name_end = end;
  return true;
}

}  // namespace

size_t SqlPrepare::parameter_count() const {
  size_t count = types.size();
  for (const Param& param : params) count = std::max(count, static_cast<size_t>(param.number));
  return count;
}

std::optional<SqlPrepare> sql_prepare(std::string_view statement) {
  ParsedStatement parsed(statement);
  if (parsed.node().node_type() != "PrepareStmt" || !parsed.tokens_ok()) return std::nullopt;
  JsonRef body = parsed.node().body();
  SqlPrepare prepare;
  prepare.name = body["name"].string();
  prepare.select = body["query"].node_type() == "SelectStmt" && !body["query"].body()["intoClause"];
  // PREPARE name [( types )] AS: the name is one token (a word) or a quoted identifier (none).
  size_t i = parsed.is_word(0, "prepare") ? 1 : parsed.tokens().size();
  if (body["argtypes"].size() > 0) {
    while (i < parsed.tokens().size() && !parsed.is_punct(i, '(')) ++i;
    std::vector<SqlExecute::Argument> types;
    size_t close = 0;
    if (i == parsed.tokens().size() || !parsed.list_at(i, types, close) ||
        types.size() != body["argtypes"].size())
      return std::nullopt;
    for (auto& type : types) prepare.types.push_back(std::move(type.text));
    i = close + 1;
  }
  while (i < parsed.tokens().size() && !parsed.is_word(i, "as")) ++i;
  if (i == parsed.tokens().size()) return std::nullopt;
  const uint32_t query_begin =
      trimmed(statement, parsed.tokens()[i].end, static_cast<uint32_t>(statement.size())).at;
  prepare.query = std::string(statement.substr(query_begin));
  while (!prepare.query.empty() && is_space(prepare.query.back())) prepare.query.pop_back();
  for (JsonRef ref : parsed.tree().find_all("ParamRef")) {
    const int64_t location = ref["location"].integer(-1);
    const int64_t number = ref["number"].integer(0);
    if (location < query_begin || number <= 0) return std::nullopt;
    const auto at = static_cast<uint32_t>(location - query_begin);
    uint32_t length = 1;
    while (at + length < prepare.query.size() &&
           std::isdigit(static_cast<unsigned char>(prepare.query[at + length])))
      ++length;
    if (prepare.query[at] != '$' || length == 1) return std::nullopt;
    prepare.params.push_back({at, length, static_cast<int>(number)});
  }
  std::sort(prepare.params.begin(), prepare.params.end(),
            [](const SqlPrepare::Param& a, const SqlPrepare::Param& b) { return a.at < b.at; });
  return prepare;
}

std::optional<SqlExecute> sql_execute(std::string_view statement) {
  ParsedStatement parsed(statement);
  SqlExecute execute;
  JsonRef body = execute_node(parsed.node(), execute);
  if (!body || !parsed.tokens_ok()) return std::nullopt;
  execute.name = body["name"].string();
  const std::optional<size_t> keyword = execute_keyword(parsed);
  if (!keyword) return std::nullopt;
  const auto& tokens = parsed.tokens();
  execute.begin = tokens[*keyword].begin;
  const size_t arguments = body["params"].size();
  if (arguments > 0) {
    // EXECUTE name ( arguments ): the first '(' after the keyword (a name has none).
    size_t open = *keyword + 1;
    while (open < tokens.size() && !parsed.is_punct(open, '(')) ++open;
    size_t close = 0;
    if (open == tokens.size() || !parsed.list_at(open, execute.args, close) ||
        execute.args.size() != arguments || !locate_name(parsed, *keyword, tokens[open].begin, execute))
      return std::nullopt;
    execute.end = tokens[close].end;
    return execute;
  }
  // Without arguments it ends at CREATE TABLE AS's WITH [NO] DATA (WITH is reserved: no name), or
  // with the statement.
  execute.end = static_cast<uint32_t>(statement.size());
  for (size_t i = *keyword + 1; i < tokens.size(); ++i) {
    if (parsed.is_word(i, "with")) {
      const SqlExecute::Argument clause = trimmed(statement, execute.begin, tokens[i].begin);
      execute.end = clause.at + static_cast<uint32_t>(clause.text.size());
      break;
    }
  }
  if (!locate_name(parsed, *keyword, execute.end, execute)) return std::nullopt;
  return execute;
}

std::optional<std::string> sql_deallocate(std::string_view statement) {
  ParsedStatement parsed(statement);
  if (parsed.node().node_type() != "DeallocateStmt") return std::nullopt;
  return parsed.node().body()["name"].string();  // absent for ALL
}

std::optional<uint32_t> ExpandedSql::source_offset(uint32_t offset) const {
  for (const Piece& piece : pieces) {
    if (offset >= piece.at && offset < piece.at + piece.length) return piece.source + (offset - piece.at);
  }
  return std::nullopt;
}

ExpandedSql rename_execute(std::string_view sql, uint32_t statement_begin, const SqlExecute& execute,
                           std::string_view server_name) {
  ExpandedSql out;
  const uint32_t name_at = statement_begin + execute.name_at;
  const uint32_t name_end = statement_begin + execute.name_end;
  out.pieces.push_back({0, name_at, 0});
  out.sql.append(sql.substr(0, name_at));
  out.sql.append(server_name);
  if (name_end < sql.size()) {
    out.pieces.push_back(
        {static_cast<uint32_t>(out.sql.size()), static_cast<uint32_t>(sql.size()) - name_end, name_end});
    out.sql.append(sql.substr(name_end));
  }
  return out;
}

std::optional<SqlPrepare> protocol_prepare(std::string_view query, size_t declared) {
  auto prepare = sql_prepare("PREPARE p AS " + std::string(query));
  if (!prepare) return std::nullopt;
  prepare->types.assign(declared, std::string());
  return prepare;
}

Result<ExpandedSql> expand_execute(std::string_view sql, uint32_t statement_begin, const SqlExecute& execute,
                                   const SqlPrepare& prepared) {
  if (execute.args.size() != prepared.parameter_count())
    return Status::client("42601",
                          "wrong number of parameters for prepared statement \"" + execute.name + "\"");
  if (execute.create_table_as && !prepared.select)
    return Status::client("42809", "prepared statement is not a SELECT");
  const uint32_t begin = statement_begin + execute.begin;
  const uint32_t end = statement_begin + execute.end;
  if (begin > end || end > sql.size()) return Status::proxy("XX000", "EXECUTE outside its statement's text");
  ExpandedSql out;
  auto copy = [&out, sql](uint32_t from, uint32_t to) {
    if (to <= from) return;
    out.pieces.push_back({static_cast<uint32_t>(out.sql.size()), to - from, from});
    out.sql.append(sql.substr(from, to - from));
  };
  copy(0, begin);
  uint32_t done = 0;
  for (const SqlPrepare::Param& param : prepared.params) {
    out.sql.append(prepared.query, done, param.at - done);
    const SqlExecute::Argument& arg = execute.args[static_cast<size_t>(param.number) - 1];
    out.sql += '(';
    copy(statement_begin + arg.at, statement_begin + arg.at + static_cast<uint32_t>(arg.text.size()));
    out.sql += ')';
    if (static_cast<size_t>(param.number) <= prepared.types.size() &&
        !prepared.types[static_cast<size_t>(param.number) - 1].empty())
      out.sql += "::" + prepared.types[static_cast<size_t>(param.number) - 1];
    done = param.at + param.length;
  }
  out.sql.append(prepared.query, done);
  // A statement that ends in a -- comment would comment out what follows (WITH DATA, ';').
  const size_t last_line = prepared.query.rfind('\n');
  const size_t dashes = prepared.query.rfind("--");
  if (end < sql.size() && dashes != std::string::npos &&
      (last_line == std::string::npos || dashes > last_line))
    out.sql += '\n';
  copy(end, static_cast<uint32_t>(sql.size()));
  return out;
}

}  // namespace sw::parser
