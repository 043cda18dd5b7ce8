// The shard columns of an aggregate the proxy combines from several partial results: avg as
// sum and count, the variances as sum, count, numeric sum of squares and var_pop
// (docs/architecture.md §6.3).
#include <string>
#include <vector>

#include "parser/analyze.h"

namespace sw::parser {

std::vector<std::string> avg_as_sum_and_count(const std::string& call) {
  const size_t paren = call.find('(');
  if (paren == std::string::npos) return {};
  const std::string args = call.substr(paren);
  // The count also evaluates avg itself, only for the shard's own errors: avg(float8) raises
  // 22003 when its sum of squared deviations overflows, which sum and count never do.
  return {"sum" + args, "count" + args + " + 0 * (avg" + args + " IS NULL)::int"};
}

namespace {

// The text inside a call's parentheses and what follows its closing one (a FILTER); false when
// the parentheses do not balance outside quotes.
bool call_parts(const std::string& call, std::string& inner, std::string& rest) {
  const size_t open = call.find('(');
  if (open == std::string::npos) return false;
  int depth = 0;
  char quote = 0;
  for (size_t i = open; i < call.size(); ++i) {
    const char c = call[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      inner = call.substr(open + 1, i - open - 1);
      rest = call.substr(i + 1);
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> variance_columns(const std::string& call) {
  std::string inner, rest;
  if (!call_parts(call, inner, rest)) return {};
  const std::string args = "(" + inner + ")" + rest;
  const std::string as_numeric = "((" + inner + ")::numeric)";
  // var_pop on the shard gives float8's sum of squared deviations (times count) and raises the
  // shard's own 22003; the numeric sum of squares makes integers and numeric exact. Floats skip
  // it (NULL): the SQL is written before the type is known, and a float to numeric conversion
  // per row would cost several times the aggregate itself.
  const std::string squares = "sum(CASE WHEN pg_typeof(" + inner +
                              ") IN ('float8'::regtype, 'float4'::regtype) THEN NULL ELSE " + as_numeric +
                              " * " + as_numeric + " END)";
  return {"sum" + args, "count" + args, squares + rest, "var_pop" + args};
}

int partial_width(AggregateCall call) {
  switch (call) {
    case AggregateCall::Avg: return 2;
    case AggregateCall::VarSamp:
    case AggregateCall::VarPop:
    case AggregateCall::StddevSamp:
    case AggregateCall::StddevPop: return 4;
    default: return 1;
  }
}

int output_width(const OutputItem& item) {
  return item.ordered ? static_cast<int>(item.ordered->columns.size()) : partial_width(item.aggregate);
}

std::vector<std::string> partial_calls(AggregateCall call, const std::string& text) {
  if (call == AggregateCall::Avg) return avg_as_sum_and_count(text);
  if (partial_width(call) == 4) return variance_columns(text);
  return {text};
}

}  // namespace sw::parser
