// Test-only fault injection: a fault test names one point in the environment, the proxy stops
// dead there. A real crash cannot be timed to land between two steps of a protocol (two-phase
// commit: between two PREPAREs, right after the decision), so the fault suites arm a point:
//
//   SHARDWIRE_FAILPOINT=<name>         the process logs "failpoint <name> fired", then SIGKILLs
//                                      itself (no destructor, no flush: like a crash)
//   SHARDWIRE_FAILPOINT=<name>:stop    it logs the same, then SIGSTOPs itself (a frozen process;
//                                      the test sends SIGCONT or SIGKILL)
//
// Read once, at the first call. Unset (production): hit() is one comparison against an empty
// name. Names in use: 2pc.before_prepare, 2pc.between_prepares, 2pc.after_decision,
// 2pc.between_commit_prepared (session/session_two_phase.cc); mover.<step or state> after each
// step of a migration is recorded (mover/migration_runner.cc, catalog_rows::MigrationStep names).
#pragma once

#include <string_view>

namespace sw::failpoint {

// Arms `spec` (as the environment variable would) instead of reading the environment; for unit
// tests. An empty spec disarms.
void arm(std::string_view spec);
// The point `name` is armed.
bool armed(std::string_view name);
// Reached the point `name`: if it is armed, fires (never returns when it kills).
void hit(std::string_view name);

}  // namespace sw::failpoint
