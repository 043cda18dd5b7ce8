// The shard side of two-phase recovery (docs/architecture.md §7.8): the shardwire gids prepared in
// a shard's database, and finishing one. Blocking libpq, on the recovery thread or the console's
// blocking pool.
#pragma once

#include <string_view>
#include <vector>

#include "catalog/pq_handle.h"
#include "common/status.h"
#include "twopc/two_phase_plan.h"

namespace sw::catalog {

// pg_prepared_xacts rows of this database whose gid starts with kTwoPhaseGidPrefix, oldest first.
Result<std::vector<twopc::PreparedXact>> list_prepared(PGconn* shard);

enum class FinishOutcome {
  Finished,  // this call committed / rolled back the prepared transaction
  Gone,      // no such prepared transaction (42704): someone else finished it first
};

// COMMIT PREPARED or ROLLBACK PREPARED `gid` (quoted as a literal; the commands take no
// parameters). Any other error (55000 while its coordinator is finishing it, a lost connection)
// is returned; the next round retries.
Result<FinishOutcome> finish_prepared(PGconn* shard, std::string_view gid, twopc::TwoPhaseDecision decision);

}  // namespace sw::catalog
