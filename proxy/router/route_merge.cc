// The scatter plan of a SELECT without a key whose own block needs the shards' rows combined
// (docs/architecture.md §6.3): what every shard runs and what the proxy does with the rows.
//
//  * GROUP BY containing the key: every group lives on one shard, so the shards' grouped rows
//    are final; only ORDER BY / LIMIT / DISTINCT remain for the proxy (HAVING runs on the shards).
//  * aggregates or GROUP BY otherwise: the shards compute partial aggregates per group (avg as
//    sum and count), without LIMIT/OFFSET and HAVING; the proxy combines, applies HAVING (when it
//    compares output columns, or aggregates it selects first as hidden columns, with constants),
//    sorts, applies OFFSET/LIMIT.
//  * ORDER BY: the shards sort; the proxy merges. LIMIT n OFFSET m: the shards return n+m rows.
//  * DISTINCT ON (ORDER BY starting with its expressions): each shard keeps its first row per
//    key; the merge keeps the first of the shards' rows per key.
#include <algorithm>
#include <charconv>

#include "merge/value.h"
#include "router/dml_router.h"
#include "router/merge_forms.h"

namespace sw::router::detail {
namespace {

using parser::AggregateCall;
using parser::ValueKind;

merge::Combine combine_of(AggregateCall call) {
  switch (call) {
    case AggregateCall::CountStar:
    case AggregateCall::Count: return merge::Combine::Count;
    case AggregateCall::Sum: return merge::Combine::Sum;
    case AggregateCall::Min: return merge::Combine::Min;
    case AggregateCall::Max: return merge::Combine::Max;
    case AggregateCall::Avg: return merge::Combine::Avg;
    case AggregateCall::BoolAnd: return merge::Combine::BoolAnd;
    case AggregateCall::BoolOr: return merge::Combine::BoolOr;
    case AggregateCall::VarSamp: return merge::Combine::VarSamp;
    case AggregateCall::VarPop: return merge::Combine::VarPop;
    case AggregateCall::StddevSamp: return merge::Combine::StddevSamp;
    case AggregateCall::StddevPop: return merge::Combine::StddevPop;
    default: return merge::Combine::Key;
  }
}

// A LIMIT/OFFSET value: -1 for none (LIMIT NULL / ALL); false when not a constant integer.
bool constant_count(const parser::Value& value, int64_t& out) {
  if (value.kind == ValueKind::Null) {
    out = -1;
    return true;
  }
  if (value.kind != ValueKind::Number) return false;
  auto r = std::from_chars(value.text.data(), value.text.data() + value.text.size(), out);
  return r.ec == std::errc() && r.ptr == value.text.data() + value.text.size() && out >= 0;
}

// The parser's HAVING term for the merge (the shards group without it).
merge::HavingTerm having_term(const parser::HavingTerm& term) {
  merge::HavingTerm out;
  using Kind = parser::HavingTerm::Kind;
  out.kind = term.kind == Kind::And   ? merge::HavingTerm::Kind::And
             : term.kind == Kind::Or  ? merge::HavingTerm::Kind::Or
             : term.kind == Kind::Not ? merge::HavingTerm::Kind::Not
                                      : merge::HavingTerm::Kind::Compare;
  for (const parser::HavingTerm& child : term.children) out.children.push_back(having_term(child));
  out.column = term.output;
  using Op = merge::HavingTerm::Op;
  out.op = term.op == "<>"   ? Op::Ne
           : term.op == "<"  ? Op::Lt
           : term.op == "<=" ? Op::Le
           : term.op == ">"  ? Op::Gt
           : term.op == ">=" ? Op::Ge
                             : Op::Eq;
  if (term.constant.kind == parser::ValueKind::Param) {
    out.param = term.constant.param;
  } else if (term.constant.kind == parser::ValueKind::Bool) {
    out.constant = std::string(1, term.constant.text == "true" ? 't' : 'f');  // as boolout prints it
  } else if (term.constant.kind != parser::ValueKind::Null) {
    out.constant = term.constant.text;
  }
  return out;
}

bool has_parameter(const merge::HavingTerm& term) {
  if (term.param > 0) return true;
  return std::any_of(term.children.begin(), term.children.end(), has_parameter);
}

// Where a shard column's collation comes from; what it reads tells only when the block's FROM
// holds tables alone (a subquery's or CTE's columns are not the tables' columns).
merge::TextSource text_source(const parser::CollationSource& from, bool tables_only) {
  return merge::TextSource{from.explicit_name, from.columns, from.nested, from.opaque || !tables_only};
}

// The shards' columns' collation sources in their order: HAVING's hidden aggregates first, then
// the outputs (an avg with its count column after it, a variance with its three); none when `*`
// leaves the columns unknown.
void add_column_sources(const parser::SelectShape& shape, bool aggregate, bool tables_only,
                        merge::MergePlan& plan) {
  bool star = false;
  for (const parser::OutputItem& item :
       aggregate ? shape.having_aggregates : std::vector<parser::OutputItem>{}) {
    plan.column_sources.push_back(text_source(item.collation, tables_only));
    if (item.ordered) {  // the sort keys' arrays
      for (const parser::CollationSource& key : item.ordered->key_collations)
        plan.column_sources.push_back(text_source(key, tables_only));
      continue;
    }
    for (int i = 1; i < parser::partial_width(item.aggregate); ++i)
      plan.column_sources.push_back(plan.column_sources.back());
  }
  for (const parser::OutputItem& item : shape.outputs) {
    star = star || item.star;
    plan.column_sources.push_back(text_source(item.collation, tables_only));
    if (aggregate && item.ordered) {  // the sort keys' arrays
      for (const parser::CollationSource& key : item.ordered->key_collations)
        plan.column_sources.push_back(text_source(key, tables_only));
      continue;
    }
    for (int i = 1; aggregate && i < parser::partial_width(item.aggregate); ++i)
      plan.column_sources.push_back(plan.column_sources.back());  // avg's count, ...
  }
  if (star) plan.column_sources.clear();
}

// Whether ORDER BY names exactly the GROUP BY keys (each once, any direction): then every shard
// returns its groups in the merge's order and the merge can combine them one at a time.
bool sorted_by_group_keys(const merge::MergePlan& plan, const std::vector<int>& group_by) {
  if (group_by.empty() || plan.order_by.size() != group_by.size()) return false;
  for (const merge::SortKey& key : plan.order_by) {
    if (key.column < 0 || std::find(group_by.begin(), group_by.end(), key.column) == group_by.end())
      return false;
  }
  for (int column : group_by) {
    int uses = 0;
    for (const merge::SortKey& key : plan.order_by) uses += key.column == column ? 1 : 0;
    if (uses != 1) return false;
  }
  return true;
}

// An array_agg / string_agg output reading the shards' arrays from `source` on.
merge::OutputColumn ordered_output(const parser::OrderedAggregate& call, int source,
                                   const std::string& name) {
  merge::OutputColumn out{call.string_agg ? merge::Combine::StringAgg : merge::Combine::ArrayAgg, source,
                          name};
  for (size_t k = 0; k < call.descending.size(); ++k)
    out.within.push_back(
        merge::SortKey{source + 1 + static_cast<int>(k), "", call.descending[k], call.nulls_first[k]});
  out.within_distinct = call.distinct;
  out.separator = call.separator;
  return out;
}

// ORDER BY expressions over aggregates go to the shards unevaluated (the merge computes them);
// every group key must be selected. The reason it cannot merge, or "".
std::string order_and_group_columns(const parser::SelectShape& shape, parser::SelectRewrite& rewrite) {
  for (const parser::OrderItem& item : shape.order_by) {
    if (item.value_begin >= 0) rewrite.unevaluated.push_back({item.value_begin, item.value_end, ""});
  }
  for (int output : shape.group_by) {
    if (output < 0) return "groups by an expression that is not in the select list; select it too";
  }
  return "";
}

// The output columns of an aggregate merge, each combined from the shards' partial results; the
// reason it cannot merge, or "" when it can. `distinct_key`: the key of the one table read, whose
// count(DISTINCT) adds up over shards ("" when the statement reads several).
// HAVING's aggregates the client did not select lead the shards' columns (hidden outputs);
// `source` counts the shard columns they take.
std::string having_columns(const parser::SelectShape& shape, const std::string& distinct_key,
                           parser::SelectRewrite& rewrite, int& source) {
  for (const parser::OutputItem& item : shape.having_aggregates) {
    if (item.expression) {  // computed by the merge: a placeholder column, never compared as text
      rewrite.leading_columns.emplace_back("NULL::int4");
      ++source;
      continue;
    }
    std::vector<std::string> columns = parser::partial_calls(item.aggregate, item.call_text);
    if (distinct_values(item, distinct_key)) columns = {distinct_as_array(item.call_text)};
    if (item.ordered) columns = item.ordered->columns;
    if (columns.empty())
      return "uses HAVING on an " + item.name + "() call shardwire cannot locate; select it";
    for (std::string& column : columns) rewrite.leading_columns.push_back(std::move(column));
    source += parser::output_width(item);
  }
  return {};
}

// The merge's column for the selected `item` (the shape's output `index`), reading from shard
// column `source` on; or why it is refused.
std::string selected_output(const parser::OutputItem& item, int index, const std::string& distinct_key,
                            merge::MergePlan& plan, parser::SelectRewrite& rewrite, int& source) {
  if (item.star) return "aggregates with * in the select list; list the grouped columns";
  if (item.contains_aggregate && item.expression) {
    // The shards return it unevaluated (its type and name); the merge computes it.
    plan.outputs.push_back(merge::OutputColumn{merge::Combine::Expression, source++, item.name});
    rewrite.unevaluated.push_back({item.value_begin, item.value_end, item.aliased ? "" : item.name});
    return {};
  }
  if (item.contains_aggregate)
    return "computes \"" + item.name +
           "\" from aggregates in a way the merge does not (it computes + - * / %, casts to number "
           "types, round, abs, ceil, floor, greatest, least, coalesce, nullif and CASE of aggregates, group "
           "keys, numbers and parameters); select the aggregates themselves";
  if (item.aggregate == AggregateCall::Unmergeable && !distinct_key.empty() &&
      counts_distinct_keys(item, distinct_key)) {
    plan.outputs.push_back(merge::OutputColumn{merge::Combine::Count, source++, item.name});
    return {};
  }
  if (auto combine = distinct_values(item, distinct_key)) {
    rewrite.distinct_arrays.push_back(index);
    plan.outputs.push_back(merge::OutputColumn{*combine, source++, item.name});
    return {};
  }
  if (item.ordered) {
    plan.outputs.push_back(ordered_output(*item.ordered, source, item.name));
    source += parser::output_width(item);
    rewrite.split_avg = true;  // the call becomes its shard columns
    return {};
  }
  if (item.aggregate == AggregateCall::Unmergeable)
    return "uses " + (item.call_text.empty() ? item.name : item.call_text) +
           ", which cannot be combined from the shards' partial results (count, sum, min, max, "
           "avg, bool_and, bool_or, stddev, variance, count/sum/avg(DISTINCT), and array_agg and "
           "string_agg with a literal separator can, also with FILTER); " +
           instead_of_aggregate(item) + " instead, or";
  plan.outputs.push_back(merge::OutputColumn{combine_of(item.aggregate), source, item.name});
  source += parser::partial_width(item.aggregate);
  rewrite.split_avg = rewrite.split_avg || parser::partial_width(item.aggregate) > 1;
  return {};
}

// HAVING's own aggregates follow the selected outputs, read from the leading (hidden) columns.
void having_outputs(const parser::SelectShape& shape, const std::string& distinct_key,
                    merge::MergePlan& plan) {
  int hidden = 0;
  for (const parser::OutputItem& item : shape.having_aggregates) {
    const merge::Combine combine =
        distinct_values(item, distinct_key)
            .value_or(counts_distinct_keys(item, distinct_key) ? merge::Combine::Count
                                                               : combine_of(item.aggregate));
    if (item.ordered) {
      plan.outputs.push_back(ordered_output(*item.ordered, hidden, item.name));
    } else {
      plan.outputs.push_back(
          merge::OutputColumn{item.expression ? merge::Combine::Expression : combine, hidden, item.name});
    }
    hidden += parser::output_width(item);
  }
  plan.hidden_outputs = static_cast<int>(shape.having_aggregates.size());
}

std::string aggregate_outputs(const parser::SelectShape& shape, const std::string& distinct_key,
                              merge::MergePlan& plan, parser::SelectRewrite& rewrite) {
  int source = 0;
  if (std::string why = having_columns(shape, distinct_key, rewrite, source); !why.empty()) return why;
  for (size_t i = 0; i < shape.outputs.size(); ++i) {
    if (std::string why =
            selected_output(shape.outputs[i], static_cast<int>(i), distinct_key, plan, rewrite, source);
        !why.empty())
      return why;
  }
  having_outputs(shape, distinct_key, plan);
  const size_t selected = shape.outputs.size();
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const parser::OutputItem& item = i < selected ? shape.outputs[i] : shape.having_aggregates[i - selected];
    if (!item.expression) continue;
    plan.outputs[i].expression = merge_expression(*item.expression, plan);
    if (!plan.outputs[i].expression)
      return "computes \"" + item.name +
             "\" from aggregates in a way the merge does not; select the "
             "aggregates themselves";
  }
  return order_and_group_columns(shape, rewrite);
}

// Each shard returns its first LIMIT + OFFSET rows (OFFSET 0); the merger skips OFFSET of the
// merged ones. `limit_value` / `offset_value`: "$n::int8" for a parameter, else "".
void shard_rows(int64_t limit, const std::string& limit_value, const std::string& offset_value,
                const merge::MergePlan& plan, parser::SelectRewrite& rewrite) {
  rewrite.drop_offset = true;
  if (!offset_value.empty()) rewrite.offset = "(0 * " + offset_value + ")";
  const std::string skipped =
      offset_value.empty() ? std::to_string(plan.offset) : "coalesce(" + offset_value + ", 0)";
  if (!limit_value.empty()) {
    rewrite.limit = "(" + limit_value + " + " + skipped + ")";
  } else if (limit >= 0) {
    if (offset_value.empty()) {
      rewrite.limit = std::to_string(limit + plan.offset);
    } else {
      rewrite.limit = '(';
      rewrite.limit += std::to_string(limit);
      rewrite.limit += " + ";
      rewrite.limit += skipped;
      rewrite.limit += ')';
    }
  }
}

// The merge's LIMIT and OFFSET and what the shards return for them (shard_rows). `limit_value` /
// `offset_value`: "$n::int8" for a parameter, else "". The reason it cannot merge, or "".
std::string limit_and_offset(const parser::SelectShape& shape, bool aggregate, const std::string& limit_value,
                             const std::string& offset_value, merge::MergePlan& plan,
                             parser::SelectRewrite& rewrite) {
  // A negative constant is the shards' error to raise (2201W, 2201X): the statement goes as written.
  auto negative = [](const parser::Value& value) {
    return value.kind == ValueKind::Number && !value.text.empty() && value.text[0] == '-';
  };
  if ((shape.has_limit && negative(shape.limit)) || (shape.has_offset && negative(shape.offset))) {
    rewrite.limit.clear();
    rewrite.drop_offset = false;
    plan.limit_param = plan.offset_param = 0;
    return "";
  }
  int64_t limit = -1, offset = 0;
  if (shape.has_limit && limit_value.empty() && !constant_count(shape.limit, limit))
    return "has a LIMIT that is not a constant number or a parameter";
  if (shape.has_offset && offset_value.empty() && !constant_count(shape.offset, offset))
    return "has an OFFSET that is not a constant number or a parameter";
  plan.limit = limit;
  plan.offset = offset < 0 ? 0 : offset;
  if (!aggregate && shape.has_offset && (!offset_value.empty() || plan.offset > 0))
    shard_rows(limit, limit_value, offset_value, plan, rewrite);
  return "";
}

// Why this read's window functions cannot be merged, or "" when each shard's window results are
// final: a window partitioned by the key sees only rows of one key value, all on one shard, so its
// rows merge like plain rows (unless aggregates are grouped across shards or several tables join).
std::string window_refusal(const parser::SelectShape& shape, const std::string& key, bool aggregate,
                           size_t tables) {
  const auto& partitions = shape.window_partition_columns;
  if (std::find(partitions.begin(), partitions.end(), key) == partitions.end())
    return "uses window functions not partitioned by the key " + key +
           ", which shardwire cannot merge across shards; write PARTITION BY " + key + " in each window";
  if (aggregate)
    return "uses window functions over aggregates grouped without the key, which shardwire cannot merge "
           "across shards; GROUP BY the key too";
  if (tables != 1)
    return "uses window functions reading several tables or reading through a subquery or CTE, which "
           "shardwire merges only for one sharded table read directly; read that table itself";
  return "";
}

// Why a SELECT of this shape cannot be merged at all, before any plan: "" when it may be.
// `tables_by_key`: the tables read directly under the key's name (0 through a subquery or CTE).
std::string shape_refusal(const parser::SelectShape& shape, const std::string& key, bool aggregate,
                          bool grouped_by_key, size_t tables_by_key) {
  if (!shape.unmergeable.empty() && !(grouped_by_key && shape.unmergeable == "HAVING")) {
    const std::string hint =
        shape.unmergeable == "HAVING"
            ? "; HAVING may compare aggregates or group keys with constants or parameters"
            : "";
    return "uses " + shape.unmergeable + ", which shardwire cannot merge across shards" + hint;
  }
  if (shape.windows) {
    if (std::string why = window_refusal(shape, key, aggregate, tables_by_key); !why.empty()) return why;
  }
  if (shape.distinct_on && aggregate)
    return "uses DISTINCT ON with aggregates or a GROUP BY without the key, which shardwire cannot merge "
           "across shards; group by the key, or select the groups and pick the rows in the application";
  return "";
}

}  // namespace

Route DmlRouter::merged_scatter(Route route, int first) {
  const parser::SelectShape& shape = facts_.select;
  const TableRule& r = *rule(first);
  const std::string prefix = "SELECT on sharded table " + r.config_name +
                             (splitting_ ? " with keys on several shards " : " without a key value ");
  const std::string fix = ": add " + key_example(first);
  auto refuse = [&](const std::string& why) {
    return make_error("0A000", prefix + why + fix, r.config_name);
  };
  // Through a subquery or CTE the key's name may be another column's: no shortcut by the key.
  const bool key_named = key_named_at_top();
  bool grouped_by_key = false;
  for (const std::string& column : shape.group_columns)
    grouped_by_key = grouped_by_key || (key_named && column == r.key);
  const uint32_t features = facts_.scopes[0].features;
  const bool aggregate =
      !grouped_by_key && (features & (parser::feature::kAggregate | parser::feature::kGroupBy)) != 0;
  if (std::string why =
          shape_refusal(shape, r.key, aggregate, grouped_by_key, key_named ? facts_.tables.size() : 0);
      !why.empty())
    return refuse(why);

  auto plan = std::make_shared<merge::MergePlan>();
  collation_facts(*plan);
  parser::SelectRewrite rewrite;
  if (!shape.having.empty() && !grouped_by_key) {
    if (!aggregate)
      return refuse("uses HAVING without aggregates, which shardwire cannot merge across shards");
    plan->having = having_term(shape.having.front());
    rewrite.drop_having = true;
    rewrite.neutral_having = has_parameter(*plan->having);
  }
  // A LIMIT/OFFSET parameter stays in the shards' SQL (the client's Bind carries it to every
  // shard, typed bigint as PostgreSQL infers it); the merger reads its value from the Bind.
  const bool limit_param = shape.has_limit && shape.limit.kind == ValueKind::Param;
  const bool offset_param = shape.has_offset && shape.offset.kind == ValueKind::Param;
  const std::string limit_value = limit_param ? "$" + std::to_string(shape.limit.param) + "::int8" : "";
  const std::string offset_value = offset_param ? "$" + std::to_string(shape.offset.param) + "::int8" : "";
  if (limit_param) plan->limit_param = shape.limit.param;
  if (offset_param) plan->offset_param = shape.offset.param;
  if (aggregate) {
    plan->kind = merge::MergeKind::Aggregate;
    const std::string distinct_key = key_named && facts_.tables.size() == 1 ? r.key : "";
    if (std::string why = aggregate_outputs(shape, distinct_key, *plan, rewrite); !why.empty())
      return refuse(why);
    // LIMIT NULL = LIMIT ALL, and FETCH FIRST takes NULL but no ALL.
    if (shape.has_limit) rewrite.limit = limit_param ? "(NULL + " + limit_value + ")" : "NULL";
    rewrite.drop_offset = shape.has_offset;
    if (offset_param) rewrite.offset = "(0 * " + offset_value + ")";
  }
  const bool grouped = (features & (parser::feature::kAggregate | parser::feature::kGroupBy)) != 0;
  if (std::string why; !sort_keys(*plan, rewrite, grouped, why)) return refuse(why);
  if (!aggregate && !plan->order_by.empty()) plan->kind = merge::MergeKind::MergeSort;
  if (aggregate) plan->stream_groups = sorted_by_group_keys(*plan, shape.group_by);
  plan->distinct = shape.distinct && !shape.distinct_on;
  if (shape.distinct_on) {
    if (std::string why = distinct_on_keys(shape, *plan); !why.empty()) return refuse(why);
  }
  if (std::string why = limit_and_offset(shape, aggregate, limit_value, offset_value, *plan, rewrite);
      !why.empty())
    return refuse(why);
  add_column_sources(shape, aggregate, !facts_.scopes[0].non_table_from, *plan);
  if (Status filled = fill_statements(*plan, rewrite); !filled)
    return refuse("cannot be rewritten for the shards (" + filled.message + ")");
  route.reason =
      (splitting_ ? "the keys of " + r.config_name + " are on several shards: each runs with its own keys, "
                  : r.config_name + " has no key value: every shard, ") +
      plan->describe() + (grouped_by_key ? " (grouped by the key: the shards' groups are final)" : "");
  route.merge = std::move(plan);
  return route;
}

// The tables whose columns' collations the shards report (§5.6).
void DmlRouter::collation_facts(merge::MergePlan& plan) const {
  auto quoted = [](const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  for (const parser::TableRef& table : facts_.tables) {
    std::string name =
        table.schema.empty() ? quoted(table.name) : quoted(table.schema) + "." + quoted(table.name);
    if (std::find(plan.tables.begin(), plan.tables.end(), name) == plan.tables.end())
      plan.tables.push_back(std::move(name));
  }
}

// The plan's ORDER BY keys. A plain column name or an expression that is not selected (and no *,
// GROUP BY, aggregate or DISTINCT) is selected first as a hidden column ("name" AS sw_order_N,
// lower(name) AS sw_order_N): the shards return it, the merge sorts on it and drops it
// (plan.hidden). PostgreSQL matches the shards' ORDER BY expression to that select-list entry.
bool DmlRouter::sort_keys(merge::MergePlan& plan, parser::SelectRewrite& rewrite, bool grouped,
                          std::string& why) {
  const parser::SelectShape& shape = facts_.select;
  bool star = false;
  for (const parser::OutputItem& item : shape.outputs) star = star || item.star;
  auto hidden_sql = [](const parser::OrderItem& item) {
    if (item.name.empty()) return item.expression;
    std::string quoted = "\"";
    for (char c : item.name) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  };
  std::vector<std::string> hidden;
  const bool tables_only = !facts_.scopes[0].non_table_from;
  for (const parser::OrderItem& item : shape.order_by) {
    if (item.output >= 0 || star || grouped || (shape.distinct && !shape.distinct_on)) continue;
    std::string sql = hidden_sql(item);
    if (!sql.empty() && std::find(hidden.begin(), hidden.end(), sql) == hidden.end()) {
      hidden.push_back(std::move(sql));
      plan.column_sources.push_back(text_source(item.collation, tables_only));
    }
  }
  const auto shift = static_cast<int>(hidden.size());
  for (const parser::OrderItem& item : shape.order_by) {
    if (item.using_operator) {
      why = "orders with ORDER BY ... USING, which shardwire cannot merge";
      return false;
    }
    merge::SortKey key{item.output + shift, {}, item.descending, item.nulls_first};
    auto at = item.output < 0 ? std::find(hidden.begin(), hidden.end(), hidden_sql(item)) : hidden.end();
    if (at != hidden.end()) {
      key.column = static_cast<int>(at - hidden.begin());
    } else if (item.output < 0 && item.aggregate_output >= 0 && plan.kind == merge::MergeKind::Aggregate) {
      key.column = item.aggregate_output;  // an aggregate or expression the merge computes, hidden
    } else if (star && plan.kind != merge::MergeKind::Aggregate && !item.name.empty()) {
      key.column = -1;  // positions shift behind *: found by name in the shards' columns
      key.name = item.name;
    } else if (item.output < 0 || star) {
      why =
          shape.distinct || grouped || star
              ? "orders by an expression that is not in the select list (with DISTINCT, GROUP BY, aggregates "
                "or * in it); select the ORDER BY expressions as columns"
              : "orders by an expression shardwire cannot select for the merge (a subquery, a comment or a "
                "dollar quote in it); select the ORDER BY expressions as columns";
      return false;
    }
    plan.order_by.push_back(std::move(key));
  }
  for (size_t i = 0; i < hidden.size(); ++i)
    rewrite.leading_columns.push_back(hidden[i] + " AS sw_order_" + std::to_string(i + 1));
  plan.hidden = shift;
  return true;
}

}  // namespace sw::router::detail
