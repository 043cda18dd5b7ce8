// Helpers of the merged_transactions suite: rows seeded on the shards directly, raw extended
// batches (a row limit, a bare Execute), and what shardwire left prepared or idle in a transaction.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/sharded_fixture.h"
#include "it_test.h"
#include "split_insert_support.h"

namespace it::merged_txn {

using split::k;
using split::shardwire_prepared;
using split::Tenants;

// Rows of orders on every shard: `per_shard` rows of each tenant of `t`, id 1.., note 'base'.
inline void seed(const ShardedFixture& f, const Tenants& t, int per_shard) {
  const int64_t tenants[] = {t.a, t.b, t.c};
  for (int s = 0; s < kShards; ++s) {
    PgConn shard = f.setup.shard(s);
    REQUIRE_OK(shard.exec("INSERT INTO orders (tenant_id, id, note, qty) SELECT " + k(tenants[s]) +
                          ", g, 'base', g FROM generate_series(1, " + std::to_string(per_shard) + ") g"));
  }
}

// `batch` written on the connection's own socket (libpq sends no row limit, no bare Execute); the
// answer's messages up to ReadyForQuery.
inline std::vector<wire::Message> raw_batch(PgConn& conn, const std::string& batch) {
  RawSocket socket = RawSocket::borrow(PQsocket(conn.get()));
  std::vector<wire::Message> out;
  if (!socket.send_all(batch)) return out;
  std::string pending;
  while (out.empty() || out.back().type != 'Z') {
    const std::string got = socket.read_some(10s);
    if (got.empty()) break;
    pending += got;
    for (wire::Message& m : wire::parse_messages(pending, &pending)) out.push_back(std::move(m));
  }
  return out;
}

inline std::string kinds(const std::vector<wire::Message>& messages) {
  std::string out;
  for (const wire::Message& m : messages) out.push_back(m.type);
  return out;
}

// Gids shardwire left prepared and servers left idle in a transaction, on every shard.
inline long long prepared_or_idle(const ShardedFixture& f) {
  long long n = shardwire_prepared(f);
  for (int s = 0; s < kShards; ++s) n += f.idle_in_transaction(s);
  return n;
}

}  // namespace it::merged_txn
