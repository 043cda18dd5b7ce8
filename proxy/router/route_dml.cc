// Routing of queries and DML: SELECT, INSERT, UPDATE, DELETE, MERGE (and the queries inside
// EXPLAIN, DECLARE CURSOR, COPY (query)).
//
// Model. Every row of a sharded table that counts for the statement must be on the shard it
// runs on. Per sharded table reference:
//  * its own key constraints: usable `key = v` / `key IN (...)` predicates of its own query
//    block, and an INSERT's rows; its buckets are their intersection;
//  * restrictions carried over `key = key` equalities, in the direction the facts allow (both
//    ways for WHERE and inner joins, preserved -> nullable side for LEFT/RIGHT JOIN, outer ->
//    inner for a correlated subquery; never into an outer query, where the subquery may be
//    under OR or NOT; an `x IN (SELECT y ...)` of a WHERE's AND chain is written in both blocks);
//  * its co-location group: references joined by key equalities (any direction, as long as one
//    side belongs to the block the equality is written in), whose rows that meet share a key.
// Then:
//  * every reference restricted, all buckets on one shard     -> Shard (AtBind while a
//                                                                 parameter has no value);
//  * a read with one co-location group, no merge needed, every result row from a sharded
//    row                                                        -> Scatter;
//  * anything else                                              -> Error naming the table.
// Unsharded tables live on the default shard only: they may join sharded ones only there.
// Reference tables are on every shard: they join anything where it runs, and do not count in
// the model; a statement that writes one goes to every shard (route_reference.cc).
#include <algorithm>
#include <numeric>

#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

void sort_unique(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Keeps in `a` the values that are also in `b` (both sorted, unique), in place.
void keep_common(std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t kept = 0;
  auto other = b.begin();
  for (size_t i = 0; i < a.size(); ++i) {
    const uint32_t value = a[i];
    while (other != b.end() && *other < value) ++other;
    if (other != b.end() && *other == value) a[kept++] = value;
  }
  a.resize(kept);
}

}  // namespace

int DmlRouter::find(int table) const {
  while (parent_[static_cast<size_t>(table)] != table) {
    int& up = parent_[static_cast<size_t>(table)];
    up = parent_[static_cast<size_t>(up)];  // path halving
    table = up;
  }
  return table;
}

void Constraint::reset() {
  kind = ConstraintKind::Equal;
  buckets.clear();
  deferred = false;
  predicate = -1;
  item_buckets.clear();
  elements.clear();
}

void RefKeys::reset() {
  own.clear();
  pinned = false;
  deferred = false;
  known = false;
  buckets.clear();
  hint.clear();
}

void RoutingScratch::clear() {
  rules_of.clear();
  sharded.clear();
  unsharded.clear();
  references.clear();
  keys.clear();
  edges.clear();
  parent.clear();
  shards.clear();
}

namespace {
thread_local RoutingScratch thread_scratch;
thread_local bool thread_scratch_leased = false;
}  // namespace

RoutingScratch::Lease::Lease() : scratch_(&thread_scratch) {
  if (thread_scratch_leased) {
    own_ = std::make_unique<RoutingScratch>();
    scratch_ = own_.get();
    return;
  }
  thread_scratch_leased = true;
  scratch_->clear();
}

RoutingScratch::Lease::~Lease() {
  if (own_ == nullptr) thread_scratch_leased = false;
}

std::vector<int> DmlRouter::shards_of(const std::vector<uint32_t>& buckets) const {
  std::vector<int> shards;
  for (uint32_t bucket : buckets) {
    const int shard = dir_.bucket(bucket).shard;
    if (std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

// The sharded references whose key `column` is: the qualifying table, or for an unqualified
// column the sharded tables of its own query block keyed by that name (PostgreSQL binds an
// unqualified name to the innermost block that has it; a table has its key column).
template <typename Visit>
void DmlRouter::for_each_key_ref(const parser::ColumnRef& column, Visit visit) const {
  if (column.table >= 0) {
    if (rule(column.table) != nullptr && rule(column.table)->key == column.name) visit(column.table);
  } else if (!column.qualified) {
    for (int t : sharded_) {
      if (ref(t).scope == column.scope && rule(t)->key == column.name) visit(t);
    }
  }
}

std::vector<int> DmlRouter::key_refs(const parser::ColumnRef& column) const {
  std::vector<int> out;
  for_each_key_ref(column, [&](int t) { out.push_back(t); });
  return out;
}

// Co-location: when one side belongs to the block the equality is written in, that block only
// considers rows of its table with the other's key (a join, or a correlated subquery however
// it is used). Between two outer tables it says nothing. Restriction: only into that block.
void DmlRouter::add_equalities() {
  for (const parser::ColumnEquality& equality : facts_.equalities) {
    const int block = equality.left.scope;
    for_each_key_ref(equality.left, [&](int l) {
      for_each_key_ref(equality.right, [&](int r) {
        const bool left_local = ref(l).scope == block;
        const bool right_local = ref(r).scope == block;
        if (!(left_local || right_local)) return;
        if (!same_hash_family(rule(l)->key_type, rule(r)->key_type)) return;
        parent_[static_cast<size_t>(find(l))] = find(r);
        if (equality.left_restricts_right && right_local) edges_.push_back({l, r});
        if (equality.right_restricts_left && left_local) edges_.push_back({r, l});
      });
    });
  }
}

// A predicate restricts a table's rows only in the table's own query block: written inside a
// subquery about an outer table (`... OR EXISTS (SELECT ... WHERE o.k = 5)`), it may hold for
// some rows and not others.
bool DmlRouter::add_predicates(Route& error) {
  for (size_t p = 0; p < facts_.predicates.size(); ++p) {
    bool ok = true;
    for_each_key_ref(facts_.predicates[p].column, [&](int t) { ok = ok && add_predicate(p, t, error); });
    if (!ok) return false;
  }
  return true;
}

// Predicate `p` on the key of reference `t`: a constraint, a hint why it is not usable, or false
// with `error` set (a bad key value).
bool DmlRouter::add_predicate(size_t p, int t, Route& error) {
  const parser::KeyPredicate& predicate = facts_.predicates[p];
  if (ref(t).scope != predicate.column.scope) return true;
  const TableRule& r = *rule(t);
  RefKeys& k = keys(t);
  if (!predicate.usable) {
    k.hint = "the condition on " + r.key + " is inside an OR, NOT or outer join";
    return true;
  }
  Constraint& constraint = k.own.add();
  constraint.kind = predicate.in_list ? ConstraintKind::InList : ConstraintKind::Equal;
  constraint.predicate = static_cast<int>(p);
  const std::vector<parser::Value>* values = &predicate.values;
  if (predicate.array) {
    const KeyOutcome array = array_elements(predicate.values.front(), params_, constraint.elements);
    if (array == KeyOutcome::NeedsBind) {
      constraint.deferred = true;
      return true;
    }
    if (array != KeyOutcome::Bucket) {
      k.own.drop_last();
      k.hint =
          r.key +
          " = ANY(...) needs a '{...}' array constant or a one-dimensional array parameter of the key's type";
      return true;
    }
    values = &constraint.elements;
  }
  bool usable = true, decidable = true;
  const KeyComparison comparison = key_comparison(*values, r, params_);
  for (const parser::Value& value : *values) {
    KeyBucket key = key_bucket(value, r, params_, dir_.bucket_count(), &comparison);
    if (key.outcome == KeyOutcome::Error) {
      error = make_error(key.error.sqlstate, key.error.message, r.config_name);
      return false;
    }
    if (key.outcome == KeyOutcome::NotAKey) usable = false;
    if (key.outcome == KeyOutcome::Undecidable) decidable = false;
    if (key.outcome == KeyOutcome::NeedsBind) constraint.deferred = true;
    if (key.outcome == KeyOutcome::Bucket) constraint.buckets.push_back(key.bucket);
    constraint.item_buckets.push_back(key.outcome == KeyOutcome::Bucket ? static_cast<int64_t>(key.bucket)
                                                                        : -1);
  }
  if (!usable || !decidable) {
    k.own.drop_last();
    k.hint = usable ? r.key + " is compared with a float that several key values round to"
                    : r.key + " is compared with an expression, not a constant or parameter";
    return true;
  }
  sort_unique(constraint.buckets);
  return true;
}

bool DmlRouter::add_inserts(Route& error) {
  const uint32_t buckets = dir_.bucket_count();
  for (const parser::InsertFacts& insert : facts_.inserts) {
    if (insert.table < 0 || rule(insert.table) == nullptr) continue;
    const TableRule& r = *rule(insert.table);
    // Built only for an error: an INSERT that routes allocates nothing here.
    auto into = [&r] { return "INSERT into sharded table " + r.config_name; };
    if (insert.default_values) {
      error = make_error("0A000", into() + " with DEFAULT VALUES has no value for its key " + r.key,
                         r.config_name);
      return false;
    }
    if (insert.from_select) {
      if (!add_insert_select(insert, error)) return false;
      continue;
    }
    auto column = std::find(insert.columns.begin(), insert.columns.end(), r.key);
    if (column == insert.columns.end()) {
      error = make_error(
          "0A000",
          into() + (insert.columns.empty() ? " needs a column list naming its key " : " must set its key ") +
              r.key,
          r.config_name);
      return false;
    }
    const auto position = static_cast<size_t>(column - insert.columns.begin());
    // "<into>: <what> <key>[ in row N]<tail>": an error about row i's key value.
    auto row_error = [&](const char* what, size_t i, const char* tail) {
      std::string message = into() + ": " + what + r.key;
      if (insert.rows.size() > 1) message += " in row " + std::to_string(i + 1);
      return message + tail;
    };
    Constraint& rows = keys(insert.table).own.add();
    rows.kind = ConstraintKind::Rows;
    for (size_t i = 0; i < insert.rows.size(); ++i) {
      KeyBucket key;  // NotAKey when the row is short (PostgreSQL rejects it anyway)
      if (position < insert.rows[i].size()) {
        key = key_bucket(insert.rows[i][position], r, params_, buckets);
      }
      switch (key.outcome) {
        case KeyOutcome::Error:
          error = make_error(key.error.sqlstate, key.error.message, r.config_name);
          return false;
        case KeyOutcome::Null:
          error = make_error("23502", row_error("null value in its key ", i, ""), r.config_name);
          return false;
        case KeyOutcome::NotAKey:
        case KeyOutcome::Undecidable:
          error =
              make_error("0A000", row_error("the value of its key ", i, " is not a constant or parameter"),
                         r.config_name);
          return false;
        case KeyOutcome::NeedsBind: rows.deferred = true; break;
        case KeyOutcome::Bucket: rows.buckets.push_back(key.bucket); break;
      }
    }
    sort_unique(rows.buckets);
  }
  return true;
}

// Own constraints, then restrictions carried along the edges until nothing changes (flags only
// turn on and bucket sets only shrink, so this ends).
void DmlRouter::propagate() {
  for (int t : sharded_) {
    RefKeys& k = keys(t);
    for (const Constraint& constraint : k.own) {
      k.pinned = true;
      if (constraint.deferred) {
        k.deferred = true;
        continue;
      }
      if (k.known) {
        keep_common(k.buckets, constraint.buckets);
      } else {
        k.buckets = constraint.buckets;  // reuses the capacity k.buckets kept from earlier runs
      }
      k.known = true;
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Edge& edge : edges_) {
      const RefKeys& from = keys(edge.from);
      RefKeys& to = keys(edge.to);
      if (!from.pinned) continue;
      if (!to.pinned || (from.deferred && !to.deferred)) {
        to.pinned = true;
        to.deferred = to.deferred || from.deferred;
        changed = true;
      }
      if (from.known && !to.known) {
        to.buckets = from.buckets;
        to.known = true;
        changed = true;
      } else if (from.known) {
        const size_t before = to.buckets.size();
        keep_common(to.buckets, from.buckets);
        changed = changed || to.buckets.size() != before;
      }
    }
  }
}

Route DmlRouter::run() {
  const size_t n = facts_.tables.size();
  rules_of_.assign(n, nullptr);
  for (size_t t = 0; t < n; ++t) {
    const parser::TableRef& table = facts_.tables[t];
    if (is_system_table(table)) continue;
    rules_of_[t] = rules_.find(table.schema, table.name);
    if (rules_of_[t] != nullptr) {
      sharded_.push_back(static_cast<int>(t));
    } else {
      (rules_.find_reference(table.schema, table.name) != nullptr ? references_ : unsharded_)
          .push_back(static_cast<int>(t));
    }
  }
  if (const int written = written_reference(); written >= 0) return reference_write(written);
  if (sharded_.empty() && unsharded_.empty() && !references_.empty()) return reference_read();
  if (sharded_.empty()) return make_default(dir_, rules_, explained(explain_, "no sharded table"));
  const TableRule& first = *rule(sharded_[0]);
  if (!facts_.complete) {
    return make_error("0A000",
                      std::string(statement_verb(facts_)) + " on sharded table " + first.config_name +
                          " is nested too deeply to route",
                      first.config_name);
  }
  for (int t : sharded_) {
    if (ref(t).role == parser::TableRole::Merge) {
      return make_error("0A000",
                        "MERGE into sharded table " + rule(t)->config_name +
                            " is not supported; use INSERT ... ON CONFLICT by key",
                        rule(t)->config_name);
    }
  }
  if (dir_.bucket_count() == 0) return make_error("XX000", "the directory has no buckets");

  parent_.resize(n);
  std::iota(parent_.begin(), parent_.end(), 0);
  for (size_t t = 0; t < n; ++t) keys_.add();
  add_equalities();
  Route error;
  if (!add_predicates(error) || !add_inserts(error)) return error;
  propagate();
  const bool all_pinned =
      std::all_of(sharded_.begin(), sharded_.end(), [&](int t) { return keys(t).pinned; });
  if (insert_target_ >= 0) return insert_select_route(all_pinned);
  return all_pinned ? pinned_route() : unpinned_route();
}

Route route_dml(const parser::StatementFacts& statement, const BindValues* params, const Directory& dir,
                const RoutingRules& rules, Explain explain) {
  return DmlRouter(statement, params, dir, rules, explain).run();
}

}  // namespace sw::router::detail
