// Two-phase commit decisions in the catalog (docs/architecture.md §7.8). A cross-shard write's
// coordinator records `commit` once every written leg answered PREPARE TRANSACTION; recovery
// records `abort` for a shardwire gid left prepared past its grace period without a decision
// (presumed abort). Both inserts use ON CONFLICT (gid) DO NOTHING, so the first decision wins and
// is final. Blocking libpq: never call on a worker's event loop without meaning to block it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/pq_handle.h"
#include "common/status.h"
#include "twopc/decision.h"

namespace sw::catalog {

// INSERT INTO shardwire.transactions (gid, shards, decision) VALUES ($1, $2, 'commit')
// ON CONFLICT (gid) DO NOTHING. true: this call decided commit; false: a decision already existed
// for `gid` (recovery decided abort first; the coordinator never records twice). An error (the
// catalog unreachable, the table missing) leaves the outcome unknown to the caller: the legs stay
// prepared for recovery. `shards` are the written legs' shard names.
Result<bool> record_commit_decision(PGconn* catalog, std::string_view gid,
                                    const std::vector<std::string>& shards);

// Recovery's presumed abort: the same insert with 'abort', then the decision that holds for `gid`
// (the coordinator's commit when it won the race).
Result<twopc::TwoPhaseDecision> record_abort_decision(PGconn* catalog, std::string_view gid,
                                                      const std::vector<std::string>& shards);

// Every row of shardwire.transactions (one statement, one snapshot).
Result<twopc::Decisions> load_decisions(PGconn* catalog);

// Deletes the decision row of `gid` (recovery's cleanup once no shard holds it).
Status forget_decision(PGconn* catalog, std::string_view gid);

// Parses a text[] in PostgreSQL's output form ({a,"b c","d\"e"}); NULL elements become "".
std::vector<std::string> parse_text_array(std::string_view text);

}  // namespace sw::catalog
