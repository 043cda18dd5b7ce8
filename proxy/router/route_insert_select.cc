// INSERT ... SELECT into a sharded table (docs/architecture.md §6.3).
//
// Each row must land in its key's bucket, and that bucket's owner must be the shard that writes
// it. When the target's key is fed by the key column of a sharded source table of the same hash
// family (a plain column at the key's position of the select list), every row read on a shard
// goes into a bucket that shard owns: the statement may run on each shard locally, provided
// every shard reads only the rows of buckets it owns (the owned-rows splice, §5.6) and every
// other sharded table it reads is joined to the source on the key (one co-location group). A
// key from a constant or parameter pins the target like a VALUES row; anything else (an
// expression, a non-key column, an unsharded or reference table's column) would need routing
// row by row and is refused.
#include <algorithm>

#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

bool is_constant(parser::ValueKind kind) {
  return kind == parser::ValueKind::String || kind == parser::ValueKind::Number ||
         kind == parser::ValueKind::Null || kind == parser::ValueKind::Bool ||
         kind == parser::ValueKind::Param;
}

}  // namespace

// The SELECT's item at the target key's position: a constant pins the target's rows, a source
// key column ties the target to that source (`insert_source_`); anything else is refused.
bool DmlRouter::add_insert_select(const parser::InsertFacts& insert, Route& error) {
  const TableRule& r = *rule(insert.table);
  const std::string into = "INSERT into sharded table " + r.config_name + " from a SELECT";
  auto refuse = [&](const std::string& why) {
    error = make_error("0A000", into + " " + why, r.config_name);
    return false;
  };
  if (facts_.kind != parser::StatementKind::Insert || ref(insert.table).scope != 0) {
    return refuse("is supported only as the statement itself (not in a CTE or EXPLAIN)");
  }
  if (insert.select_scope < 0) {
    return refuse("is supported only from one plain SELECT (not UNION/INTERSECT/EXCEPT or VALUES)");
  }
  auto named = std::find(insert.columns.begin(), insert.columns.end(), r.key);
  if (named == insert.columns.end()) {
    return refuse(insert.columns.empty() ? "needs a column list naming its key " + r.key
                                         : "must set its key " + r.key);
  }
  const auto position = static_cast<size_t>(named - insert.columns.begin());
  for (size_t i = 0; i < insert.select_values.size() && i <= position; ++i) {
    if (insert.select_values[i].kind == parser::ValueKind::Other && insert.select_values[i].text == "*") {
      return refuse("selects * where its key " + r.key + " is fed: write the select list out");
    }
  }
  if (position >= insert.select_values.size()) return refuse("has no select-list item for its key " + r.key);
  const parser::Value& value = insert.select_values[position];
  const std::string item = "item " + std::to_string(position + 1) + " of the select list";
  if (is_constant(value.kind)) {
    KeyBucket key = key_bucket(value, r, params_, dir_.bucket_count());
    if (key.outcome == KeyOutcome::Error) {
      error = make_error(key.error.sqlstate, key.error.message, r.config_name);
      return false;
    }
    if (key.outcome == KeyOutcome::Null) {
      error = make_error("23502", into + ": null value in its key " + r.key, r.config_name);
      return false;
    }
    Constraint& rows = keys(insert.table).own.add();
    rows.kind = ConstraintKind::Rows;
    rows.deferred = key.outcome == KeyOutcome::NeedsBind;
    if (key.outcome == KeyOutcome::Bucket) rows.buckets.push_back(key.bucket);
    return true;
  }
  const std::string fix =
      "; select the key column of a sharded table with the same key type there (its rows then stay "
      "on their shard), or insert with VALUES or COPY, which route each row by its key";
  if (value.kind != parser::ValueKind::Column) {
    return refuse("feeds its key " + r.key + " from an expression (" + item + ")" + fix);
  }
  const parser::ColumnRef& column = insert.select_columns[position];
  std::vector<int> sources = key_refs(column);
  sources.erase(std::remove_if(sources.begin(), sources.end(),
                               [&](int t) { return ref(t).scope != insert.select_scope; }),
                sources.end());
  if (sources.size() != 1) {
    return refuse("feeds its key " + r.key + " from " + value.text + " (" + item + "), " +
                  source_description(column, insert.select_scope) + fix);
  }
  const int source = sources.front();
  const TableRule& s = *rule(source);
  if (!same_hash_family(r.key_type, s.key_type)) {
    return refuse("feeds its key " + r.key + " (" + key_type_name(r.key_type) + ") from the key of " +
                  s.config_name + " (" + key_type_name(s.key_type) +
                  "), which hashes to other buckets, so rows would land on other shards" + fix);
  }
  if (ref(source).nullable) {
    return refuse("feeds its key " + r.key + " from " + s.config_name +
                  " on the nullable side of an outer join" + fix);
  }
  parent_[static_cast<size_t>(find(source))] = find(insert.table);
  edges_.push_back({source, insert.table});
  insert_select_ = &insert;
  insert_target_ = insert.table;
  insert_source_ = source;
  return true;
}

// Why `column` (the SELECT's item feeding the key) is not a sharded source's key column.
std::string DmlRouter::source_description(const parser::ColumnRef& column, int select_scope) const {
  std::vector<int> candidates;
  if (column.table >= 0) {
    candidates.push_back(column.table);
  } else if (!column.qualified) {
    for (size_t t = 0; t < facts_.tables.size(); ++t) {
      if (facts_.tables[t].scope == select_scope && !is_system_table(facts_.tables[t]))
        candidates.push_back(static_cast<int>(t));
    }
  }
  if (candidates.size() == 1) {
    const parser::TableRef& table = ref(candidates.front());
    const TableRule* r = rule(candidates.front());
    if (r != nullptr) return "which is not the key " + r->key + " of sharded table " + r->config_name;
    if (rules_.find_reference(table.schema, table.name) != nullptr) {
      return "a column of reference table " + table_name(table) +
             ", which every shard holds whole: each shard would insert every row, and each row "
             "would need routing by its key";
    }
    return "a column of unsharded table " + table_name(table) +
           ", which lives on the default shard only: each row would need routing by its key";
  }
  return "which is not the key column of one sharded table of the SELECT";
}

// A write on several shards, each inserting the rows it reads: every sharded table joined to
// the source on the key, no unsharded table, and nothing in the SELECT that needs the rows of
// several shards together.
Route DmlRouter::insert_select_route(bool all_pinned) {
  if (all_pinned) {
    std::vector<uint32_t> buckets;
    bool deferred = false;
    for (int t : sharded_) {
      deferred = deferred || keys(t).deferred;
      buckets.insert(buckets.end(), keys(t).buckets.begin(), keys(t).buckets.end());
    }
    if (deferred || shards_of(buckets).size() <= 1) return pinned_route();
  }
  const TableRule& r = *rule(insert_target_);
  const std::string into = "INSERT into sharded table " + r.config_name + " from a SELECT";
  for (int t : sharded_) {
    if (t != insert_target_ && ref(t).role != parser::TableRole::Read) {
      return make_error("0A000",
                        into + " on several shards also writes sharded table " + rule(t)->config_name +
                            " (a CTE); send that write as a statement of its own",
                        r.config_name);
    }
  }
  for (int t : sharded_) {
    if (find(t) != find(insert_target_)) {
      return make_error("0A000", into + " on several shards: " + not_tied_message(t, insert_source_),
                        r.config_name);
    }
  }
  if (!unsharded_.empty()) {
    return make_error(
        "0A000",
        into + " on several shards reads unsharded table " + table_name(ref(unsharded_.front())) +
            ", which lives on the default shard only; add " + key_example(insert_source_) + " on one shard",
        r.config_name);
  }
  if (std::string why = insert_select_blocker(); !why.empty()) {
    return make_error("0A000", into + " on several shards uses " + why + fix_on_one_shard(), r.config_name);
  }
  for (const parser::Assignment& assignment : facts_.assignments) {
    if (assignment.table == insert_target_ && assignment.column == r.key && !keeps_key(assignment)) {
      return make_error("0A000",
                        into + " on several shards: ON CONFLICT DO UPDATE sets its key " + r.key +
                            "; only excluded." + r.key + " (the row's own key) is allowed",
                        r.config_name);
    }
  }
  return insert_select_scatter(all_pinned);
}

// Which part of the statement needs the rows of several shards together; "" when none. The
// SELECT's own block may sort, group, aggregate and use DISTINCT (its rows carry the key, so
// groups and distinct rows are within one bucket); LIMIT, windows and DISTINCT ON may not, nor
// may any other block that reads a sharded table use such features.
std::string DmlRouter::insert_select_blocker() const {
  namespace f = parser::feature;
  const parser::InsertFacts& insert = *insert_select_;
  if (insert.select_distinct_on) return "DISTINCT ON";
  const auto& scopes = facts_.scopes;
  std::vector<bool> sees_sharded(scopes.size(), false);
  for (int t : sharded_) {
    for (int s = ref(t).scope; s >= 0 && !sees_sharded[static_cast<size_t>(s)];
         s = scopes[static_cast<size_t>(s)].parent) {
      sees_sharded[static_cast<size_t>(s)] = true;
    }
  }
  const uint32_t own_allowed = f::kOrderBy | f::kGroupBy | f::kHaving | f::kAggregate | f::kDistinct;
  for (size_t s = 0; s < scopes.size(); ++s) {
    if (!sees_sharded[s]) continue;
    uint32_t blocking = scopes[s].features;
    if (static_cast<int>(s) == insert.select_scope) blocking &= ~own_allowed;
    if ((blocking & f::kLimit) != 0) return "LIMIT/OFFSET";
    if ((blocking & f::kWindow) != 0) return "window functions";
    if ((blocking & f::kSetOp) != 0) return "UNION/INTERSECT/EXCEPT";
    if (blocking != 0) return "ORDER BY, DISTINCT, GROUP BY or aggregates in a subquery or CTE";
  }
  return {};
}

std::string DmlRouter::fix_on_one_shard() const {
  return ", which needs the rows of several shards together; add " + key_example(insert_source_) +
         " on one shard";
}

// The route: the shards that hold the rows read (all when keyless), each running the statement
// with its sharded source tables read through the owned-rows splice.
Route DmlRouter::insert_select_scatter(bool all_pinned) {
  const TableRule& r = *rule(insert_target_);
  Route route;
  route.kind = RouteKind::Scatter;
  route.insert_select = true;
  route.table = r.config_name;
  std::vector<uint32_t> read;  // the buckets read; empty: all
  if (all_pinned) {
    for (int t : sharded_) read.insert(read.end(), keys(t).buckets.begin(), keys(t).buckets.end());
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    route.shards = shards_of(read);
  } else {
    for (size_t s = 0; s < dir_.shards().size(); ++s) route.shards.push_back(static_cast<int>(s));
  }
  for (uint32_t bucket : dir_.migrating()) {
    if (!all_pinned || std::binary_search(read.begin(), read.end(), bucket)) route.buckets.push_back(bucket);
  }
  route.migrating = !route.buckets.empty();
  route.reason = "INSERT ... SELECT from " + rule(insert_source_)->config_name + " by its key " +
                 rule(insert_source_)->key + ": each shard inserts the rows of its own buckets, " +
                 "committed together";
  std::vector<parser::TableSplice> splices = owned_rows_splices(facts_, rules_, dir_.bucket_count());
  splices.erase(std::remove_if(splices.begin(), splices.end(),
                               [&](const parser::TableSplice& s) { return s.table == insert_target_; }),
                splices.end());
  auto sql = parser::splice_tables(facts_, splices);
  if (!sql) {
    return make_error("0A000", "INSERT into sharded table " + r.config_name + ": " + sql.status().message,
                      r.config_name);
  }
  route.shard_sql = std::move(sql.value());
  return route;
}

}  // namespace sw::router::detail
