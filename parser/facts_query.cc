// FactsBuilder: query blocks, FROM items, conditions and expressions.
//
// Predicates and equalities are taken from the top-level AND chain of a WHERE and of a join's
// ON only: `a = 1 AND (b = 2 OR c = 3)` gives a usable `a = 1` and unusable `b = 2`, `c = 3`.
// An outer join's ON restricts only its nullable side (LEFT/RIGHT JOIN; FULL JOIN: none): its
// `column = value` predicates are usable for columns of that side only, and its equalities
// carry a key restriction from the preserved side to the nullable one only (they still say the
// joined rows share the value: co-location). `= ANY (ARRAY[...])` is an IN list; `= ANY ('{...}')`
// and `= ANY ($n)` are array predicates (the router reads the elements); NOT IN (`<>` ALL) and
// other arrays are not predicates.
#include <algorithm>
#include <unordered_set>

#include "parser/facts_builder.h"

namespace sw::parser::detail {

// PostgreSQL's built-in aggregates (pg_aggregate, PostgreSQL 15) that can be called without an
// aggregate clause. User-defined aggregates are not known here; calls with *, DISTINCT, ORDER BY,
// FILTER or WITHIN GROUP are aggregates whatever their name.
bool is_builtin_aggregate(std::string_view name) {
  static const std::unordered_set<std::string_view> names = {"array_agg",
                                                             "avg",
                                                             "bit_and",
                                                             "bit_or",
                                                             "bit_xor",
                                                             "bool_and",
                                                             "bool_or",
                                                             "count",
                                                             "every",
                                                             "json_agg",
                                                             "jsonb_agg",
                                                             "json_object_agg",
                                                             "jsonb_object_agg",
                                                             "max",
                                                             "min",
                                                             "range_agg",
                                                             "range_intersect_agg",
                                                             "string_agg",
                                                             "sum",
                                                             "xmlagg",
                                                             "corr",
                                                             "covar_pop",
                                                             "covar_samp",
                                                             "regr_avgx",
                                                             "regr_avgy",
                                                             "regr_count",
                                                             "regr_intercept",
                                                             "regr_r2",
                                                             "regr_slope",
                                                             "regr_sxx",
                                                             "regr_sxy",
                                                             "regr_syy",
                                                             "stddev",
                                                             "stddev_pop",
                                                             "stddev_samp",
                                                             "variance",
                                                             "var_pop",
                                                             "var_samp",
                                                             "mode",
                                                             "percentile_cont",
                                                             "percentile_disc",
                                                             "grouping",
                                                             "any_value"};
  return names.count(name) > 0;
}

namespace {

bool is_statement_node(std::string_view type) {
  return type == "SelectStmt" || type == "InsertStmt" || type == "UpdateStmt" || type == "DeleteStmt" ||
         type == "MergeStmt";
}

}  // namespace

class FactsBuilder::Depth {
 public:
  explicit Depth(FactsBuilder& builder) : builder_(builder) {
    if (++builder_.depth_ > kMaxDepth) builder_.too_deep_ = true;
  }
  ~Depth() { --builder_.depth_; }
  Depth(const Depth&) = delete;
  Depth& operator=(const Depth&) = delete;
  explicit operator bool() const { return !builder_.too_deep_; }

 private:
  FactsBuilder& builder_;
};

int FactsBuilder::select(JsonRef body, int parent) {
  Depth depth(*this);
  if (!depth) return -1;
  const int scope = new_scope(parent);
  if (JsonRef with = body["withClause"]) with_clause(with, scope);
  JsonRef op = body["op"];
  uint32_t features = 0;
  if (op && !op.equals("SETOP_NONE")) {
    features |= feature::kSetOp;
    select(body["larg"], scope);  // branches are SelectStmt bodies without a node wrapper
    select(body["rarg"], scope);
  } else {
    std::vector<int> tables;
    for (JsonRef item : body["fromClause"]) from_item(item, scope, false, tables);
    if (JsonRef into = body["intoClause"]) {
      add_table(into["rel"], TableRole::Create, scope, false, false);
    }
    expression(body["valuesLists"], scope);
    expression(body["targetList"], scope);
    condition(body["whereClause"], scope, Restriction{});
    if (body["groupClause"]) features |= feature::kGroupBy;
    expression(body["groupClause"], scope);
    if (body["havingClause"]) features |= feature::kHaving;
    expression(body["havingClause"], scope);
    if (body["distinctClause"]) features |= feature::kDistinct;
    expression(body["distinctClause"], scope);  // DISTINCT ON (expressions)
    if (body["windowClause"]) features |= feature::kWindow;
    expression(body["windowClause"], scope);
  }
  if (body["sortClause"]) features |= feature::kOrderBy;
  expression(body["sortClause"], scope);
  if (body["limitCount"] || body["limitOffset"]) features |= feature::kLimit;
  expression(body["limitCount"], scope);
  expression(body["limitOffset"], scope);
  out_.scopes[static_cast<size_t>(scope)].features |= features;
  return scope;
}

// WITH: each CTE body is its own block. Without RECURSIVE a CTE's name is visible only after
// its own body (inside it, the same name is still the table), so names are registered as the
// bodies are walked; WITH RECURSIVE makes every name visible in every body.
void FactsBuilder::with_clause(JsonRef with, int scope) {
  const bool recursive = with["recursive"].boolean();
  if (recursive) {
    for (JsonRef cte : with["ctes"]) {
      ctes_[static_cast<size_t>(scope)].emplace_back(cte.body()["ctename"].string(), -1);
    }
  }
  for (JsonRef cte : with["ctes"]) {
    JsonRef body = cte.body();
    JsonRef query = body["ctequery"];
    const int inner = statement(query, scope);
    if (!recursive)
      ctes_[static_cast<size_t>(scope)].emplace_back(body["ctename"].string(),
                                                     query.node_type() == "SelectStmt" ? inner : -1);
  }
}

void FactsBuilder::from_item(JsonRef node, int scope, bool nullable, std::vector<int>& tables) {
  Depth depth(*this);
  if (!depth || !node) return;
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  // By index: nested walks add scopes, which may move out_.scopes.
  auto mark_non_table = [&] { out_.scopes[static_cast<size_t>(scope)].non_table_from = true; };
  if (type == "RangeVar") {
    const std::string name = body["relname"].string();
    if (!body["schemaname"] && is_cte(name, scope)) {
      mark_non_table();
      if (const int inner = cte_scope(name, scope); inner >= 0) feed(inner, scope, nullable, false);
      std::string alias = body["alias"]["aliasname"].string();
      add_entry(scope, {alias.empty() ? name : alias, "", -1});
    } else {
      tables.push_back(add_table(body, TableRole::Read, scope, nullable, true));
    }
  } else if (type == "JoinExpr") {
    join(body, scope, nullable, tables);
  } else if (type == "RangeTableSample") {
    from_item(body["relation"], scope, nullable, tables);
    expression(body["args"], scope);
    expression(body["repeatable"], scope);
  } else {
    // Subqueries, functions, VALUES, XMLTABLE, ...: not tables, but may contain some.
    mark_non_table();
    if (type == "RangeSubselect") {
      const int inner = statement(body["subquery"], scope);
      if (inner >= 0 && body["subquery"].node_type() == "SelectStmt") feed(inner, scope, nullable, true);
    } else {
      expression(body, scope);
    }
    std::string alias = body["alias"]["aliasname"].string();
    if (!alias.empty()) add_entry(scope, {alias, "", -1});
  }
}

void FactsBuilder::join(JsonRef body, int scope, bool nullable, std::vector<int>& tables) {
  JsonRef type = body["jointype"];
  const bool left_nullable = nullable || type.equals("JOIN_RIGHT") || type.equals("JOIN_FULL");
  const bool right_nullable = nullable || type.equals("JOIN_LEFT") || type.equals("JOIN_FULL");
  std::vector<int> left, right;
  from_item(body["larg"], scope, left_nullable, left);
  from_item(body["rarg"], scope, right_nullable, right);
  Restriction restriction;
  if (!type.equals("JOIN_INNER")) {
    restriction.all = false;
    if (type.equals("JOIN_LEFT")) {
      restriction.preserved = &left;
      restriction.nullable = &right;
    } else if (type.equals("JOIN_RIGHT")) {
      restriction.preserved = &right;
      restriction.nullable = &left;
    }  // FULL: neither side is restricted
  }
  // USING (c): each table of one side that has c equals each of the other side's.
  for (JsonRef name : body["usingClause"]) {
    const std::string column = name.body()["sval"].string();
    for (int l : left) {
      for (int r : right) {
        ColumnEquality equality{{column, l, scope, true}, {column, r, scope, true}};
        equality.left_restricts_right = restriction.all || restriction.preserved == &left;
        equality.right_restricts_left = restriction.all || restriction.preserved == &right;
        out_.equalities.push_back(std::move(equality));
      }
    }
  }
  condition(body["quals"], scope, restriction);
  std::string alias = body["alias"]["aliasname"].string();
  if (!alias.empty()) add_entry(scope, {alias, "", -1});
  tables.insert(tables.end(), left.begin(), left.end());
  tables.insert(tables.end(), right.begin(), right.end());
}

void FactsBuilder::condition(JsonRef node, int scope, const Restriction& restriction) {
  Depth depth(*this);
  if (!depth || !node) return;
  const std::string_view type = node.node_type();
  JsonRef body = node.body();
  if (type == "BoolExpr" && body["boolop"].equals("AND_EXPR")) {
    for (JsonRef arg : body["args"]) condition(arg, scope, restriction);
  } else if (type == "A_Expr") {
    predicate(body, scope, &restriction);
    expression(body, scope);
  } else if (type == "SubLink" && restriction.all) {
    in_subquery(body, scope);
  } else {
    expression(node, scope);
  }
}

// `x IN (SELECT y FROM ...)` / `x = ANY (SELECT y ...)` in a WHERE's AND chain: a row counts only
// when a row of the subquery has its value, and only those rows of the subquery count, so x = y
// ties their tables like a join. Not when the subquery limits or windows its rows (which rows
// are kept would depend on rows of other values) or is a set operation.
void FactsBuilder::in_subquery(JsonRef sublink, int scope) {
  expression(sublink["testexpr"], scope);
  const int inner = statement(sublink["subselect"], scope);
  if (!sublink["subLinkType"].equals("ANY_SUBLINK") || inner < 0) return;
  JsonRef oper = sublink["operName"];
  if (oper && (oper.size() != 1 || !(*oper.begin()).body()["sval"].equals("="))) return;
  JsonRef select = sublink["subselect"].body();
  JsonRef targets = select["targetList"];
  if (sublink["subselect"].node_type() != "SelectStmt" || targets.size() != 1) return;
  const uint32_t features = out_.scopes[static_cast<size_t>(inner)].features;
  if ((features & (feature::kLimit | feature::kWindow | feature::kSetOp)) != 0) return;
  ColumnRef left, right;
  if (!column(sublink["testexpr"], scope, left) || !column((*targets.begin()).body()["val"], inner, right))
    return;
  // Written in both blocks: each side's restriction carries into the other (an AND chain).
  out_.equalities.push_back(ColumnEquality{left, right});
  out_.equalities.push_back(ColumnEquality{std::move(right), std::move(left)});
}

// Generic walk of an expression (or any part of a tree): finds subqueries, aggregates, window
// functions, and predicates nested where they restrict nothing (recorded unusable).
void FactsBuilder::expression(JsonRef node, int scope) {
  Depth depth(*this);
  if (!depth || !node) return;
  if (node.is_array()) {
    for (JsonRef element : node) expression(element, scope);
    return;
  }
  if (!node.is_object()) return;
  for (JsonRef child : node) {
    const std::string_view key = child.key();
    if (key == "SubLink") {
      expression(child["testexpr"], scope);
      statement(child["subselect"], scope);
    } else if (is_statement_node(key)) {
      statement(node, scope);  // a statement where an expression was expected: walk it
    } else if (key == "A_Expr") {
      predicate(child, scope, nullptr);
      expression(child, scope);
    } else if (key == "FuncCall") {
      function_call(child, scope);
      expression(child, scope);
    } else if (key == "RangeVar" || ((key == "relation" || key == "rel") && child["relname"])) {
      add_table(child, TableRole::Read, scope, false, false);  // unexpected: keep it anyway
    } else if (key == "ParamRef") {
      out_.max_param = std::max(out_.max_param, static_cast<int>(child["number"].integer(0)));
    } else if (key == "ColumnRef" || key == "A_Const" || key == "location" || key == "String") {
      continue;  // leaves
    } else if (child.is_object() || child.is_array()) {
      expression(child, scope);
    }
  }
}

void FactsBuilder::predicate(JsonRef a_expr, int scope, const Restriction* restriction) {
  JsonRef kind = a_expr["kind"];
  JsonRef name = a_expr["name"];  // the operator: [{"String": {"sval": "="}}]
  if (name.size() != 1) return;
  JsonRef op = *name.begin();
  if (op.node_type() != "String" || !op.body()["sval"].equals("=")) return;
  auto in = [](const std::vector<int>* tables, int table) {
    return tables != nullptr && table >= 0 &&
           std::find(tables->begin(), tables->end(), table) != tables->end();
  };
  // Does a restriction on this column's rows hold for every row of its table that counts?
  auto restricts = [&](const ColumnRef& column) {
    return restriction != nullptr && (restriction->all || in(restriction->nullable, column.table));
  };
  ColumnRef left, right;
  if (kind.equals("AEXPR_OP")) {
    const bool left_column = column(a_expr["lexpr"], scope, left);
    const bool right_column = column(a_expr["rexpr"], scope, right);
    if (left_column && right_column) {
      if (restriction == nullptr) return;
      ColumnEquality equality{std::move(left), std::move(right)};
      equality.left_restricts_right = restriction->all || (in(restriction->preserved, equality.left.table) &&
                                                           in(restriction->nullable, equality.right.table));
      equality.right_restricts_left = restriction->all || (in(restriction->preserved, equality.right.table) &&
                                                           in(restriction->nullable, equality.left.table));
      out_.equalities.push_back(std::move(equality));
    } else if (left_column) {
      const bool usable = restricts(left);
      out_.predicates.push_back({std::move(left), {value(a_expr["rexpr"])}, false, usable});
    } else if (right_column) {
      const bool usable = restricts(right);
      out_.predicates.push_back({std::move(right), {value(a_expr["lexpr"])}, false, usable});
    }
  } else if (kind.equals("AEXPR_IN")) {
    if (!column(a_expr["lexpr"], scope, left)) return;
    const bool usable = restricts(left);
    KeyPredicate list{std::move(left), {}, true, usable};
    for (JsonRef item : a_expr["rexpr"].body()["items"]) list.values.push_back(value(item));
    out_.predicates.push_back(std::move(list));
  } else if (kind.equals("AEXPR_OP_ANY")) {
    if (!column(a_expr["lexpr"], scope, left)) return;
    const bool usable = restricts(left);
    KeyPredicate list{std::move(left), {}, true, usable};
    JsonRef array = a_expr["rexpr"];
    if (array.node_type() == "A_ArrayExpr") {
      for (JsonRef item : array.body()["elements"]) list.values.push_back(value(item));
    } else {
      Value whole = value(array);
      if (whole.kind != ValueKind::String && whole.kind != ValueKind::Param) return;
      list.array = true;
      list.values.push_back(std::move(whole));
    }
    out_.predicates.push_back(std::move(list));
  }
}

void FactsBuilder::function_call(JsonRef body, int scope) {
  std::string name;
  for (JsonRef part : body["funcname"]) name = part.body()["sval"].string();
  if (name == "pg_advisory_lock" || name == "pg_advisory_lock_shared" || name == "pg_try_advisory_lock" ||
      name == "pg_try_advisory_lock_shared") {
    out_.session_advisory_lock = true;
  }
  if (name == "set_config") {
    SetConfigCall call;
    Value* fields[] = {&call.name, &call.value, &call.is_local};
    size_t i = 0;
    for (JsonRef arg : body["args"]) {
      if (i < 3) *fields[i] = value(arg);
      ++i;
    }
    out_.set_config_calls.push_back(std::move(call));
  }
  uint32_t found = 0;
  if (body["over"]) {
    found = feature::kWindow;
  } else if (body["agg_star"].boolean() || body["agg_distinct"].boolean() || body["agg_order"] ||
             body["agg_filter"] || body["agg_within_group"].boolean() || is_builtin_aggregate(name)) {
    found = feature::kAggregate;
  }
  out_.scopes[static_cast<size_t>(scope)].features |= found;
}

}  // namespace sw::parser::detail
