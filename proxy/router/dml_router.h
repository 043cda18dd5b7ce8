// DmlRouter: routing of queries and DML (internal to sw_router). See route_dml.cc for the model.
#pragma once

#include <string>
#include <vector>

#include "router/router_internal.h"

namespace sw::router::detail {

enum class ConstraintKind : uint8_t { Equal, InList, Rows };

struct Constraint {
  ConstraintKind kind = ConstraintKind::Equal;
  std::vector<uint32_t> buckets;  // sorted, unique (empty: only NULLs)
};

// A co-location group of sharded table references.
struct Group {
  std::vector<int> members;
  std::vector<Constraint> constraints;
  bool deferred = false;   // a key value is a parameter and there are no Bind values yet
  std::string hint;        // why a key condition was not usable
  std::vector<uint32_t> buckets;  // intersection of the constraints
  std::vector<int> shards;        // shards of those buckets
  bool keyed() const { return deferred || !constraints.empty(); }
};

class DmlRouter {
 public:
  DmlRouter(const parser::StatementFacts& facts, const BindValues* params, const Directory& dir,
            const RoutingRules& rules)
      : facts_(facts), params_(params), dir_(dir), rules_(rules) {}

  Route run();

 private:
  const TableRule* rule(int table) const { return rules_of_[static_cast<size_t>(table)]; }
  const parser::TableRef& ref(int table) const {
    return facts_.tables[static_cast<size_t>(table)];
  }
  int find(int table);
  Group& group_of(int table) { return groups_[static_cast<size_t>(find(table))]; }
  const Group& group_of_const(int table) const {
    int root = table;
    while (parent_[static_cast<size_t>(root)] != root) root = parent_[static_cast<size_t>(root)];
    return groups_[static_cast<size_t>(root)];
  }
  std::string key_example(int table) const { return "WHERE " + rule(table)->key + " = <value>"; }

  // route_dml.cc: facts -> groups.
  std::vector<int> key_refs(const parser::ColumnRef& column) const;
  bool add_predicates(Route& error);
  bool add_inserts(Route& error);
  bool settle_groups(Route& error);
  // route_decide.cc: groups -> route.
  std::vector<int> group_roots();
  Route keyed_route();
  Route unkeyed_route();
  bool check_assignments(int shard, Route& error);
  bool scatter_allowed(std::string& why);
  std::string not_tied_message(int a, int b) const;

  const parser::StatementFacts& facts_;
  const BindValues* params_;
  const Directory& dir_;
  const RoutingRules& rules_;
  std::vector<const TableRule*> rules_of_;  // per table reference; null when not sharded
  std::vector<int> sharded_;
  std::vector<int> unsharded_;  // user tables (not system catalogs)
  std::vector<int> parent_;     // union-find over table indices
  std::vector<Group> groups_;   // indexed by group root
};

}  // namespace sw::router::detail
