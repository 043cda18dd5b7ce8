// Expressions over aggregates of a SELECT shape (facts_shape.cc): `sum(a) / count(*)`,
// `round(avg(x), 2)`, `coalesce(max(x), 0)` in the select list, HAVING or ORDER BY. Each aggregate
// inside becomes an output column of its own (a selected one, or a hidden one the shards select
// first, as for HAVING's aggregates); the merge computes the expression from the combined values
// (docs/architecture.md §6.3). What is described here is all the merge computes: + - * / % and
// unary minus, casts to int2/int4/int8/numeric/float8, round, abs, ceil/ceiling, floor, greatest,
// least, coalesce, nullif, CASE (facts_aggregate_case.cc), over aggregates, group keys, number
// constants and parameters.
#include <cctype>

#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

constexpr int kMaxExpressionDepth = 32;

std::string last_name(JsonRef names) {
  std::string name;
  for (JsonRef part : names) name = part.body()["sval"].string();
  return name;
}

// A function or type named by itself or under pg_catalog.
bool catalog_name(JsonRef names) {
  if (names.size() == 1) return true;
  return names.size() == 2 && (*names.begin()).body()["sval"].string() == "pg_catalog";
}

bool number_type(const std::string& type) {
  return type == "int2" || type == "int4" || type == "int8" || type == "numeric" || type == "float8";
}

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

// An alias written without AS ends the item's text: the span without it. The alias as PostgreSQL
// folds it; false when the text does not end with it.
bool strip_implicit_alias(std::string_view sql, const std::string& alias, int begin, int& end) {
  auto at = static_cast<size_t>(end);
  size_t start = at;
  if (at > 0 && sql[at - 1] == '"') {
    start = sql.rfind('"', at - 2);
    if (start == std::string_view::npos || start < static_cast<size_t>(begin)) return false;
    std::string written(sql.substr(start + 1, at - start - 2));
    std::string unquoted;
    for (size_t i = 0; i < written.size(); ++i) {
      unquoted += written[i];
      if (written[i] == '"') ++i;
    }
    if (unquoted != alias) return false;
  } else {
    while (start > static_cast<size_t>(begin) && is_word(sql[start - 1])) --start;
    std::string folded;
    for (size_t i = start; i < at; ++i)
      folded += static_cast<char>(std::tolower(static_cast<unsigned char>(sql[i])));
    if (folded != alias) return false;
  }
  if (start == static_cast<size_t>(begin) || !std::isspace(static_cast<unsigned char>(sql[start - 1])))
    return false;
  while (start > static_cast<size_t>(begin) && std::isspace(static_cast<unsigned char>(sql[start - 1])))
    --start;
  end = static_cast<int>(start);
  return true;
}

// Whether the word after `end` (white space skipped) is AS.
bool as_follows(std::string_view sql, size_t end) {
  while (end < sql.size() && std::isspace(static_cast<unsigned char>(sql[end]))) ++end;
  return end + 2 <= sql.size() && std::tolower(static_cast<unsigned char>(sql[end])) == 'a' &&
         std::tolower(static_cast<unsigned char>(sql[end + 1])) == 's' &&
         (end + 2 == sql.size() || !is_word(sql[end + 2]));
}

}  // namespace

std::optional<AggregateExpression> FactsBuilder::aggregate_expression(JsonRef node, int depth) {
  using Kind = AggregateExpression::Kind;
  if (depth > kMaxExpressionDepth) return std::nullopt;
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  AggregateExpression out;
  auto add_args = [&](JsonRef list) {
    for (JsonRef arg : list) {
      auto child = aggregate_expression(arg, depth + 1);
      if (!child) return false;
      out.args.push_back(std::move(*child));
    }
    return true;
  };
  if (type == "FuncCall") return aggregate_call(node, depth);
  if (type == "ColumnRef") {  // a selected group key, the same expression
    out.kind = Kind::Output;
    out.output = output_of(node, false);
    const std::string shape = shape_of(node);
    if (out.output < 0 || static_cast<size_t>(out.output) >= out_.select.outputs.size() || shape.empty() ||
        out_.select.outputs[static_cast<size_t>(out.output)].shape != shape)
      return std::nullopt;
    return out;
  }
  if (type == "A_Const" || type == "ParamRef") {
    out.constant = value(node);
    out.kind = type == "ParamRef" ? Kind::Param : Kind::Constant;
    if (out.constant.kind != ValueKind::Number && out.constant.kind != ValueKind::Null &&
        out.constant.kind != ValueKind::Param)
      return std::nullopt;
    return out;
  }
  if (type == "A_Expr" && body["kind"].equals("AEXPR_NULLIF")) {
    out.kind = Kind::Nullif;
    for (JsonRef side : {body["lexpr"], body["rexpr"]}) {
      auto child = aggregate_expression(side, depth + 1);
      if (!child) return std::nullopt;
      out.args.push_back(std::move(*child));
    }
    return out;
  }
  if (type == "A_Expr" && body["kind"].equals("AEXPR_OP") && body["name"].size() == 1)
    return aggregate_operator(body, depth);
  if (type == "TypeCast") {
    JsonRef type_name = body["typeName"];
    out.type = last_name(type_name["names"]);
    if (!number_type(out.type) || !catalog_name(type_name["names"]) || type_name["typmods"] ||
        type_name["arrayBounds"] || type_name["setof"].boolean())
      return std::nullopt;
    out.kind = Kind::Cast;
    auto arg = aggregate_expression(body["arg"], depth + 1);
    if (!arg) return std::nullopt;
    out.args.push_back(std::move(*arg));
    return out;
  }
  if (type == "CoalesceExpr") {
    out.kind = Kind::Coalesce;
    return add_args(body["args"]) ? std::optional(std::move(out)) : std::nullopt;
  }
  if (type == "CaseExpr") return aggregate_case(body, depth);
  if (type == "MinMaxExpr") {  // greatest / least
    const std::string op = body["op"].string();
    if (op != "IS_GREATEST" && op != "IS_LEAST") return std::nullopt;
    out.kind = op == "IS_GREATEST" ? Kind::Greatest : Kind::Least;
    return add_args(body["args"]) ? std::optional(std::move(out)) : std::nullopt;
  }
  return std::nullopt;
}

// An aggregate call (an output of its own, selected or hidden for HAVING), or round(), abs(),
// ceil() / ceiling(), floor() over one.
std::optional<AggregateExpression> FactsBuilder::aggregate_call(JsonRef node, int depth) {
  JsonRef body = node.body();
  if (body["over"]) return std::nullopt;
  AggregateExpression out;
  if (is_aggregate_call(body)) {
    out.kind = AggregateExpression::Kind::Output;
    out.output = output_of(node, false);
    if (out.output < 0) out.output = having_aggregate(node);
    if (out.output < 0) return std::nullopt;
    return out;
  }
  const size_t args = body["args"].size();
  const std::string name = last_name(body["funcname"]);
  using Kind = AggregateExpression::Kind;
  if (name == "round" && (args == 1 || args == 2)) {
    out.kind = Kind::Round;
  } else if (name == "abs" && args == 1) {
    out.kind = Kind::Abs;
  } else if (name == "floor" && args == 1) {
    out.kind = Kind::Floor;
  } else if ((name == "ceil" || name == "ceiling") && args == 1) {
    out.kind = Kind::Ceil;
  } else {
    return std::nullopt;
  }
  if (!catalog_name(body["funcname"]) || body["agg_star"].boolean() || body["agg_distinct"].boolean() ||
      body["agg_order"] || body["agg_filter"] || body["func_variadic"].boolean())
    return std::nullopt;
  for (JsonRef arg : body["args"]) {
    auto child = aggregate_expression(arg, depth + 1);
    if (!child) return std::nullopt;
    out.args.push_back(std::move(*child));
  }
  return out;
}

// `+ - * / %` of two operands, or a unary sign.
std::optional<AggregateExpression> FactsBuilder::aggregate_operator(JsonRef body, int depth) {
  using Kind = AggregateExpression::Kind;
  const std::string op = (*body["name"].begin()).body()["sval"].string();
  AggregateExpression out;
  if (!body["lexpr"]) {
    if (op == "+") return aggregate_expression(body["rexpr"], depth + 1);
    if (op != "-") return std::nullopt;
    out.kind = Kind::Negate;
  } else if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%") {
    out.kind = op == "+"   ? Kind::Add
               : op == "-" ? Kind::Subtract
               : op == "*" ? Kind::Multiply
               : op == "/" ? Kind::Divide
                           : Kind::Modulo;
    auto left = aggregate_expression(body["lexpr"], depth + 1);
    if (!left) return std::nullopt;
    out.args.push_back(std::move(*left));
  } else {
    return std::nullopt;
  }
  auto right = aggregate_expression(body["rexpr"], depth + 1);
  if (!right) return std::nullopt;
  out.args.push_back(std::move(*right));
  return out;
}

int FactsBuilder::hidden_expression(JsonRef node) {
  SelectShape& shape = out_.select;
  const std::string text_shape = shape_of(node);
  if (text_shape.empty() || !contains_aggregate(node)) return -1;
  for (size_t i = 0; i < shape.having_aggregates.size(); ++i) {
    if (shape.having_aggregates[i].shape == text_shape) return static_cast<int>(shape.outputs.size() + i);
  }
  auto expression = aggregate_expression(node, 0);
  if (!expression) return -1;
  OutputItem item;
  item.name = "?column?";
  item.shape = text_shape;
  item.contains_aggregate = true;
  item.expression = std::move(expression);
  shape.having_aggregates.push_back(std::move(item));
  return static_cast<int>(shape.outputs.size() + shape.having_aggregates.size() - 1);
}

void FactsBuilder::output_expressions(JsonRef targets) {
  size_t index = 0;
  for (JsonRef target : targets) {
    const size_t i = index++;
    if (i >= out_.select.outputs.size()) return;
    if (!out_.select.outputs[i].contains_aggregate || out_.select.outputs[i].aggregate != AggregateCall::None)
      continue;
    JsonRef val = target.body()["val"];
    auto expression = aggregate_expression(val, 0);
    if (!expression) continue;
    auto [begin, end] = expression_span(sql_, val, true);
    OutputItem& item = out_.select.outputs[i];
    if (begin < 0) continue;
    if (JsonRef alias = target.body()["name"]; alias && !as_follows(sql_, static_cast<size_t>(end)) &&
                                               !strip_implicit_alias(sql_, alias.string(), begin, end))
      continue;
    item.expression = std::move(expression);
    item.value_begin = begin;
    item.value_end = end;
  }
}

void FactsBuilder::order_over_aggregates(JsonRef node, OrderItem& order) {
  if (!contains_aggregate(node)) return;
  const bool position = node.node_type() == "A_Const";
  if (order.output < 0) {
    order.aggregate_output = node.node_type() == "FuncCall" && is_aggregate_call(node.body())
                                 ? having_aggregate(node)
                                 : hidden_expression(node);
  }
  if (position || !order.name.empty() || (node.node_type() == "FuncCall" && is_aggregate_call(node.body())))
    return;
  auto [begin, end] = expression_span(sql_, node, false);
  order.value_begin = begin;
  order.value_end = end;
}

}  // namespace sw::parser::detail
