// A two-phase transaction's decision as the catalog stores it (shardwire.transactions, §9.1;
// docs/architecture.md §7.8). Plain data: catalog/two_phase.h reads and writes the rows over
// libpq, two_phase_plan.h decides from them.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sw::twopc {

enum class TwoPhaseDecision { Commit, Abort };

// "commit" / "abort" as stored in shardwire.transactions.decision.
inline const char* decision_name(TwoPhaseDecision decision) {
  return decision == TwoPhaseDecision::Commit ? "commit" : "abort";
}

struct DecisionRow {
  TwoPhaseDecision decision = TwoPhaseDecision::Abort;
  std::vector<std::string> shards;
  std::string decided_at;  // timestamptz as text
  double age_s = 0;        // now() - decided_at, on the catalog's clock
};
using Decisions = std::map<std::string, DecisionRow>;  // by gid

}  // namespace sw::twopc
