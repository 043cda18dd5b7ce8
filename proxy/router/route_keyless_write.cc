// An UPDATE or DELETE of a sharded table without a key (docs/architecture.md §6.3, "Writes
// without a key"): every shard runs it on the rows of the buckets it owns. The shard's SQL ANDs
// the owned-rows condition (the keyless reads' filter, owned_row_condition) to the WHERE, so the
// copies a bucket move leaves on its target (before cutover) or source (rollback window) are
// neither written nor counted, and the fence trigger never meets them. The session runs the
// shards' parts in one transaction each and commits them together (two-phase commit), or as legs
// of the client's transaction, like a split write; while a bucket is MIGRATING it waits for the
// cutover first, as a keyless read does (between the source's fence and the target's unfence
// neither shard would write the bucket's rows).
#include "router/dml_router.h"

namespace sw::router::detail {

// Why `target`'s UPDATE or DELETE cannot run on every shard's own rows (into `error`); true when
// it can.
bool DmlRouter::every_shard_allowed(int target, Route& error) {
  const TableRule& r = *rule(target);
  const parser::TableRef& written = ref(target);
  const std::string verb = written.role == parser::TableRole::Update ? "UPDATE" : "DELETE";
  const std::string what = verb + " of sharded table " + r.config_name + " without its key";
  auto refuse = [&](const std::string& why) {
    error = make_error("0A000", what + " " + why + ": add " + key_example(target) + " to run it on one shard",
                       r.config_name);
    return false;
  };
  if (!facts_.complete || (facts_.node_type != "UpdateStmt" && facts_.node_type != "DeleteStmt"))
    return refuse("runs on every shard only as a plain UPDATE or DELETE statement");
  for (size_t t = 0; t < facts_.tables.size(); ++t) {
    const parser::TableRole role = facts_.tables[t].role;
    const bool writes = role == parser::TableRole::Update || role == parser::TableRole::Delete ||
                        role == parser::TableRole::Insert || role == parser::TableRole::Merge;
    if (writes && static_cast<int>(t) != target)
      return refuse("cannot run on every shard with another write");
  }
  if (!unsharded_.empty()) {
    return refuse("cannot run on every shard: it reads unsharded table " +
                  table_name(ref(unsharded_.front())) + ", which lives on the default shard only");
  }
  for (int t : sharded_) {
    if (t != target && find(t) != find(target)) {
      error = make_error("0A000", not_tied_message(target, t), r.config_name);
      return false;
    }
  }
  return true;
}

Route DmlRouter::keyless_write(int target) {
  Route error;
  if (!every_shard_allowed(target, error)) return error;
  const TableRule& r = *rule(target);
  for (const parser::Assignment& assignment : facts_.assignments) {
    if (assignment.table == target && assignment.column == r.key && !keeps_key(assignment))
      return key_move(target);
  }
  Route route = every_shard_write(target);
  if (route.kind == RouteKind::Error) return route;
  const std::string verb = ref(target).role == parser::TableRole::Update ? "UPDATE" : "DELETE";
  route.reason = r.config_name + " has no key value: every shard runs the " + verb +
                 " on the rows of its own buckets, committed together (two-phase commit)";
  return route;
}

// The Scatter route of `target`'s UPDATE or DELETE on every shard, each on the rows of its own
// buckets.
Route DmlRouter::every_shard_write(int target) {
  const TableRule& r = *rule(target);
  std::string sql = facts_.text;
  if (rules_.owned_rows_only()) {
    auto restricted =
        parser::restrict_write(facts_, owned_row_condition(r, quoted_reference(target), dir_.bucket_count()));
    if (!restricted) {
      const std::string verb = ref(target).role == parser::TableRole::Update ? "UPDATE" : "DELETE";
      return make_error("0A000",
                        verb + " of sharded table " + r.config_name + " without its key " +
                            restricted.status().message + ": add " + key_example(target) +
                            " to run it on one shard",
                        r.config_name);
    }
    sql = std::move(restricted.value());
  }
  return every_shard_route(target, sql);
}

// A write of `target` on every shard, each running `sql`, committed together.
Route DmlRouter::every_shard_route(int target, const std::string& sql) {
  Route route;
  route.kind = RouteKind::Scatter;
  route.writes = true;
  route.split_write = true;
  route.keyless_write = true;
  route.table = rule(target)->config_name;
  for (size_t s = 0; s < dir_.shards().size(); ++s) {
    route.shards.push_back(static_cast<int>(s));
    route.shard_statements.push_back({static_cast<int>(s), sql, {}});
  }
  route.buckets = dir_.migrating();
  route.migrating = !route.buckets.empty();
  return route;
}

// The written table's alias (or name) as a quoted identifier, for conditions on its columns.
std::string DmlRouter::quoted_reference(int target) const {
  const parser::TableRef& written = ref(target);
  std::string qualifier = "\"";
  for (char c : written.alias.empty() ? written.name : written.alias)
    qualifier += c == '"' ? std::string("\"\"") : std::string(1, c);
  return qualifier + '"';
}

}  // namespace sw::router::detail
