// Two-phase commit decisions in the catalog (docs/architecture.md §7.8). A cross-shard write's
// coordinator records `commit` once every written leg answered PREPARE TRANSACTION; recovery
// records `abort` for a shardwire gid left prepared past its grace period without a decision
// (presumed abort). Both inserts use ON CONFLICT (gid) DO NOTHING, so the first decision wins and
// is final. Blocking libpq: never call on a worker's event loop without meaning to block it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/pq_handle.h"
#include "common/status.h"

namespace sw::catalog {

// Every gid shardwire prepares starts with this; recovery never touches any other gid.
// A transaction's gid: shardwire_<instance>_<worker>_<seq> (<instance>: 16 lowercase hex chars);
// the decision row is keyed by it. A leg may be prepared under that gid itself, or under
// leg_gid(gid, leg) -- needed when two shards share a PostgreSQL cluster, where a gid is unique
// cluster-wide. Recovery maps either back with transaction_gid().
inline constexpr std::string_view kTwoPhaseGidPrefix = "shardwire_";

enum class TwoPhaseDecision { Commit, Abort };

// "commit" / "abort" as stored in shardwire.transactions.decision.
const char* decision_name(TwoPhaseDecision decision);

// True when `gid` starts with kTwoPhaseGidPrefix.
bool is_shardwire_gid(std::string_view gid);

// The gid a transaction's leg number `leg` (0-based) is prepared under: <gid>_<leg>.
std::string leg_gid(std::string_view gid, size_t leg);

// The transaction gid of a prepared shardwire gid: the first four '_'-separated parts
// (shardwire_<instance>_<worker>_<seq>) of a leg gid, or `prepared_gid` itself when it has no
// more parts (or is not of that form).
std::string transaction_gid(std::string_view prepared_gid);

// The <instance> part of a shardwire gid (the text between the prefix and the next '_'), or ""
// when `gid` is not of the form shardwire_<instance>_<worker>_<seq>.
std::string gid_instance(std::string_view gid);

// INSERT INTO shardwire.transactions (gid, shards, decision) VALUES ($1, $2, 'commit')
// ON CONFLICT (gid) DO NOTHING. true: this call decided commit; false: a decision already existed
// for `gid` (recovery decided abort first; the coordinator never records twice). An error (the
// catalog unreachable, the table missing) leaves the outcome unknown to the caller: the legs stay
// prepared for recovery. `shards` are the written legs' shard names.
Result<bool> record_commit_decision(PGconn* catalog, std::string_view gid,
                                    const std::vector<std::string>& shards);

// Recovery's presumed abort: the same insert with 'abort', then the decision that holds for `gid`
// (the coordinator's commit when it won the race).
Result<TwoPhaseDecision> record_abort_decision(PGconn* catalog, std::string_view gid,
                                               const std::vector<std::string>& shards);

struct DecisionRow {
  TwoPhaseDecision decision = TwoPhaseDecision::Abort;
  std::vector<std::string> shards;
  std::string decided_at;  // timestamptz as text
  double age_s = 0;        // now() - decided_at, on the catalog's clock
};
using Decisions = std::map<std::string, DecisionRow>;  // by gid

// Every row of shardwire.transactions (one statement, one snapshot).
Result<Decisions> load_decisions(PGconn* catalog);

// Deletes the decision row of `gid` (recovery's cleanup once no shard holds it).
Status forget_decision(PGconn* catalog, std::string_view gid);

// Parses a text[] in PostgreSQL's output form ({a,"b c","d\"e"}); NULL elements become "".
std::vector<std::string> parse_text_array(std::string_view text);

}  // namespace sw::catalog
