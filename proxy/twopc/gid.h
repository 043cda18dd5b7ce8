// The names of shardwire's two-phase transactions (docs/architecture.md §5.9, §7.8). A
// transaction's gid is shardwire_<instance>_<worker>_<seq> (<instance>: 16 lowercase hex
// characters drawn at each start); the catalog's decision row is keyed by it. A leg may be
// prepared under that gid itself or under leg_gid(gid, leg) -- needed when two shards share a
// PostgreSQL cluster, where a gid is unique cluster-wide. Recovery maps either back with
// transaction_gid() and never touches a gid without kTwoPhaseGidPrefix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sw::twopc {

// Every gid shardwire prepares starts with this; recovery never touches any other gid.
inline constexpr std::string_view kTwoPhaseGidPrefix = "shardwire_";

// A new transaction's gid: shardwire_<instance>_<worker>_<seq>.
std::string two_phase_gid(std::string_view instance, int worker, uint64_t seq);

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

}  // namespace sw::twopc
