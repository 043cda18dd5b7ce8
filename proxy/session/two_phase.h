// The two-phase commit the session and its runners drive: the driver, its hooks and outcomes,
// and the catalog's answer, all from twopc/ (docs/architecture.md §5.9). The session only
// carries the driver's statements to its servers (session_two_phase.cc).
#pragma once

#include "twopc/two_phase_commit.h"
#include "twopc/two_phase_legs.h"

namespace sw::session {

using twopc::count_two_phase_outcome;
using twopc::Decision;
using twopc::TwoPhaseHooks;
using twopc::TwoPhaseLegs;
using twopc::TwoPhaseOutcome;

}  // namespace sw::session
