// What one round of two-phase recovery does (docs/architecture.md §7.8), decided from what the
// round read: the catalog's decisions (read first) and, per shard, the shardwire gids prepared
// there (read after). Pure; the recovery loop (two_phase_recovery.h) performs the plan.
//
//   prepared gid, decision commit              -> COMMIT PREPARED on that shard
//   prepared gid, decision abort               -> ROLLBACK PREPARED on that shard
//     (both only once the decision is as old as the grace period: until then its coordinator
//     is finishing the legs itself, and recovery would only race it)
//   prepared gid, no decision, older than grace -> record abort (presumed abort), then act on the
//                                                  decision that holds (the coordinator's commit
//                                                  may have won the race)
//   prepared gid, no decision, younger         -> left alone (its coordinator is deciding)
//   decision row whose gid no shard holds      -> deleted, when every shard was read this round
//                                                  and, for an abort, it was decided longer ago
//                                                  than the abort retention
// Reading the decisions before the shards makes the deletion safe: a coordinator inserts its
// decision only after every leg prepared, so a decision the round saw belongs to a gid that every
// later shard read would still show until it is resolved. An abort row is kept for the retention
// so that a coordinator stalled between its PREPAREs and its decision insert still finds it
// (and rolls back) instead of inserting a commit for legs recovery already rolled back.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "twopc/decision.h"

namespace sw::twopc {

// The grace period before a gid without a decision is presumed aborted, and before a decided
// gid is finished by recovery instead of its coordinator.
inline constexpr std::chrono::seconds kPresumedAbortGrace{5};
// How long an abort decision row outlives its prepared transactions.
inline constexpr std::chrono::seconds kAbortRetention{600};

struct PreparedXact {
  std::string gid;
  std::string prepared_at;  // timestamptz as text, for the console
  double age_s = 0;         // now() - prepared, on the shard's clock
};

// One shard as the round read it.
struct ShardPrepared {
  std::string shard;
  bool reachable = false;  // false: nothing below is known
  std::vector<PreparedXact> prepared;
};

struct Resolution {
  std::string shard;
  std::string gid;  // as prepared on the shard (a leg gid or the transaction's)
  TwoPhaseDecision decision = TwoPhaseDecision::Abort;
  bool operator==(const Resolution&) const = default;
};

struct PresumedAbort {
  std::string gid;               // the transaction's (the decision row's key)
  std::vector<Resolution> legs;  // where it is prepared (shard, prepared gid), in scan order
  bool operator==(const PresumedAbort&) const = default;
};

struct RecoveryPlan {
  std::vector<Resolution> resolve;     // decided: COMMIT / ROLLBACK PREPARED
  std::vector<PresumedAbort> presume;  // record abort, re-read, then resolve on `shards`
  std::vector<std::string> forget;     // decision rows to delete
  int waiting = 0;                     // (gid, shard) pairs left for their coordinator
};

// The plan for one round. Gids without kTwoPhaseGidPrefix are ignored whatever the input holds.
// Prepared gids are matched to decisions by transaction_gid().
RecoveryPlan plan_recovery(const std::vector<ShardPrepared>& shards, const Decisions& decisions,
                           std::chrono::seconds grace = kPresumedAbortGrace,
                           std::chrono::seconds abort_retention = kAbortRetention);

}  // namespace sw::twopc
