// DmlRouter: from key state and co-location groups to a route (see route_dml.cc for the model).
#include <algorithm>

#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

std::string feature_names(uint32_t features) {
  namespace f = parser::feature;
  static const std::pair<uint32_t, const char*> names[] = {
      {f::kOrderBy, "ORDER BY"},        {f::kLimit, "LIMIT/OFFSET"},
      {f::kDistinct, "DISTINCT"},       {f::kGroupBy, "GROUP BY"},
      {f::kHaving, "HAVING"},           {f::kAggregate, "aggregates"},
      {f::kWindow, "window functions"}, {f::kSetOp, "UNION/INTERSECT/EXCEPT"}};
  std::string out;
  for (const auto& [bit, name] : names) {
    if ((features & bit) == 0) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

// A scatter read is a plain concatenation of the shards' results when no block that sees a
// sharded table (and not the statement's own block) needs rows of several shards together
// (ORDER BY, LIMIT, DISTINCT, GROUP BY, HAVING, aggregates, windows, set operations), and when
// every result row contains a sharded row (else shards would each return it): the top block
// reads a sharded table that is not on the nullable side of an outer join, or only sharded
// tables (FULL JOIN of co-located tables).
bool DmlRouter::scatter_allowed(std::string& why) {
  const int first = sharded_[0];
  const std::string name = rule(first)->config_name;
  const std::string fix = ": add " + key_example(first);
  if (facts_.query_kind != parser::StatementKind::Select) {
    why = std::string(statement_verb(facts_)) + " on sharded table " + name + " needs its key" + fix;
    return false;
  }
  const auto& scopes = facts_.scopes;
  std::vector<bool> sees_sharded(scopes.size(), false);
  for (int t : sharded_) {
    for (int s = ref(t).scope; s >= 0 && !sees_sharded[static_cast<size_t>(s)];
         s = scopes[static_cast<size_t>(s)].parent) {
      sees_sharded[static_cast<size_t>(s)] = true;
    }
  }
  uint32_t blocking = 0;
  bool inner = false;  // a blocking feature is in a subquery or CTE
  // The statement's own block, when a plain SELECT, is the scatter plan's to merge.
  const bool planned = facts_.node_type == "SelectStmt" && facts_.select.plain;
  for (size_t s = 0; s < scopes.size(); ++s) {
    if (s == 0 && planned) continue;
    if (s == 0 || sees_sharded[s]) blocking |= scopes[s].features;
    inner = inner || (s != 0 && sees_sharded[s] && scopes[s].features != 0);
  }
  if (blocking != 0) {
    why = "SELECT on sharded table " + name +
          (splitting_ ? " has keys on several shards" : " has no key value") + " and uses " +
          feature_names(blocking) + (inner ? " in a subquery, CTE or UNION" : "") +
          ", which needs a merge of the shards' rows (not supported yet)" + fix;
    return false;
  }
  bool preserved = false;
  bool only_sharded = scopes.empty() || !scopes[0].non_table_from;
  bool any_top = false;
  for (size_t t = 0; t < facts_.tables.size(); ++t) {
    const parser::TableRef& table = facts_.tables[t];
    const bool sharded = rules_of_[t] != nullptr;
    bool nullable = false;
    if (sharded && table.scope != 0 && rows_reach_top(static_cast<int>(t), nullable) && !nullable)
      preserved = true;
    if (table.scope != 0) continue;
    any_top = any_top || sharded;
    if (sharded && !table.nullable) preserved = true;
    if (!sharded) only_sharded = false;
  }
  if (!preserved && !(only_sharded && any_top)) {
    why = "SELECT on sharded table " + name +
          (splitting_ ? " has keys on several shards" : " has no key value") +
          " and reads it through a subquery, CTE or outer join, which cannot "
          "be sent to every shard and concatenated" +
          fix;
    return false;
  }
  return true;
}

bool DmlRouter::rows_reach_top(int t, bool& nullable) const {
  nullable = ref(t).nullable;
  const auto& scopes = facts_.scopes;
  for (int s = ref(t).scope; s != 0;) {
    if (s < 0 || static_cast<size_t>(s) >= scopes.size()) return false;
    const parser::Scope& block = scopes[static_cast<size_t>(s)];
    if (block.feeds < 0 || block.features != 0) return false;
    nullable = nullable || block.feeds_nullable;
    s = block.feeds;
  }
  return true;
}

bool DmlRouter::key_named_at_top() const {
  return std::all_of(sharded_.begin(), sharded_.end(), [&](int t) { return ref(t).scope == 0; });
}

// Two sharded references in different groups, `a` without a key value: why they cannot be
// routed together, and what would make them.
std::string DmlRouter::not_tied_message(int a, int b) const {
  const TableRule& ra = *rule(a);
  const TableRule& rb = *rule(b);
  const parser::TableRef& ta = ref(a);
  const parser::TableRef& tb = ref(b);
  const bool same_table = ra.config_name == rb.config_name;
  std::string message;
  const std::string fix = ": give each a key value on one shard";
  if (!same_hash_family(ra.key_type, rb.key_type)) {
    message = "sharded tables " + ra.config_name + " and " + rb.config_name +
              " have keys of different types (" + key_type_name(ra.key_type) + ", " +
              key_type_name(rb.key_type) + "), so their rows do not meet on one shard" + fix;
  } else if (ta.scope == tb.scope) {
    auto qualifier = [](const parser::TableRef& t) { return t.alias.empty() ? t.name : t.alias; };
    message =
        (same_table ? "sharded table " + ra.config_name + " is joined with itself, not"
                    : "sharded tables " + ra.config_name + " and " + rb.config_name + " are not joined") +
        " on the key: add " + qualifier(ta) + "." + ra.key + " = " + qualifier(tb) + "." + rb.key +
        ", or give each a key value on one shard";
  } else {
    message = (same_table ? "sharded table " + ra.config_name + " is read twice"
                          : "sharded tables " + ra.config_name + " and " + rb.config_name + " are read") +
              " in parts of the statement (subquery, CTE or UNION) not tied by the key" + fix;
  }
  const std::string& hint = keys_[static_cast<size_t>(a)].hint;
  return message + (hint.empty() ? "" : " (" + hint + ")");
}

// The assignment (to the key) leaves it unchanged, or sets it to the inserted row's own key.
bool DmlRouter::keeps_key(const parser::Assignment& assignment) const {
  const TableRule& r = *rule(assignment.table);
  const parser::TableRef& target = ref(assignment.table);
  const parser::Value& value = assignment.value;
  return value.kind == parser::ValueKind::Column &&
         (value.text == r.key || value.text == "excluded." + r.key ||
          value.text == (target.alias.empty() ? target.name : target.alias) + "." + r.key);
}

bool DmlRouter::check_assignments(int shard, Route& error, bool rows_on_shard) {
  for (const parser::Assignment& assignment : facts_.assignments) {
    if (assignment.table < 0 || rule(assignment.table) == nullptr) continue;
    const TableRule& r = *rule(assignment.table);
    if (assignment.column != r.key) continue;
    const parser::TableRef& target = ref(assignment.table);
    const std::string what =
        (target.role == parser::TableRole::Insert ? "ON CONFLICT DO UPDATE of sharded table "
                                                  : "UPDATE of sharded table ") +
        r.config_name + " sets its key " + r.key;
    const parser::Value& value = assignment.value;
    if (keeps_key(assignment)) continue;
    KeyBucket key = key_bucket(value, r, params_, dir_.bucket_count());
    switch (key.outcome) {
      case KeyOutcome::Error:
        error = make_error(key.error.sqlstate, key.error.message, r.config_name);
        return false;
      case KeyOutcome::Null: error = make_error("23502", what + " to NULL", r.config_name); return false;
      case KeyOutcome::NotAKey:
      case KeyOutcome::Undecidable:
        if (target.role == parser::TableRole::Update) {  // the rows may move: see route_key_move.cc
          error = key_move(assignment.table);
          return false;
        }
        error = make_error("0A000",
                           what +
                               " to an expression; only a constant or parameter on "
                               "the same shard is allowed",
                           r.config_name);
        return false;
      case KeyOutcome::NeedsBind:
        error = Route{};
        error.kind = RouteKind::AtBind;
        error.table = r.config_name;
        error.reason = "the new key of " + r.config_name + " is a parameter: routed at Bind";
        return false;
      case KeyOutcome::Bucket:
        if (dir_.bucket(key.bucket).shard != shard && target.role == parser::TableRole::Update) {
          std::vector<int> only;  // the rows' shard and the new key's owner
          if (rows_on_shard) only = {shard, static_cast<int>(dir_.bucket(key.bucket).shard)};
          error = key_move(assignment.table, only);
          return false;
        }
        if (dir_.bucket(key.bucket).shard != shard) {
          error = make_error("0A000",
                             what + " to a value on shard " + dir_.shard_name(dir_.bucket(key.bucket).shard) +
                                 ", but its rows are on " + dir_.shard_name(static_cast<uint16_t>(shard)) +
                                 "; a key can only change within its shard" +
                                 (target.role == parser::TableRole::Insert
                                      ? ""
                                      : " (instead, DELETE the row RETURNING it and INSERT it with the new "
                                        "key in one transaction)"),
                             r.config_name);
          return false;
        }
        break;
    }
  }
  return true;
}

// Some reference is not restricted by a key. An UPDATE or DELETE target without one runs on
// every shard's own rows (keyless_write); a read may scatter when its sharded tables form one
// co-location group.
Route DmlRouter::unpinned_route() {
  for (int t : sharded_) {
    const RefKeys& k = keys(t);
    const parser::TableRole role = ref(t).role;
    if (k.pinned || (role != parser::TableRole::Update && role != parser::TableRole::Delete)) {
      continue;
    }
    return keyless_write(t);
  }
  int a = -1;  // the first reference without a key
  for (int t : sharded_) {
    if (!keys(t).pinned) {
      a = t;
      break;
    }
  }
  const TableRule& ra = *rule(a);
  if (facts_.writes) {
    return make_error("0A000",
                      std::string(statement_verb(facts_)) + " writes on one shard but reads sharded table " +
                          ra.config_name + " without its key: add " + key_example(a) +
                          " or join it on its key",
                      ra.config_name);
  }
  for (int t : sharded_) {
    if (find(t) != find(a)) return make_error("0A000", not_tied_message(a, t), ra.config_name);
  }
  return keyless_read(a);
}

// A read of one co-location group, `first` without a key (or a split read falling back to
// every shard): every shard, concatenated or merged.
Route DmlRouter::keyless_read(int first) {
  const int a = first;
  const TableRule& ra = *rule(a);
  const std::string& hint = keys(a).hint;
  if (!unsharded_.empty()) {
    return make_error("0A000",
                      "SELECT reads sharded table " + ra.config_name +
                          " without its key together with unsharded table " +
                          table_name(ref(unsharded_.front())) + ", which lives on the default shard only",
                      ra.config_name);
  }
  std::string why;
  if (!scatter_allowed(why)) {
    return make_error("0A000", why + (hint.empty() ? "" : " (" + hint + ")"), ra.config_name);
  }
  Route route;
  route.kind = RouteKind::Scatter;
  route.table = ra.config_name;
  route.reason = ra.config_name + " has no key value" + (hint.empty() ? "" : " (" + hint + ")") +
                 ": every shard, rows concatenated";
  if (facts_.node_type != "SelectStmt" || facts_.scopes.empty()) return route;
  if (facts_.scopes[0].features != 0) return merged_scatter(std::move(route), a);
  // A plain concatenation still gets a plan: its shards' SQL reads only their own buckets' rows
  // (owned_rows_splices). Without that need, every shard runs the client's text.
  if (!rules_.owned_rows_only()) return route;
  auto plan = std::make_shared<merge::MergePlan>();
  auto sql = parser::splice_tables(facts_, owned_rows_splices(facts_, rules_, dir_.bucket_count()));
  if (!sql)
    return make_error("0A000", "SELECT on sharded table " + ra.config_name + ": " + sql.status().message,
                      ra.config_name);
  plan->shard_sql = std::move(sql.value());
  route.merge = std::move(plan);
  return route;
}

// `table`'s rows would be on several shards: blame the IN list or INSERT rows that put them
// there, if one did alone.
Route DmlRouter::several_shards_error(int table) const {
  for (int t : sharded_) {
    for (const Constraint& constraint : keys_[static_cast<size_t>(t)].own) {
      const std::vector<int> shards = shards_of(constraint.buckets);
      if (shards.size() <= 1) continue;
      const TableRule& r = *rule(t);
      const std::string names = shard_names(dir_, shards);
      if (constraint.kind == ConstraintKind::Rows) {
        return make_error("0A000",
                          "INSERT into sharded table " + r.config_name +
                              ": the rows' keys fall on several shards (" + names +
                              "); insert them in separate statements, one per shard",
                          r.config_name);
      }
      return make_error("0A000",
                        "IN list on the key " + r.key + " of sharded table " + r.config_name +
                            " spans several shards (" + names + "); split the statement by shard",
                        r.config_name);
    }
  }
  const TableRule& r = *rule(table);
  return make_error("0A000",
                    "the key values of sharded table " + r.config_name + " fall on several shards (" +
                        shard_names(dir_, shards_of(keys_[static_cast<size_t>(table)].buckets)) +
                        "); split the statement by shard",
                    r.config_name);
}

// A reference whose key is a parameter, before Bind.
Route DmlRouter::at_bind_route(int table) const {
  Route route;
  route.kind = RouteKind::AtBind;
  route.table = rule(table)->config_name;
  if (explain_ == Explain::Yes)
    route.reason = "the key of " + route.table + " is a parameter: routed at Bind";
  return route;
}

// Every reference is restricted by a key: one shard, if they agree. Every path returns the one
// named Route, so the keyed route is built in the caller's (a Route's move cost about 250
// instructions); the rare paths assign theirs to it.
Route DmlRouter::pinned_route() {
  Route route;
  for (int t : sharded_) {
    if (keys(t).deferred) {
      route = at_bind_route(t);
      return route;
    }
  }
  std::vector<int>& shards = (*lease_).shards;  // the keys' shards, in the order met
  size_t bucket_count = 0;
  for (int t : sharded_) bucket_count += keys(t).buckets.size();
  SpareRouteBuffers& spare = spare_route_buffers();
  route.buckets.swap(spare.buckets);  // a recycled route's list (router::recycle), emptied
  route.buckets.clear();
  route.buckets.reserve(bucket_count);  // an allocation only when none was recycled, or too small
  for (int t : sharded_) {
    const std::vector<uint32_t>& own = keys(t).buckets;
    if (own.empty()) continue;
    const int first_shard = dir_.bucket(own.front()).shard;
    for (uint32_t bucket : own) {
      if (dir_.bucket(bucket).shard != first_shard) {
        route = split_read(t);  // its keys span shards
        return route;
      }
    }
    if (std::find(shards.begin(), shards.end(), first_shard) == shards.end()) shards.push_back(first_shard);
    route.buckets.insert(route.buckets.end(), own.begin(), own.end());
  }
  const std::string& table = rule(sharded_.front())->config_name;
  if (shards.size() != 1) {
    route = shards.empty()
                ? make_default(dir_, rules_,
                               explained(explain_, "the key values match no row (NULL or contradictory)"))
                : mixed_shards_error(table);
    return route;
  }
  const int shard = shards.front();
  if (!unsharded_.empty() && shard != dir_.shard_index(rules_.default_shard())) {
    route = make_error("0A000",
                       std::string(statement_verb(facts_)) + " mixes sharded table " + table + " (shard " +
                           dir_.shard_name(static_cast<uint16_t>(shard)) + ") with unsharded table " +
                           table_name(ref(unsharded_.front())) + ", which lives on the default shard " +
                           rules_.default_shard() + " only",
                       table);
    return route;
  }
  if (!check_assignments(shard, route, true)) return route;  // the error, in place of the whole route

  route.kind = RouteKind::Shard;
  route.shard = shard;
  std::sort(route.buckets.begin(), route.buckets.end());
  route.buckets.erase(std::unique(route.buckets.begin(), route.buckets.end()), route.buckets.end());
  for (uint32_t bucket : route.buckets) {
    if (dir_.bucket(bucket).state == BucketState::Migrating) route.migrating = true;
  }
  if (table.size() > route.table.capacity()) route.table.swap(spare.table);  // a recycled name buffer
  route.table.assign(table);
  if (explain_ == Explain::Yes) route.reason = pinned_reason();
  return route;
}

// A pinned statement whose references' keys are on different shards.
Route DmlRouter::mixed_shards_error(const std::string& table) const {
  std::vector<std::string> owners;  // "orders on s1", "items on s0"
  for (int t : sharded_) {
    for (int shard : shards_of(keys_[static_cast<size_t>(t)].buckets)) {
      std::string owner = rule(t)->config_name + " on " + dir_.shard_name(static_cast<uint16_t>(shard));
      if (std::find(owners.begin(), owners.end(), owner) == owners.end()) owners.push_back(std::move(owner));
    }
  }
  std::string list;
  for (const std::string& owner : owners) {
    if (!list.empty()) list += ", ";
    list += owner;
  }
  return make_error("0A000",
                    std::string(statement_verb(facts_)) + " mixes sharded tables on different shards (" +
                        list + "); send a statement per shard",
                    table);
}

// "by the key k of t" or "by the keys of t, u".
std::string DmlRouter::pinned_reason() const {
  const std::string& table = rule(sharded_.front())->config_name;
  const bool one_table =
      std::all_of(sharded_.begin(), sharded_.end(), [&](int t) { return rule(t)->config_name == table; });
  if (one_table) return "by the key " + rule(sharded_.front())->key + " of " + table;
  std::vector<std::string> names;
  for (int t : sharded_) {
    const std::string& name = rule(t)->config_name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string reason = "by the keys of";
  for (size_t i = 0; i < names.size(); ++i) reason.append(i ? ", " : " ").append(names[i]);
  return reason;
}

}  // namespace sw::router::detail
