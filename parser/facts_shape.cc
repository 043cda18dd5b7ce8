// The statement's own SELECT described for scatter plans (SelectShape). Output columns are
// named as PostgreSQL's FigureColname names them; ORDER BY items resolve as PostgreSQL
// resolves them (a position, then an output column name, then an expression equal to an
// output column's); GROUP BY items the other way round (expressions first: GROUP BY names
// are input columns before output names).
#include <algorithm>
#include <cctype>

#include "parser/facts_builder.h"

namespace sw::parser::detail {
namespace {

constexpr int kMaxShapeDepth = 64;

// The subtree without its locations; false when deeper than kMaxShapeDepth (no shape then).
bool write_shape(JsonRef node, std::string& out, int depth) {
  if (depth > kMaxShapeDepth) return false;
  switch (node.type()) {
    case JsonType::Object:
    case JsonType::Array: {
      const bool object = node.is_object();
      out += object ? '{' : '[';
      for (JsonRef child : node) {
        if (object) {
          if (child.key() == "location") continue;
          out += child.key();
          out += ':';
        }
        if (!write_shape(child, out, depth + 1)) return false;
        out += ',';
      }
      out += object ? '}' : ']';
      return true;
    }
    case JsonType::String: out += '"' + node.string() + '"'; return true;
    case JsonType::Number: out += node.number(); return true;
    case JsonType::Bool: out += node.boolean() ? "t" : "f"; return true;
    case JsonType::Null: out += "null"; return true;
    case JsonType::Missing: return true;
  }
  return true;
}

std::string shape_text(JsonRef node) {
  std::string out;
  return write_shape(node, out, 0) ? out : std::string();
}

// The offset just past the closing parenthesis of the call starting at `at`, skipping quoted
// strings, quoted identifiers and comments; 0 when not found.
size_t call_end(std::string_view sql, size_t at) {
  int depth = 0;
  for (size_t i = at; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
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
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      i = sql.find('\n', i);
      if (i == std::string_view::npos) return 0;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      i = sql.find("*/", i + 2);
      if (i == std::string_view::npos) return 0;
      ++i;
    } else if (c == '$') {
      // A parameter ($1) is spliced as written; a dollar quote is not located.
      if (i + 1 >= sql.size() || !std::isdigit(static_cast<unsigned char>(sql[i + 1]))) return 0;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) return i + 1;
      if (depth < 0) return 0;
    }
  }
  return 0;
}

// The offset just past "FILTER (WHERE ...)" when it follows the call ending at `end`; 0 when it
// does not or cannot be located.
size_t filter_end(std::string_view sql, size_t end) {
  size_t at = end;
  while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) ++at;
  constexpr std::string_view kFilter = "filter";
  if (sql.size() - at < kFilter.size()) return 0;
  for (size_t i = 0; i < kFilter.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(sql[at + i])) != kFilter[i]) return 0;
  }
  at += kFilter.size();
  while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) ++at;
  return at < sql.size() && sql[at] == '(' ? call_end(sql, at) : 0;
}

// count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x) of one argument (no ORDER BY inside): the
// merge counts or adds up the union of the shards' array_agg(DISTINCT x), so HAVING and ORDER BY
// may use it too.
bool aggregates_distinct(JsonRef call) {
  std::string name;
  for (JsonRef part : call["funcname"]) name = part.body()["sval"].string();
  return (name == "count" || name == "sum" || name == "avg") && call["agg_distinct"].boolean() &&
         !call["agg_order"] && !call["func_variadic"].boolean() && call["args"].size() == 1;
}

AggregateCall aggregate_of(JsonRef call) {
  std::string name;
  for (JsonRef part : call["funcname"]) name = part.body()["sval"].string();
  const bool star = call["agg_star"].boolean();
  // FILTER keeps an aggregate mergeable: each shard aggregates its filtered rows, and the partial
  // results combine as the unfiltered ones do (avg's sum and count each get the FILTER).
  const bool filter = static_cast<bool>(call["agg_filter"]);
  // DISTINCT changes nothing for min, max, bool_and, bool_or: each shard runs the call as written.
  const bool same_distinct =
      name == "min" || name == "max" || name == "bool_and" || name == "bool_or" || name == "every";
  const bool clause = (call["agg_distinct"].boolean() && !same_distinct) || call["agg_order"] ||
                      call["agg_within_group"].boolean();
  if (!star && !clause && !filter && !is_builtin_aggregate(name)) return AggregateCall::None;
  if (clause || call["func_variadic"].boolean()) return AggregateCall::Unmergeable;
  const size_t args = call["args"].size();
  if (name == "count") return star ? AggregateCall::CountStar : AggregateCall::Count;
  if (star || args != 1) return AggregateCall::Unmergeable;
  if (name == "sum") return AggregateCall::Sum;
  if (name == "min") return AggregateCall::Min;
  if (name == "max") return AggregateCall::Max;
  if (name == "avg") return AggregateCall::Avg;
  if (name == "bool_and" || name == "every") return AggregateCall::BoolAnd;
  if (name == "bool_or") return AggregateCall::BoolOr;
  if (name == "var_samp" || name == "variance") return AggregateCall::VarSamp;
  if (name == "var_pop") return AggregateCall::VarPop;
  if (name == "stddev_samp" || name == "stddev") return AggregateCall::StddevSamp;
  if (name == "stddev_pop") return AggregateCall::StddevPop;
  return AggregateCall::Unmergeable;
}

bool holds_aggregate(JsonRef node) {
  bool found = false;
  for_each_object(node, [&](JsonRef object) {
    if (object.node_type() == "FuncCall" && !object.body()["over"] &&
        aggregate_of(object.body()) != AggregateCall::None)
      found = true;
  });
  return found;
}

bool contains_window(JsonRef node) {
  bool found = false;
  for_each_object(node, [&](JsonRef object) {
    if (object.node_type() == "FuncCall" && object.body()["over"]) found = true;
  });
  return found;
}

// The PARTITION BY list of a window definition (a WindowDef's body), following its reference to a
// named window of the WINDOW clause (`OVER w`, `OVER (w ORDER BY ...)`, `WINDOW v AS (w ...)`);
// Missing when it has none.
JsonRef window_partition(JsonRef def, JsonRef windows, bool over) {
  for (int hops = 0; hops < kMaxShapeDepth && def; ++hops) {
    if (JsonRef partition = def["partitionClause"]) return partition;
    std::string target = def["refname"].string();
    if (target.empty() && over) target = def["name"].string();
    if (target.empty()) return {};
    JsonRef found;
    for (JsonRef named : windows) {
      if (named.body()["name"].string() == target) found = named.body();
    }
    def = found;
    over = false;
  }
  return {};
}

// The columns (a reference's last name) every window of the block partitions by: the
// intersection of their PARTITION BY lists (docs/architecture.md §6.3: windows partitioned by
// the key run on each shard as they are).
std::vector<std::string> window_partition_columns(JsonRef body) {
  std::vector<JsonRef> partitions;
  JsonRef windows = body["windowClause"];
  for (JsonRef named : windows) partitions.push_back(window_partition(named.body(), windows, false));
  for_each_object(body["targetList"], [&](JsonRef object) {
    if (object.node_type() == "FuncCall" && object.body()["over"])
      partitions.push_back(window_partition(object.body()["over"], windows, true));
  });
  std::vector<std::string> common;
  for (size_t i = 0; i < partitions.size(); ++i) {
    std::vector<std::string> names;
    for (JsonRef item : partitions[i]) {
      if (item.node_type() != "ColumnRef") continue;
      std::string last;
      for (JsonRef field : item.body()["fields"]) last = field.body()["sval"].string();
      if (!last.empty()) names.push_back(std::move(last));
    }
    if (i == 0) {
      common = std::move(names);
      continue;
    }
    std::erase_if(common, [&](const std::string& name) {
      return std::find(names.begin(), names.end(), name) == names.end();
    });
  }
  return common;
}

// ColumnRef with one field: its name; "" otherwise.
std::string single_name(JsonRef node) {
  if (node.node_type() != "ColumnRef") return {};
  JsonRef fields = node.body()["fields"];
  if (fields.size() != 1) return {};
  return (*fields.begin()).body()["sval"].string();
}

std::string collation_name(JsonRef collate) {
  std::string name;
  for (JsonRef part : collate.body()["collname"]) name = part.body()["sval"].string();
  return name;
}

// The collation facts of an expression: min/max and count/sum/avg(DISTINCT x) (whose x values the merge
// compares) take their argument's collation, a COLLATE on
// the whole expression decides, anything else derives from what it reads.
CollationSource collation_source(JsonRef node) {
  CollationSource source;
  while (node.node_type() == "FuncCall" && !node.body()["over"] && node.body()["args"].size() == 1) {
    const AggregateCall call = aggregate_of(node.body());
    if (call != AggregateCall::Min && call != AggregateCall::Max && !aggregates_distinct(node.body())) break;
    node = *node.body()["args"].begin();
  }
  if (node.node_type() == "CollateClause") {
    source.explicit_name = collation_name(node);
    return source;
  }
  for_each_object(node, [&](JsonRef object) {
    const std::string_view type = object.node_type();
    if (type == "SubLink" || type == "A_Star") source.opaque = true;
    if (type == "CollateClause") source.nested.push_back(collation_name(object));
    if (type != "ColumnRef") return;
    std::string last;
    for (JsonRef field : object.body()["fields"]) {
      if (field.node_type() == "A_Star") source.opaque = true;
      last = field.body()["sval"].string();
    }
    if (!last.empty()) source.columns.push_back(std::move(last));
  });
  return source;
}

// An array_agg / string_agg call whose text is [begin, end) (its FILTER from `close` on) as the
// merge orders it, with its sort keys' collations; nullopt when it cannot be.
std::optional<OrderedAggregate> ordered_call(std::string_view sql, JsonRef body, size_t close, size_t end) {
  auto ordered = ordered_aggregate(sql, body, sql.substr(close, end - close));
  if (!ordered) return ordered;
  for (JsonRef sort : body["agg_order"])
    ordered->key_collations.push_back(collation_source(sort.body()["node"]));
  if (ordered->distinct && !body["agg_order"])  // ordered by the value
    ordered->key_collations.push_back(collation_source(*body["args"].begin()));
  return ordered;
}

bool ordered_name(const std::string& name) { return name == "string_agg" || name == "array_agg"; }

}  // namespace

OutputItem FactsBuilder::output_item(JsonRef target) {
  OutputItem item;
  item.begin.location = static_cast<int>(target["location"].integer(-1));
  JsonRef val = target["val"];
  const std::string_view type = val.node_type();
  JsonRef body = val.body();
  item.shape = shape_text(val);
  item.collation = collation_source(val);
  if (type == "ColumnRef") {
    for (JsonRef field : body["fields"]) {
      if (field.node_type() == "A_Star") {
        item.star = true;
      } else {
        item.column = field.body()["sval"].string();
      }
    }
    item.name = item.column;
  } else if (type == "FuncCall") {
    for (JsonRef part : body["funcname"]) item.name = part.body()["sval"].string();
    if (!body["over"]) item.aggregate = aggregate_of(body);
    if (!body["over"] && item.aggregate == AggregateCall::None)
      item.contains_aggregate = holds_aggregate(val);
    if (item.aggregate != AggregateCall::None) {
      const auto begin = static_cast<size_t>(body["location"].integer(-1));
      const size_t close = begin < sql_.size() ? call_end(sql_, begin) : 0;
      size_t end = close;
      // avg's (a variance's, an ordered aggregate's) FILTER goes with the call: each of the shards'
      // columns for it gets it.
      const bool ordered = item.aggregate == AggregateCall::Unmergeable && ordered_name(item.name);
      if (end > 0 && (partial_width(item.aggregate) > 1 || ordered) && body["agg_filter"])
        end = filter_end(sql_, end);
      if (ordered && end > 0) item.ordered = ordered_call(sql_, body, close, end);
      item.call_begin.location = static_cast<int>(begin);
      if (end > 0) {
        item.call_end.location = static_cast<int>(end);
        item.call_text = std::string(sql_.substr(begin, end - begin));
      }
      for (JsonRef arg : body["args"]) {
        if (holds_aggregate(arg)) item.contains_aggregate = true;
      }
    }
  } else {
    item.name = column_name_of(val);
    item.contains_aggregate = holds_aggregate(val);
  }
  if (JsonRef alias = target["name"]) {
    item.name = alias.string();
    item.aliased = true;
  }
  return item;
}

int FactsBuilder::having_aggregate(JsonRef node) {
  SelectShape& shape = out_.select;
  JsonRef body = node.body();
  if (node.node_type() != "FuncCall" || body["over"]) return -1;
  const AggregateCall call = aggregate_of(body);
  std::string name;
  for (JsonRef part : body["funcname"]) name = part.body()["sval"].string();
  const bool ordered = call == AggregateCall::Unmergeable && ordered_name(name);
  if (call == AggregateCall::None ||
      (call == AggregateCall::Unmergeable && !aggregates_distinct(body) && !ordered))
    return -1;
  const std::string call_shape = shape_text(node);
  for (size_t i = 0; i < shape.having_aggregates.size(); ++i) {
    if (!call_shape.empty() && shape.having_aggregates[i].shape == call_shape)
      return static_cast<int>(shape.outputs.size() + i);
  }
  const auto begin = static_cast<size_t>(body["location"].integer(-1));
  const size_t close = begin < sql_.size() ? call_end(sql_, begin) : 0;
  // The call's FILTER goes with it into each of the shards' columns.
  const size_t end = close > 0 && body["agg_filter"] ? filter_end(sql_, close) : close;
  if (end == 0 || call_shape.empty()) return -1;
  for (JsonRef arg : body["args"]) {
    if (holds_aggregate(arg)) return -1;
  }
  OutputItem item;
  item.aggregate = call;
  item.shape = call_shape;
  item.name = name;
  if (ordered) {
    item.ordered = ordered_call(sql_, body, close, end);
    if (!item.ordered) return -1;
  }
  item.call_begin.location = static_cast<int>(begin);
  item.call_end.location = static_cast<int>(end);
  item.call_text = std::string(sql_.substr(begin, end - begin));
  item.collation = collation_source(node);
  shape.having_aggregates.push_back(std::move(item));
  return static_cast<int>(shape.outputs.size() + shape.having_aggregates.size() - 1);
}

// The output column `node` (an ORDER BY or GROUP BY item) stands for, or -1.
int FactsBuilder::output_of(JsonRef node, bool names_first) const {
  const auto& outputs = out_.select.outputs;
  if (node.node_type() == "A_Const" && node.body()["ival"]) {
    const int64_t position = node.body()["ival"]["ival"].integer(0);
    return position >= 1 && position <= static_cast<int64_t>(outputs.size()) ? static_cast<int>(position - 1)
                                                                             : -1;
  }
  const std::string name = single_name(node);
  const std::string shape = shape_text(node);
  auto by_name = [&]() {
    for (size_t i = 0; i < outputs.size() && !name.empty(); ++i) {
      if (outputs[i].name == name && !outputs[i].star) return static_cast<int>(i);
    }
    return -1;
  };
  auto by_shape = [&]() {
    for (size_t i = 0; i < outputs.size() && !shape.empty(); ++i) {
      if (outputs[i].shape == shape) return static_cast<int>(i);
    }
    return -1;
  };
  int found = names_first ? by_name() : by_shape();
  if (found < 0) found = names_first ? by_shape() : by_name();
  return found;
}

void FactsBuilder::select_shape(JsonRef body) {
  SelectShape& shape = out_.select;
  JsonRef op = body["op"];
  if (op && !op.equals("SETOP_NONE")) return;
  shape.plain = true;
  auto refuse = [&](const char* what) {
    if (shape.unmergeable.empty()) shape.unmergeable = what;
  };
  for (JsonRef target : body["targetList"]) shape.outputs.push_back(output_item(target.body()));
  output_expressions(body["targetList"]);
  if (body["windowClause"] || contains_window(body["targetList"])) {
    shape.windows = true;
    shape.window_partition_columns = window_partition_columns(body);
  }
  if (JsonRef having = body["havingClause"]) {
    const size_t before = shape.having_aggregates.size();  // the select list's expressions'
    having_shape(having);
    if (shape.having.empty()) {
      shape.having_aggregates.resize(before);
      refuse("HAVING");
    }
  }
  if (body["lockingClause"]) refuse("FOR UPDATE/SHARE");
  if (body["intoClause"]) refuse("SELECT INTO");
  if (JsonRef distinct = body["distinctClause"]) {
    shape.distinct = true;
    for (JsonRef item : distinct) {
      if (item.size() == 0) continue;
      shape.distinct_on = true;
      shape.distinct_on_outputs.push_back(output_of(item, true));
      if (item.node_type() == "A_Const" && item.body()["ival"]) shape.positions.push_back(value(item));
    }
  }
  for (JsonRef item : body["groupClause"]) {
    const std::string_view type = item.node_type();
    if (type == "GroupingSet") {
      refuse("GROUPING SETS / ROLLUP / CUBE");
      continue;
    }
    shape.group_by.push_back(output_of(item, false));
    if (item.node_type() == "A_Const" && item.body()["ival"]) shape.positions.push_back(value(item));
    const std::string name = single_name(item);
    if (!name.empty()) shape.group_columns.push_back(name);
    if (type == "ColumnRef" && name.empty()) {  // qualified: t.key
      std::string last;
      for (JsonRef field : item.body()["fields"]) last = field.body()["sval"].string();
      shape.group_columns.push_back(last);
    }
  }
  for (JsonRef item : body["sortClause"]) {
    JsonRef sort = item.body();
    OrderItem order;
    order.output = output_of(sort["node"], true);
    order.name = single_name(sort["node"]);
    order.collation = collation_source(sort["node"]);
    if (order.output < 0 && order.name.empty() && !holds_aggregate(sort["node"]) &&
        !contains_window(sort["node"]))
      order.expression = order_expression(sql_, sort["node"]);
    if (sort["node"].node_type() == "A_Const" && sort["node"].body()["ival"])
      shape.positions.push_back(value(sort["node"]));
    order_over_aggregates(sort["node"], order);
    order.descending = sort["sortby_dir"].equals("SORTBY_DESC");
    order.using_operator = sort["sortby_dir"].equals("SORTBY_USING");
    order.nulls_first = sort["sortby_nulls"].equals("SORTBY_NULLS_FIRST") ||
                        (order.descending && !sort["sortby_nulls"].equals("SORTBY_NULLS_LAST"));
    shape.order_by.push_back(order);
  }
  if (body["limitOption"].equals("LIMIT_OPTION_WITH_TIES")) refuse("FETCH FIRST ... WITH TIES");
  if (JsonRef count = body["limitCount"]) {
    shape.has_limit = true;
    shape.limit = value(count);
  }
  if (JsonRef offset = body["limitOffset"]) {
    shape.has_offset = true;
    shape.offset = value(offset);
  }
}

std::string shape_of(JsonRef node) { return shape_text(node); }

bool is_aggregate_call(JsonRef call) { return aggregate_of(call) != AggregateCall::None; }

bool contains_aggregate(JsonRef node) { return holds_aggregate(node); }

namespace {

// FigureColnameInternal: the name and its strength (2: a column, function or the like; 1: a
// type name or CASE; 0: none) for the forms it names.
int figure_name(JsonRef value, std::string& name) {
  const std::string_view type = value.node_type();
  JsonRef body = value.body();
  if (type == "ColumnRef") {
    for (JsonRef field : body["fields"]) {
      if (field.node_type() != "A_Star") name = field.body()["sval"].string();
    }
    return name.empty() ? 0 : 2;
  }
  if (type == "FuncCall") {
    for (JsonRef part : body["funcname"]) name = part.body()["sval"].string();
    return 2;
  }
  if (type == "A_Expr" && body["kind"].equals("AEXPR_NULLIF")) {
    name = "nullif";
    return 2;
  }
  if (type == "CoalesceExpr" || type == "MinMaxExpr") {
    name = type == "CoalesceExpr" ? "coalesce" : body["op"].equals("IS_GREATEST") ? "greatest" : "least";
    return 2;
  }
  if (type == "CaseExpr") {  // named by its ELSE when that has a strong name
    const int strength = body["defresult"] ? figure_name(body["defresult"], name) : 0;
    if (strength > 1) return strength;
    name = "case";
    return 1;
  }
  if (type == "TypeCast") {
    const int strength = figure_name(body["arg"], name);
    if (strength > 1) return strength;
    for (JsonRef part : body["typeName"]["names"]) name = part.body()["sval"].string();
    return name.empty() ? 0 : 1;
  }
  return 0;
}

}  // namespace

std::string column_name_of(JsonRef value) {
  std::string name;
  return figure_name(value, name) > 0 && !name.empty() ? name : "?column?";
}

}  // namespace sw::parser::detail
