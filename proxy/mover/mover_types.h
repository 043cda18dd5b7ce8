// Vocabulary shared by the mover's parts: WAL positions, the set of buckets a migration moves,
// and how the mover reaches a shard.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/config.h"

namespace sw::mover {

using Lsn = uint64_t;
// PostgreSQL's text form "16/B374D848".
std::string lsn_text(Lsn lsn);
Result<Lsn> parse_lsn(std::string_view text);

// The buckets one migration moves: a sorted list plus O(1) membership.
class BucketSet {
 public:
  BucketSet() = default;
  // Duplicates are dropped; buckets >= bucket_count are a caller bug (dropped too).
  BucketSet(uint32_t bucket_count, const std::vector<uint32_t>& buckets);
  bool contains(uint32_t bucket) const { return bucket < member_.size() && member_[bucket]; }
  const std::vector<uint32_t>& list() const { return list_; }
  uint32_t bucket_count() const { return static_cast<uint32_t>(member_.size()); }
  bool empty() const { return list_.empty(); }
  // An SQL array literal for an integer[] parameter: "{1,5,9}".
  std::string array_literal() const;

 private:
  std::vector<uint32_t> list_;
  std::vector<bool> member_;
};

// Every connection the mover opens says so, and the cutover's drain ignores them.
inline constexpr const char* kMoverApplicationName = "shardwire-mover";

// The DSN the mover uses for `shard`: the configured one, with mover.user / mover.password in
// place of the DSN's login when they are set, and application_name=shardwire-mover.
std::string mover_dsn(const config::Config& config, const config::Shard& shard);

}  // namespace sw::mover
