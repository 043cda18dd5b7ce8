#include "twopc/two_phase_plan.h"

#include <set>

#include "twopc/gid.h"

namespace sw::twopc {
namespace {

// Adds a leg to the presumed abort of transaction `gid`, creating it in first-seen order.
void add_presumed(std::vector<PresumedAbort>& presume, const std::string& gid, Resolution leg) {
  for (PresumedAbort& p : presume) {
    if (p.gid != gid) continue;
    p.legs.push_back(std::move(leg));
    return;
  }
  presume.push_back({gid, {std::move(leg)}});
}

bool every_shard_read(const std::vector<ShardPrepared>& shards) {
  for (const ShardPrepared& s : shards)
    if (!s.reachable) return false;
  return true;
}

}  // namespace

RecoveryPlan plan_recovery(const std::vector<ShardPrepared>& shards, const Decisions& decisions,
                           std::chrono::seconds grace, std::chrono::seconds abort_retention) {
  RecoveryPlan plan;
  std::set<std::string> held;
  std::set<std::string> old_undecided;
  // A gid older than the grace on one shard is presumed aborted on every shard that holds it.
  for (const ShardPrepared& s : shards) {
    for (const PreparedXact& x : s.prepared) {
      if (!is_shardwire_gid(x.gid)) continue;
      const std::string gid = transaction_gid(x.gid);
      held.insert(gid);
      if (!decisions.contains(gid) && x.age_s >= static_cast<double>(grace.count()))
        old_undecided.insert(gid);
    }
  }
  for (const ShardPrepared& s : shards) {
    for (const PreparedXact& x : s.prepared) {
      if (!is_shardwire_gid(x.gid)) continue;
      const std::string gid = transaction_gid(x.gid);
      if (auto d = decisions.find(gid); d != decisions.end()) {
        // A fresh decision is its coordinator's to carry out (it is finishing the legs now).
        if (d->second.age_s < static_cast<double>(grace.count())) {
          ++plan.waiting;
          continue;
        }
        plan.resolve.push_back({s.shard, x.gid, d->second.decision});
      } else if (old_undecided.contains(gid)) {
        add_presumed(plan.presume, gid, {s.shard, x.gid, TwoPhaseDecision::Abort});
      } else {
        ++plan.waiting;
      }
    }
  }
  if (!every_shard_read(shards)) return plan;
  for (const auto& [gid, row] : decisions) {
    if (held.contains(gid)) continue;
    if (row.decision == TwoPhaseDecision::Abort && row.age_s < static_cast<double>(abort_retention.count()))
      continue;
    plan.forget.push_back(gid);
  }
  return plan;
}

}  // namespace sw::twopc
