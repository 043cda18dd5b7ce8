#include "session/sql_prepared.h"

#include "parser/sql_scan.h"

namespace sw::session {

using parser::at_end;
using parser::is_ident_char;
using parser::read_identifier;
using parser::read_keyword;
using parser::read_list;
using parser::skip_comment;
using parser::skip_quoted;
using parser::skip_space;
using parser::trim;

std::optional<SqlPrepare> parse_sql_prepare(std::string_view sql) {
  size_t i = 0;
  if (!read_keyword(sql, &i, "prepare")) return std::nullopt;
  auto name = read_identifier(sql, &i);
  if (!name) return std::nullopt;
  SqlPrepare prepare;
  prepare.name = name->text;
  size_t at = skip_space(sql, i);
  if (at < sql.size() && sql[at] == '(') {
    auto types = read_list(sql, &i);
    if (!types) return std::nullopt;
    prepare.types = std::move(*types);
  }
  if (!read_keyword(sql, &i, "as")) return std::nullopt;
  prepare.query = trim(sql.substr(i));
  if (prepare.query.empty()) return std::nullopt;
  return prepare;
}

std::optional<SqlExecute> parse_sql_execute(std::string_view sql) {
  size_t i = 0;
  if (!read_keyword(sql, &i, "execute")) return std::nullopt;
  auto name = read_identifier(sql, &i);
  if (!name) return std::nullopt;
  SqlExecute execute;
  execute.name = name->text;
  size_t at = skip_space(sql, i);
  if (at < sql.size() && sql[at] == '(') {
    auto args = read_list(sql, &i);
    if (!args) return std::nullopt;
    execute.args = std::move(*args);
  }
  if (!at_end(sql, i)) return std::nullopt;
  return execute;
}

std::optional<std::string> parse_sql_deallocate(std::string_view sql) {
  size_t i = 0;
  if (!read_keyword(sql, &i, "deallocate")) return std::nullopt;
  auto name = read_identifier(sql, &i);
  if (!name) return std::nullopt;
  if (!name->quoted && name->text == "prepare" && !at_end(sql, i)) {
    name = read_identifier(sql, &i);
    if (!name) return std::nullopt;
  }
  if (!at_end(sql, i)) return std::nullopt;
  if (!name->quoted && name->text == "all") return std::string();
  return name->text;
}

std::optional<std::string> substitute_parameters(std::string_view query, const std::vector<std::string>& args,
                                                 const std::vector<std::string>& types) {
  if (args.size() < types.size()) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < query.size();) {
    size_t past = skip_quoted(query, i);
    if (past == i) past = skip_comment(query, i);
    if (past != i) {
      out.append(query.substr(i, past - i));
      i = past;
      continue;
    }
    bool parameter = query[i] == '$' && i + 1 < query.size() &&
                     std::isdigit(static_cast<unsigned char>(query[i + 1])) != 0 &&
                     (i == 0 || !is_ident_char(query[i - 1]));
    if (!parameter) {
      out += query[i++];
      continue;
    }
    size_t end = i + 1;
    size_t n = 0;
    while (end < query.size() && std::isdigit(static_cast<unsigned char>(query[end])) != 0) {
      n = n * 10 + static_cast<size_t>(query[end] - '0');
      if (n > args.size()) return std::nullopt;
      ++end;
    }
    if (n == 0) return std::nullopt;
    out += "(" + args[n - 1] + ")";
    if (n <= types.size()) out += "::" + types[n - 1];
    i = end;
  }
  return out;
}

const SqlPrepare* SqlStatements::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

void SqlStatements::add(SqlPrepare statement) {
  std::string name = statement.name;
  by_name_[name] = std::move(statement);
}

std::optional<std::string> SqlStatements::expand_execute(std::string_view sql) const {
  auto execute = parse_sql_execute(sql);
  if (!execute) return std::nullopt;
  const SqlPrepare* prepared = find(execute->name);
  if (prepared == nullptr) return std::nullopt;
  if (execute->args.size() != prepared->types.size() && !prepared->types.empty()) return std::nullopt;
  return substitute_parameters(prepared->query, execute->args, prepared->types);
}

}  // namespace sw::session
