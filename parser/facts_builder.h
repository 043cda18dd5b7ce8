// Routing facts of one statement from its libpg_query tree (internal to sw_parser).
//
// The walk follows PostgreSQL's raw parse nodes (nodes/parsenodes.h): statements open query
// blocks (Scope), FROM items register tables and the names columns may be qualified with,
// WHERE and JOIN ... ON conditions are split on their top-level AND chain into `column = value`
// / `column IN (...)` predicates and `column = column` equalities; everything else is walked
// generically to find subqueries, aggregates and window functions. Recursion is bounded
// (kMaxDepth nested nodes): past it the facts are marked incomplete and list every relation
// named anywhere in the statement (an iterative scan), which is all the router may use then.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "parser/analyze.h"
#include "parser/json_tree.h"

namespace sw::parser::detail {

class FactsBuilder {
 public:
  static constexpr int kMaxDepth = 160;

  // `sql` is the whole analyzed string: node locations are offsets into it.
  FactsBuilder(std::string_view sql, StatementFacts& out) : sql_(sql), out_(out) {}

  // Fills the routing facts of `out` (whose kind is already classified) for the top-level
  // statement `node_type` with body `body`.
  void build(std::string_view node_type, JsonRef body);

 private:
  class Depth;
  // How a condition restricts rows: a WHERE or inner join's ON restricts every row of its
  // block; an outer join's ON restricts only its nullable input (LEFT/RIGHT; FULL: neither).
  struct Restriction {
    bool all = true;
    const std::vector<int>* preserved = nullptr;  // outer join: tables of the preserved input
    const std::vector<int>* nullable = nullptr;   // outer join: tables of the nullable input
  };
  // A name columns may be qualified with, visible in a scope: a table (alias or name) or
  // something else (subquery, function, CTE reference, join alias, EXCLUDED): table == -1.
  struct Entry {
    std::string name;
    std::string schema;
    int table = -1;
  };

  // facts_builder.cc — statements.
  int statement(JsonRef node, int parent);  // a wrapped statement node; returns its scope
  int insert(JsonRef body, int parent);
  void select_items(JsonRef select_body, int select_scope, InsertFacts& facts) const;
  int update(JsonRef body, int parent);
  int remove(JsonRef body, int parent);
  int merge(JsonRef body, int parent);
  void copy(JsonRef body);
  void ddl(std::string_view node_type, JsonRef body);
  void ddl_names(JsonRef name_list, bool drop_last, TableRole role);
  void assignments(JsonRef targets, int table, int scope);
  void returning(JsonRef list, int scope);

  // facts_session.cc — session objects and savepoint names.
  void session_object(std::string_view node_type, JsonRef body);

  // facts_query.cc — query blocks, FROM, conditions, expressions.
  int select(JsonRef body, int parent);
  void with_clause(JsonRef with, int scope);
  void from_item(JsonRef node, int scope, bool nullable, std::vector<int>& tables);
  void join(JsonRef body, int scope, bool nullable, std::vector<int>& tables);
  void condition(JsonRef node, int scope, const Restriction& restriction);
  void expression(JsonRef node, int scope);
  // `restriction` null: found inside some other expression (restricts nothing).
  void predicate(JsonRef a_expr, int scope, const Restriction* restriction);
  void function_call(JsonRef body, int scope);
  // `x IN (SELECT y ...)` in a WHERE's AND chain: walks it, and ties x = y (facts_query.cc).
  void in_subquery(JsonRef sublink, int scope);

  // facts_shape.cc — the statement's own SELECT for scatter plans.
  void select_shape(JsonRef body);
  OutputItem output_item(JsonRef target);
  int output_of(JsonRef node, bool names_first) const;
  bool having_term(JsonRef node, HavingTerm& out);
  // A mergeable aggregate call HAVING compares that is not selected: its output number past the
  // select list (SelectShape::having_aggregates), or -1.
  int having_aggregate(JsonRef node);
  void having_shape(JsonRef having);
  // facts_aggregate_expression.cc — expressions over aggregates a merge computes.
  std::optional<AggregateExpression> aggregate_expression(JsonRef node, int depth);
  std::optional<AggregateExpression> aggregate_call(JsonRef node, int depth);
  std::optional<AggregateExpression> aggregate_operator(JsonRef body, int depth);
  // facts_aggregate_case.cc — CASE over aggregates and its conditions.
  std::optional<AggregateExpression> aggregate_case(JsonRef body, int depth);
  std::optional<AggregateExpression> aggregate_condition(JsonRef node, int depth);
  std::optional<AggregateExpression> aggregate_comparison(JsonRef body, int depth);
  // An expression over aggregates HAVING compares or ORDER BY sorts by that is not selected: its
  // output number past the select list (SelectShape::having_aggregates), or -1.
  int hidden_expression(JsonRef node);
  // The select list's expressions over aggregates (after every output item is known).
  void output_expressions(JsonRef targets);
  // An ORDER BY item over aggregates that is not selected, or whose text the shards must not
  // evaluate.
  void order_over_aggregates(JsonRef node, OrderItem& order);

  // facts_values.cc — values, columns, tables, scopes.
  Value value(JsonRef node) const;
  bool column(JsonRef node, int scope, ColumnRef& out) const;
  int resolve(const std::vector<std::string>& qualifier, int scope) const;
  int add_table(JsonRef range_var, TableRole role, int scope, bool nullable, bool visible);
  bool is_cte(const std::string& name, int scope) const;
  // The scope of the CTE body `name` designates from `scope`; -1 when none or recursive.
  int cte_scope(const std::string& name, int scope) const;
  // Block `inner` is read as a FROM item of `scope`: it feeds it, if it is read only there.
  void feed(int inner, int scope, bool nullable, bool once);
  int new_scope(int parent);
  void add_entry(int scope, Entry entry);
  void finish(JsonRef body);

  std::string_view sql_;
  StatementFacts& out_;
  std::vector<std::vector<Entry>> entries_;  // per scope
  // Per scope: the CTEs its WITH names, each with its body's scope (-1 under WITH RECURSIVE).
  std::vector<std::vector<std::pair<std::string, int>>> ctes_;
  std::vector<int> cte_reads_;  // per scope: how often FROM items read it as a CTE
  int depth_ = 0;
  bool too_deep_ = false;
};

bool is_builtin_aggregate(std::string_view name);

// facts_shape.cc: a subtree's shape (its JSON without locations; "" when too deep), whether a
// FuncCall's body is an aggregate call, whether a subtree holds one, and PostgreSQL's name for an
// output column's value (FigureColname).
std::string shape_of(JsonRef node);
bool is_aggregate_call(JsonRef call);
bool contains_aggregate(JsonRef node);
std::string column_name_of(JsonRef value);

// A string_agg / array_agg call (a FuncCall's body) as the merge combines it, `filter` the text of
// its FILTER clause ("" when none); nullopt when it cannot be (another aggregate, a separator
// that is not a literal, an expression that cannot be cut out); facts_ordered.cc. Its
// key_collations are left for the caller.
std::optional<OrderedAggregate> ordered_aggregate(std::string_view sql, JsonRef call,
                                                  std::string_view filter);

// Calls f(JsonRef) for every object node under `root` (root included), iteratively.
// The SQL text of an ORDER BY expression ("" when it holds a subquery or cannot be cut out);
// facts_expression.cc.
std::string order_expression(std::string_view sql, JsonRef node);
// [begin, end) of an expression's text: from its lowest location (with the parentheses just
// before it) to the first stop word, ',' or unmatched ')' outside parentheses and quotes; for a
// select-list item (`select_item`) the stops are AS, FROM and the clauses after the select list.
// {-1, -1} when it cannot be cut out (a subquery, comment, dollar quote or E'' string).
std::pair<int, int> expression_span(std::string_view sql, JsonRef node, bool select_item);

template <typename F>
void for_each_object(JsonRef root, F&& f) {
  std::vector<JsonRef> stack;
  if (root) stack.push_back(root);
  while (!stack.empty()) {
    JsonRef node = stack.back();
    stack.pop_back();
    if (node.is_object()) f(node);
    if (node.is_object() || node.is_array()) {
      const size_t mark = stack.size();
      for (JsonRef child : node) stack.push_back(child);
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());  // doc order
    }
  }
}

}  // namespace sw::parser::detail
