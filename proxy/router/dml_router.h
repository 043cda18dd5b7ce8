// DmlRouter: routing of queries and DML (internal to sw_router). See route_dml.cc for the model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "router/router_internal.h"

namespace sw::router::detail {

// A list whose elements keep their heap capacity when it is cleared: clear() only forgets them
// and add() hands back a reset() element (T::reset()), so a router that has routed a statement
// of this shape before allocates nothing for it (docs/architecture.md §6.3, "Routing cost").
template <typename T>
class ReusedList {
 public:
  T& add() {
    if (size_ == items_.size()) {
      items_.emplace_back();
    } else {
      items_[size_].reset();
    }
    return items_[size_++];
  }
  void drop_last() { --size_; }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  T* begin() { return items_.data(); }
  T* end() { return items_.data() + size_; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }

 private:
  std::vector<T> items_;
  size_t size_ = 0;
};

enum class ConstraintKind : uint8_t { Equal, InList, Rows };

// One usable key predicate (or an INSERT's rows) of a table reference.
struct Constraint {
  ConstraintKind kind = ConstraintKind::Equal;
  std::vector<uint32_t> buckets;  // sorted, unique (empty: only NULLs)
  bool deferred = false;          // a value is a parameter and there are no Bind values yet
  // InList: the predicate (index into facts.predicates), each item's bucket (-1: NULL), and an
  // = ANY('{...}') array's elements, for cutting the list by shard (route_split.cc).
  int predicate = -1;
  std::vector<int64_t> item_buckets;
  std::vector<parser::Value> elements;

  void reset();  // empty, as constructed; the vectors keep their capacity
};

// The literal edits that cut a statement's key lists to one shard's keys.
struct ShardEdits {
  int shard = 0;
  std::vector<parser::LiteralEdit> literals;
  std::vector<merge::ShardStatement::Param> params;  // Bind values replaced for this shard
};

// The elements of an = ANY(array) predicate's array: a '{...}' literal's, or a text-format
// parameter's. Bucket when `out` is filled; NeedsBind for a parameter before Bind; NotAKey for
// anything else (a binary parameter, a nested or malformed array).
KeyOutcome array_elements(const parser::Value& array, const BindValues* params,
                          std::vector<parser::Value>& out);

// What routing knows of the rows of one sharded table reference that count.
struct RefKeys {
  ReusedList<Constraint> own;     // from its own predicates / INSERT rows
  bool pinned = false;            // restricted by some key constraint (own or carried over)
  bool deferred = false;          // ... one of which waits for Bind values
  bool known = false;             // `buckets` holds: the rows are in these buckets
  std::vector<uint32_t> buckets;  // sorted, unique
  std::string hint;               // why a key condition on it was not usable

  void reset();  // as constructed; the vectors keep their capacity
};

// A key restriction on table reference `from` carries over to `to`.
struct Edge {
  int from;
  int to;
};

// The working state of one DmlRouter::run(), reused by the next run on the same thread
// (RoutingScratch::Lease), so that routing a statement allocates only the Route it returns.
struct RoutingScratch {
  std::vector<const TableRule*> rules_of;  // per table reference; null when not sharded
  std::vector<int> sharded;
  std::vector<int> unsharded;   // user tables (not system catalogs), neither sharded nor reference
  std::vector<int> references;  // reference tables: a copy on every shard
  ReusedList<RefKeys> keys;     // per table reference
  std::vector<Edge> edges;
  std::vector<int> parent;  // union-find over table indices: co-location groups
  std::vector<int> shards;  // pinned_route: the shards the keys are on

  void clear();

  // The calling thread's scratch, cleared; a fresh one when that is in use further up the stack.
  class Lease {
   public:
    Lease();
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    RoutingScratch& operator*() const { return *scratch_; }

   private:
    RoutingScratch* scratch_;
    std::unique_ptr<RoutingScratch> own_;  // when the thread's scratch is leased already
  };
};

class DmlRouter {
 public:
  // `explain`: fill Route::reason for people (SHOW ROUTE, shardwire route); the data path
  // routes without it.
  DmlRouter(const parser::StatementFacts& facts, const BindValues* params, const Directory& dir,
            const RoutingRules& rules, Explain explain)
      : facts_(facts),
        params_(params),
        dir_(dir),
        rules_(rules),
        explain_(explain),
        rules_of_((*lease_).rules_of),
        sharded_((*lease_).sharded),
        unsharded_((*lease_).unsharded),
        references_((*lease_).references),
        keys_((*lease_).keys),
        edges_((*lease_).edges),
        parent_((*lease_).parent) {}

  Route run();

 private:
  const TableRule* rule(int table) const { return rules_of_[static_cast<size_t>(table)]; }
  const parser::TableRef& ref(int table) const { return facts_.tables[static_cast<size_t>(table)]; }
  RefKeys& keys(int table) { return keys_[static_cast<size_t>(table)]; }
  int find(int table) const;  // co-location group (union-find root)
  std::string key_example(int table) const { return "WHERE " + rule(table)->key + " = <value>"; }
  std::vector<int> shards_of(const std::vector<uint32_t>& buckets) const;  // allocates: splits, refusals

  // route_dml.cc: facts -> key state.
  // Calls visit(t) for each sharded reference t whose key `column` is.
  template <typename Visit>
  void for_each_key_ref(const parser::ColumnRef& column, Visit visit) const;
  std::vector<int> key_refs(const parser::ColumnRef& column) const;
  void add_equalities();
  bool add_predicates(Route& error);
  bool add_predicate(size_t predicate, int table, Route& error);
  bool add_inserts(Route& error);
  void propagate();
  // route_decide.cc: key state -> route.
  Route pinned_route();
  Route at_bind_route(int table) const;
  Route mixed_shards_error(const std::string& table) const;
  std::string pinned_reason() const;
  Route unpinned_route();
  Route several_shards_error(int table) const;
  // False when an assignment moves a key off `shard`: `error` is then replaced whole by the error
  // (or AtBind) route, so it may be the route being built.
  // `rows_on_shard`: every row the statement writes is on `shard` (not a split write's part).
  bool check_assignments(int shard, Route& error, bool rows_on_shard = false);
  bool scatter_allowed(std::string& why);
  // Whether table reference t's rows reach the statement's own block unfiltered by others: t is
  // in it, or in a chain of FROM subqueries / CTEs read once (Scope::feeds) that only filter
  // and project rows; `nullable`: on the nullable side of an outer join somewhere on the way.
  bool rows_reach_top(int t, bool& nullable) const;
  // Every sharded reference is in the statement's own block: its column names are the tables'
  // (not a CTE's or subquery's, which may rename them), so the key's name means the key.
  bool key_named_at_top() const;
  Route keyless_read(int first);
  // route_split.cc: a read whose key lists span shards, each shard with its own keys.
  Route split_read(int table);
  bool split_edits(const std::vector<int>& shards);
  // route_split.cc: an INSERT whose rows span shards, one INSERT per shard.
  Route split_insert(int table);
  bool cut_row_by_row(InsertSplit::Part& part, const std::string& table, Route& error) const;
  Route split_write(int table);
  // route_keyless_write.cc: an UPDATE or DELETE without a key, on every shard's own rows.
  Route keyless_write(int target);
  // route_key_move.cc: an UPDATE of the key that may move rows to another shard.
  // `only`: the shards that hold the rows and own their new keys, when the router knows them (one
  // shard's rows, a new key of one bucket); empty: every shard.
  Route key_move(int target, const std::vector<int>& only = {});
  // One SET value of key_move's statement, typed as the column when it is a bare parameter.
  std::string key_move_value(const std::string& t, const std::string& column, const std::string& value) const;
  // key_move's new values of the SET columns (`columns`, as `p.values`), as one jsonb object.
  std::string key_move_values(const std::string& t, const std::vector<const parser::Assignment*>& columns,
                              const parser::UpdateParts& p) const;
  bool every_shard_allowed(int target, Route& error);
  Route every_shard_write(int target);
  Route every_shard_route(int target, const std::string& sql);
  std::string quoted_reference(int target) const;
  std::vector<int> key_shards() const;
  Status fill_statements(merge::MergePlan& plan, parser::SelectRewrite rewrite) const;
  // route_merge.cc: the scatter plan of a SELECT whose own block needs a merge.
  Route merged_scatter(Route route, int first);
  bool sort_keys(merge::MergePlan& plan, parser::SelectRewrite& rewrite, bool grouped, std::string& why);
  void collation_facts(merge::MergePlan& plan) const;
  std::string not_tied_message(int a, int b) const;
  // route_insert_select.cc: INSERT ... SELECT into a sharded table.
  bool add_insert_select(const parser::InsertFacts& insert, Route& error);
  std::string source_description(const parser::ColumnRef& column, int select_scope) const;
  Route insert_select_route(bool all_pinned);
  std::string insert_select_blocker() const;
  std::string fix_on_one_shard() const;
  Route insert_select_scatter(bool all_pinned);
  bool keeps_key(const parser::Assignment& assignment) const;  // route_decide.cc
  // route_reference.cc: statements that write reference tables, or read nothing else.
  int written_reference() const;  // the first reference table the statement writes, -1 when none
  Route reference_write(int written) const;
  Route reference_read() const;

  const parser::StatementFacts& facts_;
  const BindValues* params_;
  const Directory& dir_;
  const RoutingRules& rules_;
  const Explain explain_;
  RoutingScratch::Lease lease_;  // the working state below lives in it (RoutingScratch)
  std::vector<const TableRule*>& rules_of_;
  std::vector<int>& sharded_;
  std::vector<int>& unsharded_;
  std::vector<int>& references_;
  ReusedList<RefKeys>& keys_;
  std::vector<Edge>& edges_;
  std::vector<int>& parent_;       // find() halves paths: mutable through the reference
  std::vector<ShardEdits> split_;  // a split read: per shard, its key lists' edits
  bool splitting_ = false;         // routing a read whose key lists span shards
  // An INSERT ... SELECT whose key is fed by a source's key: the INSERT, its target and that
  // source (co-located).
  const parser::InsertFacts* insert_select_ = nullptr;
  int insert_target_ = -1;
  int insert_source_ = -1;
};

}  // namespace sw::router::detail
