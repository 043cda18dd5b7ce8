// Vocabulary shared by the mover's parts: WAL positions, the set of buckets a migration moves,
// and how the mover reaches a shard.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "router/bucket_set.h"

namespace sw::mover {

using Lsn = uint64_t;
// PostgreSQL's text form "16/B374D848".
std::string lsn_text(Lsn lsn);
Result<Lsn> parse_lsn(std::string_view text);

using router::BucketSet;  // the buckets one migration moves

// Every connection the mover opens says so, and the cutover's drain ignores them.
inline constexpr const char* kMoverApplicationName = "shardwire-mover";

// The DSN the mover uses for `shard`: the configured one, with mover.user / mover.password in
// place of the DSN's login when they are set, and application_name=shardwire-mover.
std::string mover_dsn(const config::Config& config, const config::Shard& shard);

}  // namespace sw::mover
