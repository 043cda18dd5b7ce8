// Routing (docs/architecture.md §6.3): statement facts + bound parameters + directory snapshot -> route.
//
// Pure: no I/O, no clocks, never throws, safe from any thread. The caller analyzes the SQL
// (parser::analyze, cached), holds the directory snapshot and the rules, and acts on the route.
//
// When to call:
//  * simple Query: route_query(facts, nullptr, dir, rules) once for the whole string (a
//    multi-statement string routes as one when all its statements go to one shard).
//  * extended protocol: at Parse/Describe, route(statement, nullptr, ...) may answer AtBind
//    (the key is a parameter): send Parse/Describe to any shard and prepare lazily. At Bind,
//    route(statement, &values, ...) with values from wire::decode_bind_values() and the Parse's
//    parameter type OIDs decides the shard.
//
// Never guesses: a write whose rows' shard is not known is an Error (0A000), never a broadcast.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "merge/plan.h"
#include "parser/analyze.h"
#include "router/bucket_hash.h"
#include "router/directory.h"
#include "wire/bind_values.h"

namespace sw::router {

// One configured sharded table (config sharding.tables[]).
struct TableRule {
  std::string config_name;  // as configured, for messages: "orders" or "app.orders"
  std::string schema;       // "" when configured unqualified: matches the name in any schema
  std::string name;
  std::string key;  // key column
  KeyType key_type = KeyType::Int8;
};

// One configured reference table (config sharding.reference_tables[]): a full copy on every shard.
struct ReferenceRule {
  std::string config_name;  // as configured: "plans" or "app.plans"
  std::string schema;       // "" when configured unqualified: matches the name in any schema
  std::string name;
};

class RoutingRules {
 public:
  RoutingRules() = default;
  RoutingRules(std::vector<TableRule> tables, std::string default_shard, std::string config_file = {},
               bool owned_rows_only = true, std::vector<ReferenceRule> references = {});

  // From the validated config (sharding.default_shard is already filled in). A Config-fault
  // Status names the table whose key type is unsupported. `config_file` is named in errors that
  // the config must fix (a directory shard it lacks). `owned_rows_only`: see owned_rows_only().
  static Result<RoutingRules> from_config(const config::Sharding& sharding, std::string config_file = {},
                                          bool owned_rows_only = true);

  // The rule of a table reference: `schema.name` matches a rule with that schema or with none;
  // an unqualified `name` matches any rule of that name. nullptr when not sharded.
  const TableRule* find(std::string_view schema, std::string_view name) const;
  const std::vector<TableRule>& tables() const { return tables_; }
  // The reference table a table reference names (same matching as find()); nullptr when none.
  const ReferenceRule* find_reference(std::string_view schema, std::string_view name) const;
  const std::vector<ReferenceRule>& references() const { return references_; }
  const std::string& default_shard() const { return default_shard_; }
  const std::string& config_file() const { return config_file_; }
  // Keyless reads read each shard's sharded tables through its fence table, so rows of buckets
  // the shard holds without owning them (a move's copy, a source in its rollback window) are left
  // out. Off without a catalog: nothing moves buckets, and the shards need no fence table.
  bool owned_rows_only() const { return owned_rows_only_; }

 private:
  std::vector<TableRule> tables_;
  std::vector<ReferenceRule> references_;
  std::string default_shard_;
  std::string config_file_;
  bool owned_rows_only_ = true;
};

// Bind parameters, decoded by wire::decode_bind_values.
using wire::BindParam;
using wire::BindValues;

enum class RouteKind : uint8_t {
  Shard,      // one shard: the buckets of the key values
  Default,    // the default shard: no sharded table involved (or no row can match)
  Scatter,    // every shard, rows concatenated (a read without a key, no merge needed)
  AllShards,  // every shard in turn: DDL / maintenance on a sharded or reference table; with
              // Route::reference_write, a write of a reference table (atomic on every shard)
  Session,    // no shard needed: transaction control, SET/RESET/SHOW, PREPARE/EXECUTE, cursors,
              // empty query; the caller answers, tracks, or uses the transaction's shard
  AtBind,     // the key is a parameter and no values were given: decide at Bind
  Split,      // an INSERT whose VALUES rows fall on several shards: `split` has one INSERT per
              // shard; they run in one transaction (`error` holds the refusal for a caller
              // that cannot run them so)
  Error,      // refused: `error` says why (names the table and the reason)
};

// An INSERT whose VALUES rows fall on several shards, cut into one INSERT per shard with only
// that shard's rows (parser::insert_with_rows): the rest of the text verbatim, parameters
// renumbered per part so every part uses each of its numbers.
struct InsertSplit {
  struct Part {
    int shard = 0;             // index into Directory::shards()
    std::string sql;           // the INSERT with this shard's rows
    std::vector<int> params;   // Bind: the part's $k is the client's $params[k - 1]
    std::vector<size_t> rows;  // the statement's VALUES rows it inserts (0-based, ascending)
    // row_by_row: one INSERT per row of `rows`, in order (each with its own renumbered
    // parameters); `sql` is then these statements as one Query.
    std::vector<parser::InsertRows> row_statements;
  };
  std::vector<Part> parts;    // in shard order
  std::vector<int> row_part;  // per VALUES row: index into parts
  // ON CONFLICT DO NOTHING with RETURNING: a skipped row returns nothing, so a part with several
  // rows could not say which of them its RETURNING rows are; each row runs as its own INSERT in
  // the part's transaction, and its answer (one row or none) is that row's.
  bool row_by_row = false;
};

// An UPDATE that sets the key of a sharded table to a value whose bucket another shard may own
// (docs/architecture.md §6.3, "Updates that move rows"): a keyless_write whose shards' SQL deletes
// the matching rows of their own buckets and answers the new rows, each led by the new key's
// bucket and every column, then a marker column, then the client's RETURNING items; the session
// inserts each new row on the owner of its bucket, in the same transactions, committed together.
struct KeyMove {
  std::string table_sql;          // the written table as the client named it (schema included)
  std::vector<uint16_t> owner;    // by bucket: the index into Directory::shards() that owns it
  bool client_returning = false;  // the client asked for RETURNING rows
  std::string client_sql;         // the client's UPDATE, which the shards describe for RETURNING
};
// The name of the column that ends a KeyMove's leading columns.
inline constexpr const char* kKeyMoveEnd = "shardwire_move_end";

struct Route {
  RouteKind kind = RouteKind::Error;
  int shard = -1;                 // Shard, Default: index into Directory::shards()
  std::vector<uint32_t> buckets;  // Shard: the key values' buckets, sorted, unique; a migrating
                                  // Scatter read: the MIGRATING buckets
  bool writes = false;            // the statement writes (INSERT/UPDATE/DELETE, also in CTEs)
  // Default: the statement reads only reference tables, which every shard holds alike; any
  // shard answers it (inside a transaction, the transaction's shard), `shard` is the default.
  bool any_shard = false;
  // AllShards: the statement writes a reference table (INSERT/UPDATE/DELETE/MERGE, TRUNCATE,
  // COPY FROM): every shard must apply it, all or none (two-phase commit). `table` names it.
  bool reference_write = false;
  // Shard: a bucket is MIGRATING (writes wait for the cutover). Scatter read: some bucket is
  // MIGRATING; the read waits for its cutover (no shard has its rows unfenced meanwhile).
  bool migrating = false;
  // AllShards: configured sharded tables this CREATE TABLE creates; install their fence trigger.
  std::vector<std::string> fence_tables;
  // Scatter: how the shards' rows are combined; null for a plain concatenation (no rewrite).
  std::shared_ptr<const merge::MergePlan> merge;
  // Scatter of COPY ... TO STDOUT: the shards' copies joined into one; with copy_header (CSV
  // HEADER) only the first shard's header line is kept.
  bool copy_out = false;
  bool copy_header = false;
  // Scatter of COPY sharded_table FROM STDIN: the session splits the client's rows by key and
  // streams each to its shard's COPY (`copy_rule` is the table's rule).
  bool copy_in = false;
  const TableRule* copy_rule = nullptr;
  // Scatter without a merge plan (COPY ... TO STDOUT): the SQL every shard runs in place of the
  // client's, reading only the shard's own rows.
  std::string shard_sql;
  // Scatter of INSERT ... SELECT between co-located sharded tables (the target's key fed by the
  // source's key column): a write on each of `shards` (indexes into Directory::shards(), in
  // order), each running `shard_sql` (its source tables read through the owned-rows splice) and
  // inserting the rows of its own buckets; they commit together. A MIGRATING bucket read:
  // `migrating`, `buckets` (the run waits for the cutover).
  bool insert_select = false;
  std::vector<int> shards;
  // Scatter of an UPDATE or DELETE whose key lists fall on several shards: a write on each of
  // `shards`, each running the `shard_statements` entry of the same position (its lists cut to
  // its own keys; in the extended protocol, Bind values of the other shards' list items
  // replaced), committed together like an insert_select (docs/architecture.md §6.3).
  bool split_write = false;
  std::vector<merge::ShardStatement> shard_statements;
  // A split_write of an UPDATE or DELETE without a key: every shard, each restricted to the rows
  // of its own buckets (reads through the owned-rows filter; a MIGRATING bucket: `migrating`,
  // `buckets`, the run waits for the cutover).
  bool keyless_write = false;
  // A keyless_write that moves rows between shards (an UPDATE of the key).
  std::shared_ptr<const KeyMove> key_move;
  // A write on several shards, each running its own SQL, committed together.
  bool scatter_write() const { return insert_select || split_write; }
  std::shared_ptr<const InsertSplit> split;  // Split: the per-shard INSERTs
  std::string table;                         // the sharded table the decision is about ("" when none)
  // Why, for people (shardwire route, SHOW ROUTE): always filled when routed with Explain::Yes;
  // without it a one-shard, default-shard, session or at-Bind route leaves it empty (the data
  // path never reads it, and building it was a heap allocation per statement).
  std::string reason;
  Status error;  // Error: SQLSTATE and message
  uint64_t directory_version = 0;
};

// Whether a route carries Route::reason for people.
enum class Explain : uint8_t { No, Yes };

// Routes one statement. `params` is null before Bind (simple protocol, Parse, CLI).
// A statement that needs a shard the directory names but this instance's config lacks
// (Directory::configured) is an Error (F0000) naming the shard, a bucket on it, and the fix;
// statements on configured shards route as usual. A keyed statement's route allocates only its
// own `buckets` and a `table` name longer than the string's inline buffer: the router's working
// state is per thread and reused (docs/architecture.md §6.3, "Routing cost").
Route route(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
            const RoutingRules& rules, Explain explain = Explain::No);

// Routes a whole simple-protocol string: one shard for all its statements, else an Error.
// Session statements (BEGIN, SET, ...) go along with the others.
Route route_query(const parser::QueryFacts& query, const BindValues* params, const Directory& dir,
                  const RoutingRules& rules, Explain explain = Explain::No);

// Hands the bucket list and table name of a route the caller is done with to this thread's
// router, which builds the next keyed route in them: a caller that recycles every route it
// forgets routes keyed statements without a heap allocation (docs/architecture.md §6.3,
// "Routing cost"). `route` keeps everything else; its buckets and table are left empty. A bucket
// list longer than kMaxRecycledBuckets is not kept.
void recycle(Route& route);
inline constexpr size_t kMaxRecycledBuckets = 1024;

const char* route_kind_name(RouteKind kind);

// A scatter read must see on each shard only the rows of buckets that shard owns (during and
// after a bucket move a shard also holds copies of buckets it does not own; each shard lists
// those in shardwire.fenced_buckets). Every sharded table reference of `statement` becomes a
// subquery that keeps only the shard's own rows, the client's alias kept (`t` -> `(SELECT * FROM
// t sw_owned WHERE NOT EXISTS (... fenced ...)) AS t`). A 0A000 error when a reference cannot
// be replaced safely (see parser::splice_tables).
std::vector<parser::TableSplice> owned_rows_splices(
    const parser::StatementFacts& statement, const RoutingRules& rules,
    uint32_t bucket_count);  // "shard", "default", "scatter", ...

// The condition that keeps only a shard's own rows of a sharded table (its bucket is not among
// the fences there that may hold rows: `holds_rows`, false only for a fence whose bucket has no
// rows on the shard, so leaving those out changes no answer and lets PostgreSQL keep an index
// order), the table referred to as `qualifier` (SQL: quoted if need be): the owned-rows splice's,
// and what a write without a key ANDs to its WHERE on every shard.
std::string owned_row_condition(const TableRule& rule, const std::string& qualifier, uint32_t bucket_count);

// One stable line: "shard s1 buckets 5,9 migrating", "default s0", "scatter s0,s1",
// "all-shards s0,s1 fence orders", "session", "at-bind", "error 0A000 <message>".
std::string route_summary(const Route& route, const Directory& dir);

// The summary plus bucket states, the reason and the directory version, for `shardwire route`
// and the admin console's SHOW ROUTE.
std::string describe_route(const Route& route, const Directory& dir);

}  // namespace sw::router
