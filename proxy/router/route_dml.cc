// Routing of queries and DML: SELECT, INSERT, UPDATE, DELETE, MERGE (and the queries inside
// EXPLAIN, DECLARE CURSOR, COPY (query)).
//
// Model. Every reference to a sharded table must be pinned to one shard. References are put in
// co-location groups: a `key = key` equality (join ON/USING, WHERE, correlated subquery)
// between two sharded tables whose keys hash alike joins their groups, since the rows that meet
// share the key value. A group's key constraints are its usable `key = v` / `key IN (...)`
// predicates (and an INSERT's rows); its buckets are their intersection. Then:
//  * every group keyed, all on one shard           -> Shard (or AtBind if a key is a parameter);
//  * no group keyed, one group, a read that needs no merge and preserves only sharded rows
//                                                   -> Scatter;
//  * anything else                                  -> Error 0A000 naming the table and why.
// Unsharded tables live on the default shard only: they may join sharded ones only there.
#include <algorithm>
#include <numeric>

#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

using parser::StatementFacts;
using parser::TableRef;
using parser::TableRole;

void sort_unique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

int DmlRouter::find(int table) {
  while (parent_[static_cast<size_t>(table)] != table) {
    int& up = parent_[static_cast<size_t>(table)];
    up = parent_[static_cast<size_t>(up)];  // path halving
    table = up;
  }
  return table;
}

// The sharded references whose key `column` is: the qualifying table, or for an unqualified
// column the sharded tables of its own query block keyed by that name (PostgreSQL binds an
// unqualified name to the innermost block that has it; a table has its key column).
std::vector<int> DmlRouter::key_refs(const parser::ColumnRef& column) const {
  std::vector<int> out;
  if (column.table >= 0) {
    if (rule(column.table) != nullptr && rule(column.table)->key == column.name) {
      out.push_back(column.table);
    }
  } else if (!column.qualified) {
    for (int t : sharded_) {
      if (ref(t).scope == column.scope && rule(t)->key == column.name) out.push_back(t);
    }
  }
  return out;
}

bool DmlRouter::add_predicates(Route& error) {
  const uint32_t buckets = dir_.bucket_count();
  for (const parser::KeyPredicate& predicate : facts_.predicates) {
    for (int t : key_refs(predicate.column)) {
      Group& group = group_of(t);
      const TableRule& r = *rule(t);
      if (!predicate.usable) {
        group.hint = "the condition on " + r.key + " is inside an OR, NOT or outer join";
        continue;
      }
      Constraint constraint;
      constraint.kind = predicate.in_list ? ConstraintKind::InList : ConstraintKind::Equal;
      bool usable = true, deferred = false;
      for (const parser::Value& value : predicate.values) {
        KeyBucket key = key_bucket(value, r, params_, buckets);
        if (key.outcome == KeyOutcome::Error) {
          error = make_error(key.error.sqlstate, key.error.message, r.config_name);
          return false;
        }
        if (key.outcome == KeyOutcome::NotAKey) usable = false;
        if (key.outcome == KeyOutcome::NeedsBind) deferred = true;
        if (key.outcome == KeyOutcome::Bucket) constraint.buckets.push_back(key.bucket);
      }
      if (!usable) {
        group.hint = r.key + " is compared with an expression, not a constant or parameter";
      } else if (deferred) {
        group.deferred = true;
      } else {
        sort_unique(constraint.buckets);
        group.constraints.push_back(std::move(constraint));
      }
    }
  }
  return true;
}

bool DmlRouter::add_inserts(Route& error) {
  const uint32_t buckets = dir_.bucket_count();
  for (const parser::InsertFacts& insert : facts_.inserts) {
    if (insert.table < 0 || rule(insert.table) == nullptr) continue;
    const TableRule& r = *rule(insert.table);
    const std::string into = "INSERT into sharded table " + r.config_name;
    if (insert.default_values) {
      error = make_error("0A000", into + " with DEFAULT VALUES has no value for its key " + r.key,
                         r.config_name);
      return false;
    }
    if (insert.from_select) {
      error = make_error("0A000", into + " from a SELECT is not supported: the rows' keys are "
                                         "not known before it runs; use VALUES",
                         r.config_name);
      return false;
    }
    auto column = std::find(insert.columns.begin(), insert.columns.end(), r.key);
    if (insert.columns.empty() || column == insert.columns.end()) {
      error = make_error("0A000", into + (insert.columns.empty() ? " needs a column list" : "") +
                                      (insert.columns.empty() ? " naming its key " : " must set its key ") +
                                      r.key,
                         r.config_name);
      return false;
    }
    const auto position = static_cast<size_t>(column - insert.columns.begin());
    Constraint rows;
    rows.kind = ConstraintKind::Rows;
    Group& group = group_of(insert.table);
    for (size_t i = 0; i < insert.rows.size(); ++i) {
      const std::string row = insert.rows.size() > 1 ? " in row " + std::to_string(i + 1) : "";
      if (position >= insert.rows[i].size()) {
        error = make_error("0A000", into + ": no value for its key " + r.key + row, r.config_name);
        return false;
      }
      KeyBucket key = key_bucket(insert.rows[i][position], r, params_, buckets);
      switch (key.outcome) {
        case KeyOutcome::Error:
          error = make_error(key.error.sqlstate, key.error.message, r.config_name);
          return false;
        case KeyOutcome::Null:
          error = make_error("23502", into + ": null value in its key " + r.key + row,
                             r.config_name);
          return false;
        case KeyOutcome::NotAKey:
          error = make_error("0A000", into + ": the value of its key " + r.key + row +
                                          " is not a constant or parameter",
                             r.config_name);
          return false;
        case KeyOutcome::NeedsBind:
          group.deferred = true;
          break;
        case KeyOutcome::Bucket:
          rows.buckets.push_back(key.bucket);
          break;
      }
    }
    sort_unique(rows.buckets);
    group.constraints.push_back(std::move(rows));
  }
  return true;
}

// Intersects each group's constraints and finds its shards; a group on several shards is an
// error (only an IN list or a multi-row INSERT can put it there).
bool DmlRouter::settle_groups(Route& error) {
  for (int t : sharded_) {
    if (find(t) != t) continue;
    Group& group = groups_[static_cast<size_t>(t)];
    if (group.constraints.empty()) continue;
    group.buckets = group.constraints[0].buckets;
    for (size_t i = 1; i < group.constraints.size(); ++i) {
      std::vector<uint32_t> both;
      std::set_intersection(group.buckets.begin(), group.buckets.end(),
                            group.constraints[i].buckets.begin(),
                            group.constraints[i].buckets.end(), std::back_inserter(both));
      group.buckets = std::move(both);
    }
    for (uint32_t bucket : group.buckets) group.shards.push_back(dir_.bucket(bucket).shard);
    std::sort(group.shards.begin(), group.shards.end());
    group.shards.erase(std::unique(group.shards.begin(), group.shards.end()), group.shards.end());
    if (group.shards.size() <= 1) continue;
    const TableRule& r = *rule(t);
    const std::string shards = shard_names(dir_, group.shards);
    if (group.constraints[0].kind == ConstraintKind::Rows) {
      error = make_error("0A000", "INSERT into sharded table " + r.config_name +
                                      ": the rows' keys fall on several shards (" + shards +
                                      "); insert them in separate statements, one per shard",
                         r.config_name);
    } else {
      error = make_error("0A000", "IN list on the key " + r.key + " of sharded table " +
                                      r.config_name + " spans several shards (" + shards +
                                      "); split the statement by shard",
                         r.config_name);
    }
    return false;
  }
  return true;
}

Route DmlRouter::run() {
  const size_t n = facts_.tables.size();
  rules_of_.resize(n, nullptr);
  for (size_t t = 0; t < n; ++t) {
    const TableRef& table = facts_.tables[t];
    if (is_system_table(table)) continue;
    rules_of_[t] = rules_.find(table.schema, table.name);
    (rules_of_[t] != nullptr ? sharded_ : unsharded_).push_back(static_cast<int>(t));
  }
  if (sharded_.empty()) return make_default(dir_, rules_, "no sharded table");
  const TableRule& first = *rule(sharded_[0]);
  if (!facts_.complete) {
    return make_error("0A000", std::string(statement_verb(facts_)) + " on sharded table " +
                                   first.config_name + " is nested too deeply to route",
                      first.config_name);
  }
  for (int t : sharded_) {
    if (ref(t).role == TableRole::Merge) {
      return make_error("0A000", "MERGE into sharded table " + rule(t)->config_name +
                                     " is not supported; use INSERT ... ON CONFLICT by key",
                        rule(t)->config_name);
    }
  }
  if (dir_.bucket_count() == 0) return make_error("XX000", "the directory has no buckets");

  parent_.resize(n);
  std::iota(parent_.begin(), parent_.end(), 0);
  groups_.resize(n);
  for (const parser::ColumnEquality& equality : facts_.equalities) {
    for (int l : key_refs(equality.left)) {
      for (int r : key_refs(equality.right)) {
        if (same_hash_family(rule(l)->key_type, rule(r)->key_type)) parent_[static_cast<size_t>(find(l))] = find(r);
      }
    }
  }
  Route error;
  if (!add_predicates(error) || !add_inserts(error) || !settle_groups(error)) return error;
  for (int t : sharded_) group_of(t).members.push_back(t);

  bool any_unkeyed = false;
  for (int t : sharded_) {
    const Group& group = group_of(t);
    if (group.keyed()) continue;
    any_unkeyed = true;
    const TableRole role = ref(t).role;
    if (role == TableRole::Update || role == TableRole::Delete) {
      const TableRule& r = *rule(t);
      return make_error("0A000", std::string(role == TableRole::Update ? "UPDATE" : "DELETE") +
                                     " on sharded table " + r.config_name + " needs its key: " +
                                     key_example(t) +
                                     (group.hint.empty() ? "" : " (" + group.hint + ")") +
                                     "; writes without a key are never sent to every shard",
                         r.config_name);
    }
  }
  if (any_unkeyed && facts_.writes) {
    for (int t : sharded_) {
      if (group_of(t).keyed()) continue;
      const TableRule& r = *rule(t);
      return make_error("0A000", std::string(statement_verb(facts_)) +
                                     " writes on one shard but reads sharded table " +
                                     r.config_name + " without its key: add " + key_example(t) +
                                     " or join it on its key",
                        r.config_name);
    }
  }
  return any_unkeyed ? unkeyed_route() : keyed_route();
}

Route route_dml(const parser::StatementFacts& statement, const BindValues* params,
                const Directory& dir, const RoutingRules& rules) {
  return DmlRouter(statement, params, dir, rules).run();
}

}  // namespace sw::router::detail

