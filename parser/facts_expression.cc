// Expression texts of a SELECT shape (facts_shape.cc): ORDER BY expressions the merge selects as
// hidden columns, and HAVING the proxy evaluates, with the text span the shards' SQL drops.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <utility>

#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

// Where an expression's text ends: the first ',' ';' ')' or stop word (ORDER BY: ASC / DESC /
// NULLS / USING / LIMIT / OFFSET / FETCH / FOR) outside parentheses and quotes; 0 when it holds a
// comment, a dollar quote or an E'' string (not cut out).
constexpr const char* kOrderStops[] = {"asc", "desc", "nulls", "using", "limit", "offset", "fetch", "for"};
constexpr const char* kHavingStops[] = {"order", "window", "limit", "offset", "fetch", "for"};
constexpr const char* kSelectStops[] = {"as",     "from",      "into",   "where",    "group", "having",
                                        "window", "order",     "limit",  "offset",   "fetch", "for",
                                        "union",  "intersect", "except", "returning"};

template <size_t N>
size_t expression_end(std::string_view sql, size_t begin, const char* const (&kStops)[N]) {
  int depth = 0;
  size_t i = begin;
  for (; i < sql.size(); ++i) {
    const char c = sql[i];
    const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
    if (c == '\'' || c == '"') {
      if (c == '\'' && i > begin && (sql[i - 1] == 'E' || sql[i - 1] == 'e')) return 0;
      size_t close = i + 1;
      for (; close < sql.size(); ++close) {
        if (sql[close] != c) continue;
        if (close + 1 < sql.size() && sql[close + 1] == c) {
          ++close;
          continue;
        }
        break;
      }
      if (close >= sql.size()) return 0;
      i = close;
    } else if ((c == '-' && next == '-') || (c == '/' && next == '*') ||
               (c == '$' && !std::isdigit(static_cast<unsigned char>(next)))) {
      return 0;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (depth-- == 0) break;
    } else if (depth == 0 && (c == ',' || c == ';')) {
      break;
    } else if (depth == 0 && is_word_char(c) && (i == begin || !is_word_char(sql[i - 1]))) {
      size_t word_end = i;
      std::string word;
      while (word_end < sql.size() && is_word_char(sql[word_end]))
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(sql[word_end++]))));
      if (std::find(std::begin(kStops), std::end(kStops), word) != std::end(kStops)) break;
      i = word_end - 1;
    }
  }
  while (i > begin && std::isspace(static_cast<unsigned char>(sql[i - 1]))) --i;
  return i;
}

}  // namespace

namespace {

// Where an expression's text begins: its lowest location (an A_Expr's own is its operator's) with
// the parentheses just before it; npos when it holds a subquery or has no location.
size_t expression_begin(std::string_view sql, JsonRef node) {
  int64_t lowest = -1;
  bool subquery = false;
  for_each_object(node, [&](JsonRef object) {
    if (object.node_type() == "SubLink") subquery = true;
    const int64_t at = object["location"].integer(-1);
    if (at >= 0 && (lowest < 0 || at < lowest)) lowest = at;
  });
  if (subquery || lowest < 0 || static_cast<size_t>(lowest) >= sql.size()) return std::string_view::npos;
  size_t begin = static_cast<size_t>(lowest);
  for (size_t k = begin; k > 0 && (sql[k - 1] == '(' || std::isspace(static_cast<unsigned char>(sql[k - 1])));
       --k) {
    if (sql[k - 1] == '(') begin = k - 1;
  }
  return begin;
}

}  // namespace

// The SQL text of an ORDER BY expression, from its lowest location (an A_Expr's own is its
// operator's) with the parentheses just before it; "" when it holds a subquery or cannot be cut
// out.
std::string order_expression(std::string_view sql, JsonRef node) {
  const size_t begin = expression_begin(sql, node);
  if (begin == std::string_view::npos) return {};
  const size_t end = expression_end(sql, begin, kOrderStops);
  return end > begin ? std::string(sql.substr(begin, end - begin)) : std::string();
}

std::pair<int, int> expression_span(std::string_view sql, JsonRef node, bool select_item) {
  const size_t begin = expression_begin(sql, node);
  if (begin == std::string_view::npos) return {-1, -1};
  const size_t end =
      select_item ? expression_end(sql, begin, kSelectStops) : expression_end(sql, begin, kOrderStops);
  if (end <= begin) return {-1, -1};
  return {static_cast<int>(begin), static_cast<int>(end)};
}

namespace {

bool is_having_word(std::string_view sql, size_t end) {
  if (end < 6 || (end > 6 && is_word_char(sql[end - 7]))) return false;
  std::string keyword(sql.substr(end - 6, 6));
  for (char& c : keyword) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return keyword == "having";
}

}  // namespace

// A comparison of an output column with a constant or a parameter (either side), or AND / OR /
// NOT of such.
bool FactsBuilder::having_term(JsonRef node, HavingTerm& out) {
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  if (type == "BoolExpr") {
    JsonRef op = body["boolop"];
    out.kind = op.equals("AND_EXPR")  ? HavingTerm::Kind::And
               : op.equals("OR_EXPR") ? HavingTerm::Kind::Or
                                      : HavingTerm::Kind::Not;
    for (JsonRef arg : body["args"]) {
      out.children.emplace_back();
      if (!having_term(arg, out.children.back())) return false;
    }
    return !out.children.empty();
  }
  if (type != "A_Expr" || !body["kind"].equals("AEXPR_OP") || body["name"].size() != 1) return false;
  std::string op = (*body["name"].begin()).body()["sval"].string();
  if (op == "!=") op = "<>";
  static const char* const kFlipped[][2] = {{"=", "="},   {"<>", "<>"}, {"<", ">"},
                                            {"<=", ">="}, {">", "<"},   {">=", "<="}};
  const char* flipped = nullptr;
  for (const auto& pair : kFlipped) {
    if (op == pair[0]) flipped = pair[1];
  }
  if (flipped == nullptr) return false;
  JsonRef left = body["lexpr"], right = body["rexpr"];
  auto is_operand = [](JsonRef side) {
    return side.node_type() == "A_Const" || side.node_type() == "ParamRef";
  };
  if (is_operand(left)) {  // 5 < count(*): count(*) > 5
    std::swap(left, right);
    op = flipped;
  }
  if (!is_operand(right) || is_operand(left)) return false;
  Value constant = value(right);
  out.output = output_of(left, false);
  if (out.output < 0) out.output = having_aggregate(left);
  if (out.output < 0) out.output = hidden_expression(left);
  if (out.output < 0 || !constant.cast.empty() ||
      (constant.kind != ValueKind::Number && constant.kind != ValueKind::String &&
       constant.kind != ValueKind::Bool && constant.kind != ValueKind::Null &&
       constant.kind != ValueKind::Param))
    return false;
  out.op = op;
  out.constant = std::move(constant);
  return true;
}

// HAVING the proxy evaluates, and its text: from the HAVING keyword to the first ORDER / WINDOW /
// LIMIT / OFFSET / FETCH / FOR outside parentheses.
void FactsBuilder::having_shape(JsonRef having) {
  SelectShape& shape = out_.select;
  HavingTerm root;
  if (!having_term(having, root)) return;
  int64_t lowest = -1;
  for_each_object(having, [&](JsonRef object) {
    const int64_t at = object["location"].integer(-1);
    if (at >= 0 && (lowest < 0 || at < lowest)) lowest = at;
  });
  if (lowest < 0 || static_cast<size_t>(lowest) > sql_.size()) return;
  auto k = static_cast<size_t>(lowest);
  while (k > 0 && (sql_[k - 1] == '(' || std::isspace(static_cast<unsigned char>(sql_[k - 1])))) --k;
  const size_t expression = k;
  if (!is_having_word(sql_, k)) return;
  size_t start = expression;
  while (start < sql_.size() && sql_[start] != '(' && std::isspace(static_cast<unsigned char>(sql_[start])))
    ++start;
  const size_t end = expression_end(sql_, start, kHavingStops);
  if (end <= start) return;
  shape.having.push_back(std::move(root));
  shape.having_begin = static_cast<int>(k - 6);
  shape.having_end = static_cast<int>(end);
}

}  // namespace sw::parser::detail
