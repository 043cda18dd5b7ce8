// Merge forms beyond the plain aggregates (docs/architecture.md §6.3): what to write instead of
// an aggregate no merge computes, count(DISTINCT key), DISTINCT ON's sort keys.
#include "router/merge_forms.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

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

bool counts_distinct_values(const parser::OutputItem& item, const std::string& key) {
  if (item.aggregate != parser::AggregateCall::Unmergeable || item.contains_aggregate) return false;
  if (!key.empty() && counts_distinct_keys(item, key)) return false;
  std::string text;
  for (char c : item.call_text) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::string head = "count(distinct";
  return text.compare(0, head.size(), head) == 0 && item.call_text.size() >= 5 &&
         (item.call_text[0] == 'c' || item.call_text[0] == 'C');
}

std::string distinct_as_array(const std::string& call) { return "array_agg" + call.substr(5); }

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

std::optional<merge::Expression> merge_expression(const parser::AggregateExpression& expression,
                                                  const merge::MergePlan& plan) {
  using From = parser::AggregateExpression::Kind;
  using To = merge::Expression::Kind;
  merge::Expression out;
  switch (expression.kind) {
    case From::Output:
      if (expression.output < 0 || static_cast<size_t>(expression.output) >= plan.outputs.size() ||
          plan.outputs[static_cast<size_t>(expression.output)].combine == merge::Combine::Expression)
        return std::nullopt;
      out.kind = To::Output;
      out.output = expression.output;
      return out;
    case From::Constant:
      out.kind = To::Constant;
      if (expression.constant.kind == parser::ValueKind::Number) out.constant = expression.constant.text;
      return out;
    case From::Param:
      out.kind = To::Param;
      out.param = expression.constant.param;
      return out;
    case From::Add: out.kind = To::Add; break;
    case From::Subtract: out.kind = To::Subtract; break;
    case From::Multiply: out.kind = To::Multiply; break;
    case From::Divide: out.kind = To::Divide; break;
    case From::Negate: out.kind = To::Negate; break;
    case From::Round: out.kind = To::Round; break;
    case From::Coalesce: out.kind = To::Coalesce; break;
    case From::Nullif: out.kind = To::Nullif; break;
    case From::Cast: {
      out.kind = To::Cast;
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
  }
  for (const parser::AggregateExpression& arg : expression.args) {
    auto child = merge_expression(arg, plan);
    if (!child) return std::nullopt;
    out.args.push_back(std::move(*child));
  }
  const size_t arity = out.kind == To::Negate || out.kind == To::Cast ? 1
                       : out.kind == To::Round                        ? out.args.size()
                       : out.kind == To::Coalesce                     ? std::max<size_t>(out.args.size(), 1)
                                                                      : 2;
  if (out.args.size() != arity || out.args.empty()) return std::nullopt;
  return out;
}

}  // namespace sw::router::detail
