// string_agg / array_agg calls the merge combines in their order (docs/architecture.md §6.3,
// "Ordered aggregates"): the shard columns each shard answers for one call.
#include <cctype>
#include <initializer_list>
#include <string>
#include <vector>

#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

// string_agg's separator as a string literal (a cast to text or varchar allowed) or NULL: its
// value; false for anything else (a parameter, a column, an expression).
bool separator_literal(JsonRef node, std::string& out) {
  if (node.node_type() == "TypeCast") {
    std::string type;
    for (JsonRef part : node.body()["typeName"]["names"]) type = part.body()["sval"].string();
    if (type != "text" && type != "varchar") return false;
    node = node.body()["arg"];
  }
  if (node.node_type() != "A_Const") return false;
  JsonRef body = node.body();
  if (body["isnull"].boolean()) {
    out.clear();  // a NULL separator adds nothing between the values
    return true;
  }
  if (!body["sval"]) return false;
  out = body["sval"]["sval"].string();
  return true;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

std::string trimmed(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string lower_word(std::string_view sql, size_t at, size_t& end) {
  std::string word;
  for (end = at; end < sql.size() && is_word_char(sql[end]); ++end)
    word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(sql[end]))));
  return word;
}

// The top-level pieces of a call's parenthesized text from its '(' at `open`: the arguments
// (split at commas) before ORDER BY, the sort items after it, trimmed. False on a comment, a
// dollar quote or text that does not close.
bool split_call(std::string_view sql, size_t open, std::vector<std::string>& args,
                std::vector<std::string>& sorts) {
  std::vector<std::string>* into = &args;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open + 1; i < sql.size(); ++i) {
    const char c = sql[i];
    const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
    if (c == '\'' || c == '"') {
      // An E'' string: a backslash escapes the character after it. \' is refused: the call's span
      // (call_end) reads quotes without escapes.
      const bool escapes = c == '\'' && (sql[i - 1] == 'E' || sql[i - 1] == 'e');
      size_t close = i + 1;
      while (close < sql.size() && (sql[close] != c || (close + 1 < sql.size() && sql[close + 1] == c))) {
        if (escapes && sql[close] == '\\' && close + 1 < sql.size() && sql[close + 1] == '\'') return false;
        close += sql[close] == c || (escapes && sql[close] == '\\') ? 2 : 1;
      }
      if (close >= sql.size()) return false;
      i = close;
    } else if ((c == '-' && next == '-') || (c == '/' && next == '*') ||
               (c == '$' && !std::isdigit(static_cast<unsigned char>(next)))) {
      return false;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && depth-- == 0) {
      into->push_back(trimmed(sql.substr(start, i - start)));
      return true;
    } else if (depth == 0 && c == ',') {
      into->push_back(trimmed(sql.substr(start, i - start)));
      start = i + 1;
    } else if (is_word_char(c) && !is_word_char(sql[i - 1])) {
      size_t end = i;
      const std::string word = lower_word(sql, i, end);
      size_t after = end;
      while (after < sql.size() && std::isspace(static_cast<unsigned char>(sql[after]))) ++after;
      size_t by_end = after;
      if (depth == 0 && into == &args && word == "order" && lower_word(sql, after, by_end) == "by") {
        into->push_back(trimmed(sql.substr(start, i - start)));
        into = &sorts;
        start = by_end;
        end = by_end;
      }
      i = end - 1;
    }
  }
  return false;
}

// A sort item's text without the direction words the tree says it has; "" when they are not there.
std::string sort_expression(std::string item, JsonRef sort) {
  auto drop_last = [&](std::initializer_list<const char*> words) {
    size_t begin = item.size();
    while (begin > 0 && is_word_char(item[begin - 1])) --begin;
    size_t end = 0;
    const std::string word = lower_word(item, begin, end);
    for (const char* expected : words) {
      if (word != expected) continue;
      item = trimmed(std::string_view(item).substr(0, begin));
      return true;
    }
    return false;
  };
  if (!sort["sortby_nulls"].equals("SORTBY_NULLS_DEFAULT") && sort["sortby_nulls"] &&
      (!drop_last({"first", "last"}) || !drop_last({"nulls"})))
    return {};
  if ((sort["sortby_dir"].equals("SORTBY_ASC") || sort["sortby_dir"].equals("SORTBY_DESC")) &&
      !drop_last({"asc", "desc"}))
    return {};
  return item;
}

// The value's text: the first argument without a leading DISTINCT.
std::string value_expression(const std::string& arg, bool distinct) {
  if (!distinct) return arg;
  size_t end = 0;
  if (lower_word(arg, 0, end) != "distinct") return {};
  return trimmed(std::string_view(arg).substr(end));
}

}  // namespace

std::optional<OrderedAggregate> ordered_aggregate(std::string_view sql, JsonRef call,
                                                  std::string_view filter) {
  std::string name;
  for (JsonRef part : call["funcname"]) name = part.body()["sval"].string();
  OrderedAggregate out;
  out.string_agg = name == "string_agg";
  if (name != "array_agg" && !out.string_agg) return std::nullopt;
  if (call["agg_within_group"].boolean() || call["func_variadic"].boolean() || call["agg_star"].boolean())
    return std::nullopt;
  JsonRef args = call["args"];
  if (args.size() != (out.string_agg ? 2U : 1U)) return std::nullopt;
  if (out.string_agg) {
    auto it = args.begin();
    ++it;
    if (!separator_literal(*it, out.separator)) return std::nullopt;
  }
  out.distinct = call["agg_distinct"].boolean();
  const auto begin = static_cast<size_t>(call["location"].integer(-1));
  const size_t open = begin < sql.size() ? sql.find('(', begin) : std::string_view::npos;
  std::vector<std::string> arg_texts, sort_texts;
  if (open == std::string_view::npos || !split_call(sql, open, arg_texts, sort_texts)) return std::nullopt;
  if (arg_texts.size() != args.size() || sort_texts.size() != call["agg_order"].size()) return std::nullopt;
  const std::string value_text = value_expression(arg_texts[0], out.distinct);
  if (value_text.empty()) return std::nullopt;
  std::vector<std::string> keys;
  std::string order;
  size_t k = 0;
  for (JsonRef item : call["agg_order"]) {
    JsonRef sort = item.body();
    if (sort["sortby_dir"].equals("SORTBY_USING")) return std::nullopt;
    std::string key = sort_expression(sort_texts[k++], sort);
    if (key.empty()) return std::nullopt;
    const bool descending = sort["sortby_dir"].equals("SORTBY_DESC");
    const bool nulls_first = sort["sortby_nulls"].equals("SORTBY_NULLS_FIRST") ||
                             (descending && !sort["sortby_nulls"].equals("SORTBY_NULLS_LAST"));
    order += (order.empty() ? " ORDER BY " : ", ") + key + (descending ? " DESC" : " ASC") +
             (nulls_first ? " NULLS FIRST" : " NULLS LAST");
    out.descending.push_back(descending);
    out.nulls_first.push_back(nulls_first);
    keys.push_back(std::move(key));
  }
  if (out.distinct && keys.empty()) {  // DISTINCT alone: the merge orders by the value itself
    order = " ORDER BY " + value_text + " ASC NULLS LAST";
    out.descending.push_back(false);
    out.nulls_first.push_back(false);
    keys.push_back(value_text);
  }
  const std::string head = out.distinct ? "array_agg(DISTINCT " : "array_agg(";
  const std::string tail = order + ")" + std::string(filter);
  // One array per aggregated expression: the value first, then each sort key.
  keys.insert(keys.begin(), value_text);
  for (const std::string& key : keys) {
    std::string column = head;
    column.append(key).append(tail);
    out.columns.push_back(std::move(column));
  }
  return out;
}

}  // namespace sw::parser::detail
