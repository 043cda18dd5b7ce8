// Reference tables (docs/architecture.md §6.4): a full copy on every shard.
//
//  * A read of reference tables only: any shard answers alike; the default shard, or the
//    transaction's shard (Route::any_shard tells the session it may choose).
//  * A read that also names sharded tables routes by them alone (the copy is where they run);
//    with unsharded tables only, the default shard (it has the copy too).
//  * A write of a reference table goes to every shard (AllShards + reference_write), applied
//    atomically by the session. It may read other reference tables only: a sharded or unsharded
//    table would give each shard different rows to write.
#include "router/dml_router.h"

namespace sw::router::detail {
namespace {

bool is_write_role(parser::TableRole role) {
  return role == parser::TableRole::Insert || role == parser::TableRole::Update ||
         role == parser::TableRole::Delete || role == parser::TableRole::Merge;
}

}  // namespace

int DmlRouter::written_reference() const {
  for (int t : references_) {
    if (is_write_role(ref(t).role)) return t;
  }
  return -1;
}

Route DmlRouter::reference_write(int written) const {
  const parser::TableRef& target = ref(written);
  const std::string& name = rules_.find_reference(target.schema, target.name)->config_name;
  const std::string verb = statement_verb(facts_);
  if (!sharded_.empty()) {
    const TableRule& other = *rule(sharded_.front());
    return make_error("0A000",
                      verb + " writes reference table " + name + " and reads sharded table " +
                          other.config_name +
                          ": every shard would write different rows; compute the values first and write "
                          "them as constants",
                      name);
  }
  if (!unsharded_.empty()) {
    return make_error("0A000",
                      verb + " writes reference table " + name + " and reads unsharded table " +
                          table_name(ref(unsharded_.front())) +
                          ", which lives on the default shard only; write constants, or make it a "
                          "reference table too",
                      name);
  }
  Route route;
  route.kind = RouteKind::AllShards;
  route.reference_write = true;
  route.table = name;
  route.reason = "write of reference table " + name + ": every shard, all or none";
  return route;
}

Route DmlRouter::reference_read() const {
  const parser::TableRef& first = ref(references_.front());
  const std::string& name = rules_.find_reference(first.schema, first.name)->config_name;
  Route route = make_default(dir_, rules_,
                             "only reference tables (" + name +
                                 "): any shard has them; the transaction's shard, else the default shard");
  if (route.kind != RouteKind::Default) return route;
  route.any_shard = true;
  route.table = name;
  return route;
}

}  // namespace sw::router::detail
