// A scatter plan: what every shard runs and how the proxy combines the shards' rows into the
// one result the client gets (docs/architecture.md §6.3, "Reads that span shards").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expression_kind.h"

namespace sw::merge {

enum class MergeKind : uint8_t {
  Concat,     // rows relayed as they come (LIMIT/OFFSET applied when present)
  MergeSort,  // every shard sorts; a streaming k-way merge by the ORDER BY keys
  Aggregate,  // partial aggregates per shard (per group), final aggregation in the proxy
};

// How one client column is made from the shards' columns (Aggregate plans).
enum class Combine : uint8_t {
  Key,    // a GROUP BY expression (or a constant): passed through, part of the group key
  Count,  // count(*) / count(x): sum of the counts
  Sum,    // sum of the sums (NULL when every shard's is NULL)
  Min,    // least / greatest with the type's order
  Max,
  Avg,      // the shards run sum(x), count(x) in two columns; the proxy divides
  BoolAnd,  // and / or of the shards' results, NULLs ignored
  BoolOr,
  // var_samp/variance, var_pop, stddev_samp/stddev, stddev_pop: the shards run sum(x), count(x),
  // sum(x::numeric * x::numeric) and var_pop(x) in four columns (variance_columns()); the proxy
  // combines them exactly (integers, numeric) or as float8_combine does (float8).
  VarSamp,
  VarPop,
  StddevSamp,
  StddevPop,
  // count(DISTINCT x) of a non-key x: the shards run array_agg(DISTINCT x) (FILTER kept); the
  // proxy keeps the set of distinct non-NULL elements per group (distinct_set.h) and counts it.
  CountDistinct,
  // sum(DISTINCT x) / avg(DISTINCT x) of a non-key x: as CountDistinct, the set's values then
  // added in the type's order with sum's and avg's own rules (Accumulator::finish).
  SumDistinct,
  AvgDistinct,
  // array_agg / string_agg, ORDER BY, DISTINCT and FILTER inside allowed: the shards run
  // array_agg of the value and of each of the call's sort keys in its order; the proxy merges
  // every shard's values by those keys (ordered_list.h).
  ArrayAgg,
  StringAgg,
  // An expression over other output columns (aggregates, group keys), computed once they are
  // combined (expression.h). The shards return its text unevaluated in one column (NULL), whose
  // RowDescription gives the client the name and type PostgreSQL gives it.
  Expression,
};

// The expression of an Expression output: + - * / and unary minus, casts, round, coalesce, CASE,
// nullif over output columns, number constants and parameters.
struct Expression {
  using Kind = ExpressionKind;  // shared with the parser's AggregateExpression
  Kind kind = Kind::Constant;
  int output = 0;                       // Output: the output column
  std::optional<std::string> constant;  // Constant: the number's text; nullopt for NULL
  int param = 0;                        // Param: n of $n
  uint32_t type = 0;                    // Cast: the target type OID
  std::vector<Expression> args;
};

// How many shard columns one client column of this combine reads, from its `source` on.
int partial_columns(Combine combine);

struct SortKey {
  int column = 0;    // client output column; -1: the column called `name` (SELECT * ...)
  std::string name;  // resolved against the shards' column names when column is -1
  bool descending = false;
  bool nulls_first = false;  // PostgreSQL's default: NULLS LAST for ASC, NULLS FIRST for DESC
};

struct OutputColumn {
  Combine combine = Combine::Key;
  int source = 0;    // index of the shard column (Avg and the variances: the sum; the count
                     // and the others follow it, partial_columns())
  std::string name;  // Avg, variances: the client's column name (the shards' are sum, count, ...)
  // ArrayAgg / StringAgg: the call's sort keys (`column`: the shard column of its array, right
  // after `source`'s), DISTINCT inside, string_agg's separator.
  std::vector<SortKey> within;
  bool within_distinct = false;
  std::string separator;
  std::optional<Expression> expression;  // Expression
};

// How many shard columns one client column reads: partial_columns() and its sort keys' arrays.
int shard_columns(const OutputColumn& out);
// Whether the client's column is not one shard column as the shards describe it (its type and
// name come from the merge: avg, the variances, count/sum/avg(DISTINCT), string_agg ...).
bool merge_describes(const OutputColumn& out);

// A read whose key list spans shards runs only on the shards of its keys, each with the list cut
// to its own keys.
struct ShardStatement {
  int shard = 0;  // index into the directory's shards
  std::string sql;
  // Extended protocol: Bind parameters this shard gets in place of the client's ($n, 1-based):
  // NULL for a list item of another shard, or an array of the shard's own elements in the
  // parameter's format (text, or binary array_send).
  struct Param {
    int number = 0;
    std::optional<std::string> text;
  };
  std::vector<Param> params;
};

// HAVING of a GROUP BY without the key, applied to the final groups: comparisons of a client
// output column with a constant or a parameter under AND / OR / NOT, in SQL's three-valued logic.
struct HavingTerm {
  enum class Kind : uint8_t { And, Or, Not, Compare };
  enum class Op : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
  Kind kind = Kind::Compare;
  std::vector<HavingTerm> children;  // And, Or, Not
  int column = 0;                    // Compare: the output column
  Op op = Op::Eq;
  std::optional<std::string> constant;  // Compare: its text; nullopt for NULL
  int param = 0;  // Compare: n of a $n in place of the constant (its value comes from the Bind)
};

// Where the collation of a shard column's text comes from (docs/architecture.md §5.6): a
// COLLATE on the whole expression, or the collations of what it reads.
struct TextSource {
  std::string explicit_name;         // COLLATE on the whole expression ("C"); "" when none
  std::vector<std::string> columns;  // column names read (no explicit_name)
  std::vector<std::string> nested;   // COLLATE clauses inside (no explicit_name)
  bool opaque = true;                // what it reads is not all in the text (subquery, *, unknown)
};

struct MergePlan {
  MergeKind kind = MergeKind::Concat;
  std::string shard_sql;              // the statement every shard runs (when `shard_statements` is empty)
  std::vector<OutputColumn> outputs;  // Aggregate: one per client column
  std::vector<SortKey> order_by;      // client columns
  bool distinct = false;              // de-duplicate the merged rows
  // MergeSort of DISTINCT ON: its expressions are the first `distinct_on` sort keys. Each shard
  // returns its first row per DISTINCT ON key in ORDER BY order; of the merged rows the first of
  // each key goes out, the rest (equal on those sort keys) are dropped.
  int distinct_on = 0;
  int64_t limit = -1;  // -1: none
  int64_t offset = 0;
  // LIMIT $n / OFFSET $n: the client's Bind value replaces `limit` / `offset` (Merger::describe).
  int limit_param = 0;
  int offset_param = 0;
  std::vector<ShardStatement> shard_statements;  // when set: only these shards, in shard order
  // MergeSort/Concat: the shards' first `hidden` columns are sort keys the client did not select
  // (ORDER BY a column not in the select list): sorted on, then dropped from its rows.
  int hidden = 0;
  std::optional<HavingTerm> having;  // Aggregate: groups it does not hold true are dropped
  // Aggregate: the last `hidden_outputs` outputs are aggregates HAVING compares that the client
  // did not select: combined and compared like the others, then dropped from its rows.
  int hidden_outputs = 0;
  // Aggregate whose ORDER BY is exactly its GROUP BY keys: every shard returns its groups in that
  // order, so the merge combines each group as the k-way merge meets it (one group in memory)
  // instead of collecting every group first.
  bool stream_groups = false;
  // The tables the statement reads, as regclass text ("schema"."name" or "name"): every shard
  // reports their columns' collations, which decide whether the merge may compare their text.
  std::vector<std::string> tables;
  // Per shard column (hidden sort columns first, avg as its two columns): where the collation of
  // its text comes from; empty when the select list has * (then only the shards' column origins
  // tell).
  std::vector<TextSource> column_sources;

  // A plain concatenation of every shard's rows (no LIMIT, sort, DISTINCT or hidden column, one
  // statement for all): the rows pass through as the shards send them, in any result format.
  bool relays_rows() const {
    return kind == MergeKind::Concat && limit < 0 && offset == 0 && limit_param == 0 && offset_param == 0 &&
           !distinct && hidden == 0 && order_by.empty() && shard_statements.empty();
  }
  const char* kind_name() const;
  // "merge_sort by 2 desc nulls first, 1; limit 20 offset 5" etc. (SHOW ROUTE, shardwire route).
  std::string describe() const;
};

const char* combine_name(Combine combine);

}  // namespace sw::merge
