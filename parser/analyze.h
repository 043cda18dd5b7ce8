// Statement facts from libpg_query. This module is the only user of libpg_query.
//
// analyze(sql) splits a (multi-)statement string and describes each statement: its kind (for
// session state), and the facts routing needs (docs/architecture.md §6.3), expressed generically because the
// parser does not know the sharding config: the tables referenced, whether it writes, the
// `column = value` / `column IN (values)` predicates of top-level AND chains, column equalities
// (joins, correlations), INSERT columns and VALUES rows, UPDATE / ON CONFLICT assignments, and
// the SELECT features that keep rows of several shards from being simply concatenated. The
// router (proxy/router) applies the config to these facts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expression_kind.h"
#include "common/status.h"

namespace sw::parser {

enum class StatementKind {
  Select,
  Insert,
  Update,
  Delete,
  Merge,
  Begin,
  Commit,
  Rollback,
  Savepoint,
  ReleaseSavepoint,
  RollbackToSavepoint,
  PrepareTransaction,
  CommitPrepared,
  RollbackPrepared,
  Set,         // SET name ... (session level)
  SetLocal,    // SET LOCAL name ... (transaction level: not session state)
  Reset,       // RESET name
  ResetAll,    // RESET ALL
  DiscardAll,  // DISCARD ALL
  Discard,     // DISCARD PLANS/SEQUENCES/TEMP
  Listen,
  Unlisten,
  Notify,
  Copy,
  Prepare,
  Execute,
  Deallocate,  // SQL-level PREPARE/EXECUTE/DEALLOCATE
  Ddl,         // CREATE/ALTER/DROP/...
  Utility,     // SHOW, EXPLAIN, VACUUM, ... anything else
  Empty,       // no statement (only comments/whitespace)
};

// ---- Routing facts -------------------------------------------------------------------------
// Every facts struct compares field by field (operator==), so tests can pin that a cached
// analysis equals a fresh parse exactly.

// What a column is compared with or assigned: a literal, a parameter, a column, or anything else.
enum class ValueKind : uint8_t {
  String,  // '...' (any quoting form); text is the decoded string
  Number,  // 42, -7, 1.5e3; text as written, with a leading '-' when negated
  Null,    // NULL
  Bool,    // TRUE / FALSE; text "true" / "false"
  Param,   // $n
  Column,  // a column reference; text "name" or "qualifier.name"
  Other,   // any other expression (function call, arithmetic, subquery, DEFAULT, ...)
};

struct Value {
  bool operator==(const Value&) const = default;
  ValueKind kind = ValueKind::Other;
  std::string text;
  // Type of an explicit cast or typed literal ('…'::uuid, CAST($1 AS bigint), uuid '…'): the last
  // component of the type name as PostgreSQL's grammar spells it (bigint -> "int8", integer ->
  // "int4", varchar -> "varchar", uuid -> "uuid"); "" when there is none. The outermost cast wins.
  std::string cast;
  int param = 0;      // Param: n of $n (1-based)
  int location = -1;  // byte offset of the literal or parameter in the analyzed string; -1 unknown
};

enum class TableRole : uint8_t {
  Read,         // FROM / JOIN / USING / subquery / CTE body
  Insert,       // INSERT target
  Update,       // UPDATE target
  Delete,       // DELETE target
  Merge,        // MERGE target
  CopyFrom,     // COPY table FROM ... (a write)
  CopyTo,       // COPY table TO ...
  Create,       // CREATE TABLE / CREATE TABLE AS / SELECT INTO target
  Ddl,          // target of other DDL: ALTER/DROP/TRUNCATE/CREATE INDEX/GRANT/COMMENT/...
  Maintenance,  // VACUUM / ANALYZE / REINDEX / CLUSTER
  Lock,         // LOCK TABLE
};

// One reference to a relation. CTE references are not tables (their bodies are analyzed in
// their own scopes); neither are functions, VALUES or subqueries in FROM.
struct TableRef {
  bool operator==(const TableRef&) const = default;
  std::string schema;  // "" when unqualified
  std::string name;
  std::string alias;  // "" when none
  TableRole role = TableRole::Read;
  int scope = 0;          // the query block it belongs to (index into StatementFacts::scopes)
  bool nullable = false;  // on the nullable side of an outer join (LEFT JOIN's right side, ...)
  Value at;               // location of the name's first byte (schema when qualified); -1 unknown
};

// A column in a predicate or equality.
struct ColumnRef {
  bool operator==(const ColumnRef&) const = default;
  std::string name;        // as PostgreSQL folds it (unquoted: lower case)
  int table = -1;          // qualified by a table's alias or name: that table's index
  int scope = 0;           // query block the reference appears in
  bool qualified = false;  // qualified, but table == -1: not a table's column (CTE, subquery,
                           // function alias, EXCLUDED, or unknown qualifier)
};

// `column = value` or `column IN (value, ...)`, either side order.
struct KeyPredicate {
  bool operator==(const KeyPredicate&) const = default;
  ColumnRef column;
  std::vector<Value> values;  // one for '='
  bool in_list = false;       // IN (...) or = ANY(ARRAY[...]): one value per item
  // It restricts the rows of its column's table that count in its query block: on a top-level
  // AND chain of a WHERE or of an inner join's ON, or of an outer join's ON for a column of its
  // nullable side (LEFT/RIGHT JOIN). False when found under OR, NOT, CASE, inside another
  // expression, or in an outer join's ON about another side: such a predicate restricts
  // nothing and must not be used for routing (kept to explain why).
  bool usable = true;
  // = ANY('{...}') / = ANY($n): `values` is the one array value (a String literal or a
  // parameter); the router reads its elements.
  bool array = false;
};

// `column = column` on a top-level AND chain of a WHERE or of a join's ON, or a JOIN ... USING.
// Joins (and correlated subqueries) of sharded tables are co-located when this equates keys:
// rows that meet share the key. Whether a key restriction on one side carries over to the
// other depends on the join: always for WHERE and inner joins; for LEFT/RIGHT JOIN only from
// the preserved side to the nullable one; never for FULL JOIN (and never when a side is an
// unqualified column of an outer join, whose side is unknown).
struct ColumnEquality {
  bool operator==(const ColumnEquality&) const = default;
  ColumnRef left;
  ColumnRef right;
  bool left_restricts_right = true;  // rows of right's table that count have left's key
  bool right_restricts_left = true;
};

// UPDATE ... SET column = value, INSERT ... ON CONFLICT DO UPDATE SET column = value.
struct Assignment {
  bool operator==(const Assignment&) const = default;
  int table = -1;  // the target table
  std::string column;
  Value value;  // multi-column assignments ((a, b) = (...)) are Other
};

enum class OnConflict : uint8_t { None, DoNothing, DoUpdate };

struct InsertFacts {
  bool operator==(const InsertFacts&) const = default;
  int table = -1;                        // target, index into StatementFacts::tables
  std::vector<std::string> columns;      // the column list; empty when omitted
  std::vector<std::vector<Value>> rows;  // VALUES rows (DEFAULT is Other)
  bool from_select = false;              // INSERT ... SELECT (rows unknown)
  // INSERT ... SELECT of one plain SELECT (no UNION/INTERSECT/EXCEPT, not VALUES): its query
  // block, and per select-list item what it is: `select_values[i]` (a column: kind Column; `*`
  // or `t.*`: kind Other, text "*") and, for a column, `select_columns[i]` resolved in that
  // block (name "" otherwise). -1 and empty for any other source.
  int select_scope = -1;
  std::vector<Value> select_values;
  std::vector<ColumnRef> select_columns;
  bool select_distinct_on = false;  // the SELECT uses DISTINCT ON
  bool default_values = false;      // INSERT ... DEFAULT VALUES
  OnConflict on_conflict = OnConflict::None;
};

// SELECT features that stop a scatter read from being a plain concatenation of shard results.
namespace feature {
constexpr uint32_t kOrderBy = 1u << 0;
constexpr uint32_t kLimit = 1u << 1;     // LIMIT / OFFSET / FETCH FIRST
constexpr uint32_t kDistinct = 1u << 2;  // DISTINCT, DISTINCT ON
constexpr uint32_t kGroupBy = 1u << 3;
constexpr uint32_t kHaving = 1u << 4;
constexpr uint32_t kAggregate = 1u << 5;  // built-in aggregates, and any call with an aggregate
                                          // clause (*, DISTINCT, ORDER BY, FILTER, WITHIN GROUP)
constexpr uint32_t kWindow = 1u << 6;     // OVER (...) / WINDOW
constexpr uint32_t kSetOp = 1u << 7;      // UNION / INTERSECT / EXCEPT (with or without ALL)
}  // namespace feature

// A query block: the statement itself, a subquery, a CTE body, a set-operation branch.
struct Scope {
  bool operator==(const Scope&) const = default;
  int parent = -1;              // enclosing block; -1 for the statement's own (scope 0)
  uint32_t features = 0;        // feature:: bits of this block
  bool non_table_from = false;  // FROM has an item that is not a table (subquery, function,
                                // VALUES, CTE reference, ...)
  // The block is a SELECT whose rows are one FROM item of block `feeds`: a subquery in that FROM,
  // or a CTE (not of WITH RECURSIVE) read exactly once in the statement, there. -1 otherwise
  // (the statement's own block, expression subqueries, set operation branches, CTEs read twice).
  int feeds = -1;
  bool feeds_nullable = false;  // that FROM item is on the nullable side of an outer join
};

// The statement's own SELECT (scope 0) as a scatter plan needs it: its output columns, ORDER BY,
// GROUP BY, DISTINCT and LIMIT/OFFSET, resolved to output column positions as PostgreSQL
// resolves them, with the locations a rewrite for the shards splices at.
enum class AggregateCall : uint8_t {
  None,       // not an aggregate call
  CountStar,  // count(*)
  Count,      // count(x)
  Sum,
  Min,
  Max,
  Avg,
  BoolAnd,  // bool_and, every
  BoolOr,
  VarSamp,  // var_samp, variance
  VarPop,
  StddevSamp,  // stddev_samp, stddev
  StddevPop,
  Unmergeable,  // any other aggregate, one with DISTINCT / ORDER BY / WITHIN GROUP, avg with FILTER
};

// Where the collation a merge compares an expression's text under comes from, as PostgreSQL
// derives it (docs/architecture.md §5.6): a COLLATE on the whole expression (on min/max's
// argument for min/max) decides; otherwise it is one of the COLLATE clauses inside it, the
// collations of the columns it reads, or the database's default. Names only (identifiers, no
// literal text), the last part of each ("C" for pg_catalog."C").
struct CollationSource {
  bool operator==(const CollationSource&) const = default;
  std::string explicit_name;         // the COLLATE on the whole expression; "" when none
  std::vector<std::string> columns;  // the columns it reads, unqualified (no explicit_name)
  std::vector<std::string> nested;   // COLLATE clauses inside it (no explicit_name)
  bool opaque = false;               // holds a subquery or *: its columns are not all in the text
};

// string_agg / array_agg (ORDER BY, DISTINCT and FILTER allowed) merged across shards
// (docs/architecture.md §6.3, "Ordered aggregates"): each shard returns its values in the
// aggregate's order and the sort keys beside them, the proxy merges them by those keys.
struct OrderedAggregate {
  bool operator==(const OrderedAggregate&) const = default;
  bool string_agg = false;  // else array_agg
  bool distinct = false;    // DISTINCT inside: its sort keys are its argument
  std::string separator;    // string_agg: the separator literal's value ("" for NULL)
  // The shard columns: array_agg of the value, then of each sort key, each with the call's
  // DISTINCT, ORDER BY and FILTER.
  std::vector<std::string> columns;
  std::vector<bool> descending;   // per sort key
  std::vector<bool> nulls_first;  // per sort key, as written or PostgreSQL's default
  std::vector<CollationSource> key_collations;
};

// An expression over aggregates a merge computes once the aggregates are combined
// (docs/architecture.md §6.3): arithmetic, casts to number types, round / coalesce / nullif over
// output columns (aggregates, group keys), number constants and parameters.
struct AggregateExpression {
  bool operator==(const AggregateExpression&) const = default;
  using Kind = ExpressionKind;
  Kind kind = Kind::Constant;
  int output = -1;   // Output: the output column (hidden ones: outputs.size() + i)
  Value constant;    // Constant: a Number or Null; Param: its number
  std::string type;  // Cast: "int2", "int4", "int8", "numeric" or "float8"
  std::vector<AggregateExpression> args;
};

struct OutputItem {
  bool operator==(const OutputItem&) const = default;
  AggregateCall aggregate = AggregateCall::None;  // the item is exactly this aggregate call
  bool contains_aggregate = false;                // an aggregate inside a larger expression (count(*) + 1)
  bool star = false;                              // * or t.*: the column count is the server's
  std::string name;                               // the column name PostgreSQL gives it
  bool aliased = false;                           // the name is an alias the client wrote
  std::string column;                             // a plain column reference: its name, unqualified
  std::string shape;                              // the expression's tree without locations
  std::string call_text;                          // an aggregate call: its SQL text, for messages
  Value call_begin;                               // an aggregate call: location of its first byte
  Value call_end;                                 // ... and of the byte after its closing parenthesis
  Value begin;                                    // location of the item's first byte
  CollationSource collation;                      // of the item's value
  std::optional<OrderedAggregate> ordered;        // a string_agg / array_agg the merge orders
  // An expression over aggregates (contains_aggregate) a merge can compute, and the span of its
  // text ([value_begin, value_end) in the analyzed string; the shards' SQL keeps it unevaluated).
  std::optional<AggregateExpression> expression;
  int value_begin = -1;
  int value_end = -1;
};

// HAVING as the proxy can evaluate it after the final aggregation: comparisons of an output
// column with a constant, under AND / OR / NOT.
struct HavingTerm {
  bool operator==(const HavingTerm&) const = default;
  enum class Kind : uint8_t { And, Or, Not, Compare };
  Kind kind = Kind::Compare;
  std::vector<HavingTerm> children;  // And, Or, Not
  int output = -1;                   // Compare: the output column (on the left of `op`)
  std::string op;                    // Compare: "=", "<>", "<", "<=", ">", ">="
  Value constant;                    // Compare: a Number, String, Bool or Null constant, or a Param
};

struct OrderItem {
  bool operator==(const OrderItem&) const = default;
  int output = -1;   // the output column it sorts by; -1: not an output column
  std::string name;  // the item is a plain column name: that name
  // Neither an output column nor a plain name: its SQL text ("lower(name)", "(a + b) * 2"), ""
  // when it holds a subquery, aggregate, window function, comment or dollar quote.
  std::string expression;
  bool descending = false;
  bool nulls_first = false;     // as written, or PostgreSQL's default for the direction
  bool using_operator = false;  // ORDER BY ... USING op
  CollationSource collation;    // of the item's value
  // An aggregate or expression over aggregates that is not selected: the hidden output a merge
  // computes it in (outputs.size() + i of having_aggregates); -1 otherwise.
  int aggregate_output = -1;
  // An expression over aggregates written here (not a position or name): its text's span, which
  // the shards' SQL keeps unevaluated; -1 otherwise.
  int value_begin = -1;
  int value_end = -1;
};

struct SelectShape {
  bool operator==(const SelectShape&) const = default;
  bool plain = false;  // a SELECT statement without set operations: the rest is filled in
  std::vector<OutputItem> outputs;
  std::vector<OrderItem> order_by;
  std::vector<int> group_by;               // per GROUP BY item: the output column, or -1
  std::vector<std::string> group_columns;  // GROUP BY items that are plain columns: names
  bool distinct = false;
  bool distinct_on = false;
  std::vector<int> distinct_on_outputs;  // per DISTINCT ON item: the output column, or -1
  bool has_limit = false;                // LIMIT / FETCH FIRST
  bool has_offset = false;
  Value limit;   // the LIMIT value (Number, Null, Param or Other)
  Value offset;  // the OFFSET value
  Value begin;   // location of the statement's first byte (statement text offsets)
  // GROUP BY / ORDER BY / DISTINCT ON items written as output positions (GROUP BY 2): renumbered when a
  // rewrite adds columns before them.
  std::vector<Value> positions;
  // HAVING that compares output columns with constants (`having` holds one term, the root), and
  // the text span of "HAVING ..." ([having_begin, having_end) in the analyzed string); otherwise
  // `unmergeable` says "HAVING".
  std::vector<HavingTerm> having;
  // Aggregate calls HAVING compares that are not in the select list: a HavingTerm's output
  // outputs.size() + i is having_aggregates[i] (a merge selects them as leading columns). Also
  // aggregates inside expressions over aggregates, and (with `expression` set) the expressions
  // HAVING compares or ORDER BY sorts by that are not selected.
  std::vector<OutputItem> having_aggregates;
  int having_begin = -1;
  int having_end = -1;
  // Set when the block uses something a merge cannot compute, saying what: "HAVING", "GROUPING SETS", "FETCH
  // FIRST ... WITH TIES", "DISTINCT ON", ...
  std::string unmergeable;
  // Window functions (or a WINDOW clause) in the block, and the columns (a reference's last name)
  // in the PARTITION BY of every one of its windows (empty when some window has none).
  bool windows = false;
  std::vector<std::string> window_partition_columns;
};

// One option of a COPY statement, as written (old and new syntax alike: `CSV HEADER` is format
// csv and header with no argument).
struct CopyOption {
  bool operator==(const CopyOption&) const = default;
  std::string name;   // lower-cased: "format", "delimiter", "null", "header", "quote", "escape",
                      // "force_not_null", "force_null", "force_quote", "encoding", "freeze", ...
  std::string value;  // a string, number or boolean argument as text ("true"/"false" for booleans)
  bool has_value = false;
  std::vector<std::string> columns;  // a column list argument (FORCE_NOT_NULL (a, b))
  bool all_columns = false;          // `*` as the argument
};

// One set_config(name, value, is_local) call.
struct SetConfigCall {
  bool operator==(const SetConfigCall&) const = default;
  Value name;
  Value value;
  Value is_local;
};

// An object a statement creates that stays with the server's session after the transaction
// (PostgreSQL: the pg_temp schema, the portal list, the libraries loaded into the process), by
// what creates it.
enum class SessionObject : uint8_t {
  None,
  TempTable,     // CREATE TEMP TABLE [AS], SELECT ... INTO TEMP, CREATE TABLE pg_temp.x (no ON COMMIT DROP)
  TempView,      // CREATE TEMP VIEW, CREATE VIEW pg_temp.x
  TempSequence,  // CREATE TEMP SEQUENCE, CREATE SEQUENCE pg_temp.x
  TempRoutine,   // CREATE FUNCTION/PROCEDURE pg_temp.f
  TempType,      // CREATE TYPE/DOMAIN pg_temp.t (and other DefineStmt objects: operators, ...)
  HoldCursor,    // DECLARE ... CURSOR WITH HOLD
  Library,       // LOAD 'library': loaded until the server process exits (no DISCARD unloads it)
};

struct StatementFacts {
  bool operator==(const StatementFacts&) const = default;
  StatementKind kind = StatementKind::Utility;
  std::string set_name;  // Set/SetLocal/Reset: lower-cased GUC name ("search_path")
  std::string text;      // this statement's own SQL text (from the split)
  Value begin;           // location of the statement's first byte in the analyzed string

  std::string node_type;  // libpg_query's node name ("SelectStmt", "VariableShowStmt")
  // The kind of the statement that actually runs: `kind`, or for EXPLAIN / DECLARE CURSOR /
  // COPY (query) the wrapped query's kind (the routing facts below are then that query's).
  StatementKind query_kind = StatementKind::Utility;
  bool writes = false;     // INSERT/UPDATE/DELETE/MERGE (also in a CTE), COPY FROM
  bool returning = false;  // some RETURNING clause
  // False when the statement nests deeper than the analyzer follows: `tables` then lists every
  // relation named anywhere (role Read unless known), the other routing facts are partial, and
  // nothing may be routed on them but "touches no sharded table".
  bool complete = true;
  int max_param = 0;  // highest $n in the parts walked for routing (every DML /
                      // query expression; not DDL bodies)

  std::vector<TableRef> tables;
  // Some table of `tables` is the view pg_prepared_statements read (unqualified or in
  // pg_catalog): in transaction pooling the session answers it per client (parser/prepared_view.h).
  bool reads_prepared_statements = false;
  std::vector<Scope> scopes;
  std::vector<KeyPredicate> predicates;
  std::vector<ColumnEquality> equalities;
  std::vector<Assignment> assignments;
  std::vector<InsertFacts> inserts;  // the INSERT, and INSERTs in CTEs
  // Every set_config(...) call anywhere in the walked expressions, with its arguments: a String
  // (decoded) or any other Value (known only to the server). A missing argument is Other.
  std::vector<SetConfigCall> set_config_calls;
  // TransactionStmt SAVEPOINT / RELEASE / ROLLBACK TO: the savepoint's name as the server knows
  // it (lower-cased unless quoted); "" otherwise.
  std::string savepoint_name;
  // Session state a pooled server would hand to its next client: a session-level advisory lock
  // taken (pg_advisory_lock, pg_try_advisory_lock and their _shared forms; not the _xact_ ones),
  // an object that outlives the transaction in the session's own schema or memory.
  bool session_advisory_lock = false;
  SessionObject session_object = SessionObject::None;
  SelectShape select;  // node_type "SelectStmt" only
  // COPY ... TO STDOUT (not a file or program; table or query), and whether it writes a CSV
  // header line first (FORMAT csv with HEADER).
  bool copy_to_client = false;
  bool copy_header = false;
  // COPY table [(columns)] FROM STDIN: the column list (empty: every column in table order) and
  // the options, for the proxy to split the client's rows by key.
  bool copy_from_client = false;
  std::vector<std::string> copy_columns;
  std::vector<CopyOption> copy_options;
};

struct QueryFacts {
  bool operator==(const QueryFacts&) const = default;
  std::vector<StatementFacts> statements;  // one per statement of a (multi-)statement string
};

// Parses `sql`. A syntax error is returned as a client fault with SQLSTATE 42601 and the
// parser's message; callers usually forward such SQL to the server so the client sees the
// server's own error.
//
// Caching, per thread (no locks): by exact text (second-chance eviction, an approximation of
// LRU, kDefaultCacheEntries entries unless
// set_cache_capacity() says otherwise; texts over 8 KiB and errors
// are not cached), so analyzing the same text again on the same thread returns the same
// pointer; then by normalized text: a text that differs from an earlier one only in the values
// of its plain literals ('...' strings and numbers) gets that earlier text's facts with its own
// literal values substituted, without a parse (a new pointer each time). Never throws.
Result<std::shared_ptr<const QueryFacts>> analyze(std::string_view sql);

// analyze() without the caches: always parses. For benchmarks, fuzzing and tests.
Result<std::shared_ptr<const QueryFacts>> analyze_uncached(std::string_view sql);

// Statement shapes each of this thread's two caches holds (about 3 KiB per shape in all);
// 0 turns caching off. Set once when a worker thread starts (config `statement_cache`).
inline constexpr size_t kDefaultCacheEntries = 16384;
void set_cache_capacity(size_t entries);

// This thread's analyze() cache counters (for metrics and benchmarks).
struct CacheStats {
  uint64_t exact_hits = 0;
  uint64_t normalized_hits = 0;
  uint64_t misses = 0;  // full parses (including texts that are not cacheable)
};
CacheStats cache_stats();

// A compact, stable, one-line-per-item description of a statement's routing facts, for tests,
// debugging and `shardwire route --verbose`.
std::string describe_facts(const StatementFacts& facts);

// The SQL every shard runs for a merged read of a plain SELECT (facts.select.plain): its text
// with LIMIT replaced (`limit`: "" keeps it, else the new value, e.g. "ALL" or "30"; the
// statement must have a LIMIT), OFFSET set to 0 when `drop_offset`, and, when `split_avg`,
// every avg(args) output item as `sum(args), count(args)` and every variance or standard
// deviation as its variance_columns(). Edits splice the statement's own
// text at the parse tree's locations.
// `literals` replaces the plain literal (a number, a '...' string, NULL) at each analyzed-text
// location by its text: the key lists of a read (or write) split by shard (an IN item of another shard ->
// NULL, an ANY('{...}') array -> the shard's own elements).
struct LiteralEdit {
  int location = -1;
  std::string text;
};
// Table `table` (index into StatementFacts::tables) written as `name` is replaced by `text`;
// `{name}` and `{last}` in `text` stand for the name as written and its last component.
struct TableSplice {
  int table = -1;
  std::string text;
};
struct SelectRewrite {
  std::string limit;
  bool drop_offset = false;
  std::string offset;  // with drop_offset: the OFFSET's new value ("" is 0)
  bool split_avg = false;
  // Output items (indices into shape.outputs) that are count(DISTINCT ...) calls each shard runs as
  // array_agg(DISTINCT ...): the word "count" replaced, arguments and FILTER kept.
  std::vector<int> distinct_arrays;
  bool drop_having = false;  // the shards group without HAVING: the proxy applies it
  // With drop_having, a HAVING with parameters: the shards get "HAVING (<its condition>) IS NULL
  // OR true" instead, which keeps every group yet still types each $n as PostgreSQL infers it
  // from the comparison (the client's Bind carries it to every shard).
  bool neutral_having = false;
  std::vector<LiteralEdit> literals;
  // Text spans ([begin, end) in the analyzed string) of expressions over aggregates the shards
  // must not evaluate: each becomes `CASE WHEN false THEN (<expression>) END`, which PostgreSQL
  // types (and types its parameters) as the expression but never computes.
  struct Unevaluated {
    int begin = -1;
    int end = -1;
    std::string alias;  // "": none; else ` AS "<alias>"` follows (the client's column name)
  };
  std::vector<Unevaluated> unevaluated;
  // Expressions put first in the select list (sort keys the client did not select); output
  // positions (ORDER BY 2) move behind them.
  std::vector<std::string> leading_columns;
  // Table references replaced by a FROM item (the name as written, schema included; an alias the
  // client wrote follows it and stays); see splice_tables().
  std::vector<TableSplice> tables;
};
Result<std::string> rewrite_select(const StatementFacts& facts, const SelectRewrite& rewrite);

// An avg call's text ("avg(x)") as the two columns a merge combines: "sum(x)" and its count;
// empty when it has no parenthesis.
std::vector<std::string> avg_as_sum_and_count(const std::string& call);
// A variance or standard deviation call's text ("stddev(x)", a FILTER after it kept on each) as
// the four columns a merge combines: sum(x), count(x), sum(x::numeric * x::numeric) (NULL for a
// float x), var_pop(x);
// empty when its argument cannot be located.
std::vector<std::string> variance_columns(const std::string& call);
// The shard columns an output item of this aggregate takes (avg 2, the variances 4, else 1).
int partial_width(AggregateCall call);
// The shard columns an output item takes: its ordered aggregate's columns, else partial_width().
int output_width(const OutputItem& item);
// The shard columns of an aggregate call's text (avg and the variances split), {call} otherwise.
std::vector<std::string> partial_calls(AggregateCall call, const std::string& text);

// The statement's text with each table reference's name (as written, `schema.name` included)
// replaced by `make(written_name, written_last_component)`. A reference that cannot be located
// exactly, one after ONLY or TABLE, or a statement that qualifies columns with a schema
// (`public.t.col`, which a replaced name no longer answers) is a 0A000 error.
Result<std::string> splice_tables(const StatementFacts& facts, const std::vector<TableSplice>& splices);

// The statement's text with only `literals` replaced (LiteralEdit): an UPDATE or DELETE whose key
// lists are cut to one shard's keys.
Result<std::string> replace_literals(const StatementFacts& facts, const std::vector<LiteralEdit>& literals);

// An UPDATE's or DELETE's text with `condition` ANDed to its top-level WHERE (the client's
// condition parenthesized), or a WHERE `condition` added before RETURNING or at the end: a write
// without a key that each shard runs on its own rows only. A 0A000 error for another statement,
// WHERE CURRENT OF, or a text the token scanner does not model.
Result<std::string> restrict_write(const StatementFacts& facts, const std::string& condition);

// An UPDATE's text in parts, each as written (docs/architecture.md §6.3, "Updates that move
// rows"): the client's WITH list (after WITH, RECURSIVE kept; "" when none), what names the target
// (between UPDATE and SET: ONLY, name, alias), one value per SET column in order (as
// StatementFacts::assignments), the FROM list, the WHERE condition and the RETURNING list ("" when
// none). A value is an expression, or field `field` of the sub-select `queries[query]` of a
// `SET (a, b) = (SELECT ...)` item. A 0A000 error for WHERE CURRENT OF, a SET item of another
// shape, or a text the token scanner does not model.
struct UpdateParts {
  struct Value {
    std::string expression;
    int query = -1;
    size_t field = 0;
  };
  std::string with;
  std::string target;
  std::vector<Value> values;
  std::vector<std::string> queries;
  std::string from;
  std::string where;
  std::string returning;
};
Result<UpdateParts> update_parts(const StatementFacts& facts);

// An INSERT ... VALUES (the statement's one INSERT) cut to some of its VALUES rows (`rows`:
// indexes into its rows, ascending), every other part of the text verbatim (column list,
// ON CONFLICT, RETURNING, comments). Parameters are renumbered $1, $2, ... in order of first
// appearance, so the cut statement uses every number it has (PostgreSQL must infer a type for
// each): `params[k - 1]` is the client's number of the cut statement's $k. A 0A000 error when the
// rows cannot be located exactly in the text.
struct InsertRows {
  std::string sql;
  std::vector<int> params;
};
Result<InsertRows> insert_with_rows(const StatementFacts& facts, const std::vector<size_t>& rows);

const char* statement_kind_name(StatementKind kind);
const char* table_role_name(TableRole role);

}  // namespace sw::parser
