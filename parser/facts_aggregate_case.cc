// CASE over aggregates (facts_aggregate_expression.cc): searched and simple CASE whose results are
// expressions over aggregates, string literals or NULL, and whose conditions compare such
// expressions (= <> < <= > >=), test them for NULL, and combine with AND / OR / NOT. A simple
// CASE's `CASE x WHEN v` is described as `x = v`, which is how PostgreSQL types and runs it
// (docs/architecture.md §6.3); the merge computes the rest.
#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

using Kind = AggregateExpression::Kind;

std::optional<Kind> comparison_kind(const std::string& op) {
  if (op == "=") return Kind::Equal;
  if (op == "<>") return Kind::NotEqual;
  if (op == "<") return Kind::Less;
  if (op == "<=") return Kind::LessEqual;
  if (op == ">") return Kind::Greater;
  if (op == ">=") return Kind::GreaterEqual;
  return std::nullopt;
}

}  // namespace

std::optional<AggregateExpression> FactsBuilder::aggregate_case(JsonRef body, int depth) {
  AggregateExpression out;
  out.kind = Kind::Case;
  std::optional<AggregateExpression> operand;
  if (body["arg"]) {
    operand = aggregate_expression(body["arg"], depth + 1);
    if (!operand) return std::nullopt;
  }
  // A result: an expression over aggregates, or a string literal (PostgreSQL's unknown type).
  auto result = [&](JsonRef node) -> std::optional<AggregateExpression> {
    if (node.node_type() == "A_Const" && value(node).kind == ValueKind::String) {
      AggregateExpression text;
      text.kind = Kind::Text;
      text.constant = value(node);
      return text;
    }
    return aggregate_expression(node, depth + 1);
  };
  for (JsonRef when : body["args"]) {
    JsonRef clause = when.body();
    std::optional<AggregateExpression> condition;
    if (operand) {
      auto value_of = aggregate_expression(clause["expr"], depth + 1);
      if (!value_of) return std::nullopt;
      condition = AggregateExpression{};
      condition->kind = Kind::Equal;
      condition->args = {*operand, std::move(*value_of)};
    } else {
      condition = aggregate_condition(clause["expr"], depth + 1);
    }
    auto then = result(clause["result"]);
    if (!condition || !then) return std::nullopt;
    out.args.push_back(std::move(*condition));
    out.args.push_back(std::move(*then));
  }
  if (out.args.empty()) return std::nullopt;
  if (body["defresult"]) {
    auto otherwise = result(body["defresult"]);
    if (!otherwise) return std::nullopt;
    out.args.push_back(std::move(*otherwise));
  } else {
    AggregateExpression null;
    null.constant.kind = ValueKind::Null;
    out.args.push_back(std::move(null));
  }
  return out;
}

std::optional<AggregateExpression> FactsBuilder::aggregate_condition(JsonRef node, int depth) {
  if (depth > 32) return std::nullopt;
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  AggregateExpression out;
  if (type == "BoolExpr") {
    const std::string op = body["boolop"].string();
    out.kind = op == "AND_EXPR" ? Kind::And : op == "OR_EXPR" ? Kind::Or : Kind::Not;
    if (op != "AND_EXPR" && op != "OR_EXPR" && op != "NOT_EXPR") return std::nullopt;
    for (JsonRef arg : body["args"]) {
      auto child = aggregate_condition(arg, depth + 1);
      if (!child) return std::nullopt;
      out.args.push_back(std::move(*child));
    }
    if (out.args.empty() || (out.kind == Kind::Not && out.args.size() != 1)) return std::nullopt;
    return out;
  }
  if (type == "NullTest") {
    const std::string test = body["nulltesttype"].string();
    if (test != "IS_NULL" && test != "IS_NOT_NULL") return std::nullopt;
    out.kind = test == "IS_NULL" ? Kind::IsNull : Kind::IsNotNull;
    auto arg = aggregate_expression(body["arg"], depth + 1);
    if (!arg) return std::nullopt;
    out.args.push_back(std::move(*arg));
    return out;
  }
  if (type == "A_Expr" && body["kind"].equals("AEXPR_OP") && body["name"].size() == 1 && body["lexpr"])
    return aggregate_comparison(body, depth);
  return std::nullopt;
}

std::optional<AggregateExpression> FactsBuilder::aggregate_comparison(JsonRef body, int depth) {
  auto kind = comparison_kind((*body["name"].begin()).body()["sval"].string());
  if (!kind) return std::nullopt;
  AggregateExpression out;
  out.kind = *kind;
  for (JsonRef side : {body["lexpr"], body["rexpr"]}) {
    auto child = aggregate_expression(side, depth + 1);
    if (!child) return std::nullopt;
    out.args.push_back(std::move(*child));
  }
  return out;
}

}  // namespace sw::parser::detail
