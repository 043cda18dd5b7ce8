#include "merge/plan.h"

namespace sw::merge {

const char* combine_name(Combine combine) {
  switch (combine) {
    case Combine::Key: return "key";
    case Combine::Count: return "count";
    case Combine::Sum: return "sum";
    case Combine::Min: return "min";
    case Combine::Max: return "max";
    case Combine::Avg: return "avg";
    case Combine::BoolAnd: return "bool_and";
    case Combine::BoolOr: return "bool_or";
    case Combine::VarSamp: return "var_samp";
    case Combine::VarPop: return "var_pop";
    case Combine::StddevSamp: return "stddev_samp";
    case Combine::StddevPop: return "stddev_pop";
    case Combine::CountDistinct: return "count_distinct";
    case Combine::SumDistinct: return "sum_distinct";
    case Combine::AvgDistinct: return "avg_distinct";
    case Combine::ArrayAgg: return "array_agg";
    case Combine::StringAgg: return "string_agg";
    case Combine::Expression: return "expression";
  }
  return "?";
}

int partial_columns(Combine combine) {
  switch (combine) {
    case Combine::Avg: return 2;
    case Combine::VarSamp:
    case Combine::VarPop:
    case Combine::StddevSamp:
    case Combine::StddevPop: return 4;
    default: return 1;
  }
}

int shard_columns(const OutputColumn& out) {
  return partial_columns(out.combine) + static_cast<int>(out.within.size());
}

bool merge_describes(const OutputColumn& out) {
  return shard_columns(out) > 1 || out.combine == Combine::CountDistinct ||
         out.combine == Combine::SumDistinct || out.combine == Combine::AvgDistinct ||
         out.combine == Combine::StringAgg;
}

const char* MergePlan::kind_name() const {
  switch (kind) {
    case MergeKind::Concat: return "concat";
    case MergeKind::MergeSort: return "merge_sort";
    case MergeKind::Aggregate: return "aggregate";
  }
  return "?";
}

std::string MergePlan::describe() const {
  std::string out = kind_name();
  if (kind == MergeKind::Aggregate) {
    out += " (";
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (i > 0) out += ", ";
      const OutputColumn& column = outputs[i];
      out += combine_name(column.combine);
      out += " of $" + std::to_string(column.source + 1);
      for (int k = 1; k < shard_columns(column); ++k) out += "/$" + std::to_string(column.source + 1 + k);
    }
    out += ")";
  }
  if (!order_by.empty()) {
    out += kind == MergeKind::MergeSort ? " by " : "; sort by ";
    for (size_t i = 0; i < order_by.size(); ++i) {
      if (i > 0) out += ", ";
      out += order_by[i].column < 0 ? "\"" + order_by[i].name + "\"" : std::to_string(order_by[i].column + 1);
      out += order_by[i].descending ? " desc" : " asc";
      out += order_by[i].nulls_first ? " nulls first" : " nulls last";
    }
  }
  if (having) out += "; having (in the proxy)";
  if (hidden_outputs > 0)
    out += "; drop " + std::to_string(hidden_outputs) +
           (hidden_outputs == 1 ? " HAVING column" : " HAVING columns");
  if (stream_groups) out += "; groups streamed in key order";
  if (hidden > 0)
    out += "; drop " + std::to_string(hidden) + (hidden == 1 ? " sort column" : " sort columns");
  if (distinct) out += "; distinct";
  if (distinct_on == 1) out += "; distinct on the first sort key";
  if (distinct_on > 1) out += "; distinct on the first " + std::to_string(distinct_on) + " sort keys";
  if (limit_param > 0) {
    out += "; limit $" + std::to_string(limit_param);
  } else if (limit >= 0) {
    out += "; limit " + std::to_string(limit);
  }
  if (offset_param > 0) {
    out += "; offset $" + std::to_string(offset_param);
  } else if (offset > 0) {
    out += "; offset " + std::to_string(offset);
  }
  return out;
}

}  // namespace sw::merge
