// Helpers of the split INSERT suites (split_insert, split_insert_transactions): keys, rows on the
// shards checked directly, and what shardwire left prepared.
#pragma once

#include <string>
#include <vector>

#include "harness/sharded_fixture.h"

namespace it::split {

inline std::string k(int64_t key) { return std::to_string(key); }

inline long long rows_everywhere(const ShardedFixture& f) {
  long long total = 0;
  for (int s = 0; s < kShards; ++s) total += static_cast<long long>(f.rows_on(s).size());
  return total;
}

inline long long shardwire_prepared(const ShardedFixture& f) {
  long long n = 0;
  for (int i = 0; i < kShards; ++i) {
    PgConn c = f.setup.shard(i);
    n +=
        std::stoll(c.value("SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'shardwire\\_%' "
                           "AND database = current_database()"));
  }
  return n;
}

// The first two columns ("id|note") of each returned row, in the order the client got them.
inline std::vector<std::string> returned(const PgResult& r) {
  std::vector<std::string> out;
  for (const auto& row : r.data()) out.push_back(row.at(0) + "|" + row.at(1));
  return out;
}

struct Tenants {
  int64_t a = tenant_on(0, kShards);
  int64_t b = tenant_on(1, kShards);
  int64_t c = tenant_on(2, kShards);
  int64_t a2 = tenant_on(0, kShards, a + 1);
  int64_t b2() const { return tenant_on(1, kShards, b + 1); }
};

}  // namespace it::split
