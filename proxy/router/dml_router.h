// DmlRouter: routing of queries and DML (internal to sw_router). See route_dml.cc for the model.
#pragma once

#include <string>
#include <vector>

#include "router/router_internal.h"

namespace sw::router::detail {

enum class ConstraintKind : uint8_t { Equal, InList, Rows };

// One usable key predicate (or an INSERT's rows) of a table reference.
struct Constraint {
  ConstraintKind kind = ConstraintKind::Equal;
  std::vector<uint32_t> buckets;  // sorted, unique (empty: only NULLs)
  bool deferred = false;          // a value is a parameter and there are no Bind values yet
};

// What routing knows of the rows of one sharded table reference that count.
struct RefKeys {
  std::vector<Constraint> own;    // from its own predicates / INSERT rows
  bool pinned = false;            // restricted by some key constraint (own or carried over)
  bool deferred = false;          // ... one of which waits for Bind values
  bool known = false;             // `buckets` holds: the rows are in these buckets
  std::vector<uint32_t> buckets;  // sorted, unique
  std::string hint;               // why a key condition on it was not usable
};

class DmlRouter {
 public:
  DmlRouter(const parser::StatementFacts& facts, const BindValues* params, const Directory& dir,
            const RoutingRules& rules)
      : facts_(facts), params_(params), dir_(dir), rules_(rules) {}

  Route run();

 private:
  // A key restriction on `from` carries over to `to`.
  struct Edge {
    int from;
    int to;
  };

  const TableRule* rule(int table) const { return rules_of_[static_cast<size_t>(table)]; }
  const parser::TableRef& ref(int table) const { return facts_.tables[static_cast<size_t>(table)]; }
  RefKeys& keys(int table) { return keys_[static_cast<size_t>(table)]; }
  int find(int table) const;  // co-location group (union-find root)
  std::string key_example(int table) const { return "WHERE " + rule(table)->key + " = <value>"; }
  std::vector<int> shards_of(const std::vector<uint32_t>& buckets) const;

  // route_dml.cc: facts -> key state.
  std::vector<int> key_refs(const parser::ColumnRef& column) const;
  void add_equalities();
  bool add_predicates(Route& error);
  bool add_inserts(Route& error);
  void propagate();
  // route_decide.cc: key state -> route.
  Route pinned_route();
  Route unpinned_route();
  Route several_shards_error(int table) const;
  bool check_assignments(int shard, Route& error);
  bool scatter_allowed(std::string& why);
  // route_merge.cc: the scatter plan of a SELECT whose own block needs a merge.
  Route merged_scatter(Route route, int first);
  std::string not_tied_message(int a, int b) const;

  const parser::StatementFacts& facts_;
  const BindValues* params_;
  const Directory& dir_;
  const RoutingRules& rules_;
  std::vector<const TableRule*> rules_of_;  // per table reference; null when not sharded
  std::vector<int> sharded_;
  std::vector<int> unsharded_;  // user tables (not system catalogs)
  std::vector<RefKeys> keys_;   // per table reference
  std::vector<Edge> edges_;
  mutable std::vector<int> parent_;  // union-find over table indices: co-location groups
};

}  // namespace sw::router::detail
