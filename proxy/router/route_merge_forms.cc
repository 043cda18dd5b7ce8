// Merge forms beyond the plain aggregates (docs/architecture.md §6.3): what to write instead of
// an aggregate no merge computes, count(DISTINCT key), DISTINCT ON's sort keys.
#include "router/merge_forms.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "merge/value.h"

namespace sw::router::detail {

// What to write instead of an aggregate call no merge computes exactly.
std::string instead_of_aggregate(const parser::OutputItem& item) {
  std::string text;
  for (char c : item.call_text) text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string name = text.substr(0, text.find('('));
  if (text.find("(distinct") != std::string::npos)
    return "select DISTINCT of its argument (merged across shards) and count or aggregate those rows";
  for (const char* variance : {"stddev", "variance", "var_"}) {
    if (name.rfind(variance, 0) == 0)
      return "select count(x), sum(x) and sum(x * x) and compute it from them";
  }
  if (name.find("avg") != std::string::npos) return "select sum(x) FILTER (...) and count(x) FILTER (...)";
  return "select the rows (ORDER BY is merged across shards) and aggregate them in the application";
}

// Whether an aggregate call is count(DISTINCT <key>) of the one table read (an unquoted name):
// every key value lives on one shard, so the shards' distinct counts add up.
bool counts_distinct_keys(const parser::OutputItem& item, const std::string& key) {
  std::string text;
  for (char c : item.call_text) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return text == "count(distinct" + key + ")";
}

std::optional<merge::Combine> distinct_values(const parser::OutputItem& item, const std::string& key) {
  if (item.aggregate != parser::AggregateCall::Unmergeable || item.contains_aggregate) return std::nullopt;
  if (!key.empty() && counts_distinct_keys(item, key)) return std::nullopt;
  std::string text;  // lower case
  for (char c : item.call_text) text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto skip_space = [&](size_t at) {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
    return at;
  };
  for (const auto& [name, combine] :
       {std::pair{"count", merge::Combine::CountDistinct}, std::pair{"sum", merge::Combine::SumDistinct},
        std::pair{"avg", merge::Combine::AvgDistinct}}) {
    const std::string_view head(name);
    if (text.compare(0, head.size(), head) != 0) continue;
    size_t at = skip_space(head.size());
    if (at >= text.size() || text[at] != '(') return std::nullopt;
    at = skip_space(at + 1);
    constexpr std::string_view kDistinct = "distinct";
    if (text.compare(at, kDistinct.size(), kDistinct) != 0) return std::nullopt;
    at += kDistinct.size();
    // DISTINCT itself, not a name that starts with it.
    if (at < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[at])) != 0 || text[at] == '_' || text[at] == '$'))
      return std::nullopt;
    return combine;
  }
  return std::nullopt;
}

std::string distinct_as_array(const std::string& call) { return "array_agg" + call.substr(call.find('(')); }

// DISTINCT ON: its expressions must be output columns and the first ORDER BY keys (in any order),
// so the merge meets each key's rows together, the first being the one PostgreSQL keeps. The
// reason it cannot merge, or "".
std::string distinct_on_keys(const parser::SelectShape& shape, merge::MergePlan& plan) {
  const char* fix = "; select the DISTINCT ON expressions and ORDER BY them first";
  std::vector<int> on;
  for (int output : shape.distinct_on_outputs) {
    if (output < 0) return std::string("uses DISTINCT ON an expression that is not in the select list") + fix;
    if (std::find(on.begin(), on.end(), output + plan.hidden) == on.end()) on.push_back(output + plan.hidden);
  }
  if (plan.order_by.size() < on.size())
    return std::string("uses DISTINCT ON without an ORDER BY that starts with its expressions") + fix;
  for (size_t i = 0; i < on.size(); ++i) {
    if (std::find(on.begin(), on.end(), plan.order_by[i].column) == on.end())
      return std::string("uses DISTINCT ON without an ORDER BY that starts with its expressions") + fix;
  }
  plan.distinct_on = static_cast<int>(on.size());
  return "";
}

namespace {

// How many arguments a node of `kind` takes, given that it has `given`.
size_t arity(ExpressionKind kind, size_t given) {
  using Kind = ExpressionKind;
  switch (kind) {
    case Kind::Negate:
    case Kind::Cast:
    case Kind::Abs:
    case Kind::Ceil:
    case Kind::Floor:
    case Kind::IsNull:
    case Kind::IsNotNull:
    case Kind::Not: return 1;
    case Kind::Round: return given;
    case Kind::Case: return given % 2 == 1 ? given : 0;  // (condition, result) pairs, then ELSE
    case Kind::Coalesce:
    case Kind::Greatest:
    case Kind::Least:
    case Kind::And:
    case Kind::Or: return std::max<size_t>(given, 1);
    default: return 2;
  }
}

}  // namespace

std::optional<merge::Expression> merge_expression(const parser::AggregateExpression& expression,
                                                  const merge::MergePlan& plan) {
  using Kind = ExpressionKind;
  merge::Expression out;
  out.kind = expression.kind;  // one enum (common/expression_kind.h); the leaves' fields differ
  switch (expression.kind) {
    case Kind::Output:
      if (expression.output < 0 || static_cast<size_t>(expression.output) >= plan.outputs.size() ||
          plan.outputs[static_cast<size_t>(expression.output)].combine == merge::Combine::Expression)
        return std::nullopt;
      out.output = expression.output;
      return out;
    case Kind::Constant:
      if (expression.constant.kind == parser::ValueKind::Number) out.constant = expression.constant.text;
      return out;
    case Kind::Param: out.param = expression.constant.param; return out;
    case Kind::Text: out.constant = expression.constant.text; return out;
    case Kind::Cast: {
      const std::string& type = expression.type;
      out.type = type == "int2"      ? merge::oid::kInt2
                 : type == "int4"    ? merge::oid::kInt4
                 : type == "int8"    ? merge::oid::kInt8
                 : type == "numeric" ? merge::oid::kNumeric
                 : type == "float8"  ? merge::oid::kFloat8
                                     : 0;
      if (out.type == 0) return std::nullopt;
      break;
    }
    default: break;  // operators and functions: their arguments below
  }
  for (const parser::AggregateExpression& arg : expression.args) {
    auto child = merge_expression(arg, plan);
    if (!child) return std::nullopt;
    out.args.push_back(std::move(*child));
  }
  if (out.args.size() != arity(out.kind, out.args.size()) || out.args.empty()) return std::nullopt;
  return out;
}

}  // namespace sw::router::detail
