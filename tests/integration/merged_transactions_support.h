// Helpers of the merged_transactions suite (and copy_out_transactions): rows seeded on the shards
// directly, raw extended batches (a row limit, a bare Execute), what shardwire left prepared or
// idle in a transaction, and the checks of a failed or refused transaction.
#pragma once

#include <functional>
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

// The client's transaction failed on every shard: a later statement gets 25P02, COMMIT answers
// ROLLBACK, no row noted `note` is on any shard, nothing is left prepared or idle in a transaction.
inline void check_transaction_failed(const ShardedFixture& f, PgConn& client, const std::string& note) {
  CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
  PgResult commit = client.exec("COMMIT");
  REQUIRE_OK(commit);
  CHECK(commit.command_tag() == "ROLLBACK");
  for (int s = 0; s < kShards; ++s) CHECK(f.rows_on(s, "note = '" + note + "'").empty());
  CHECK(prepared_or_idle(f) == 0);
}

// Under sharding.cross_shard_transactions: refuse, inside BEGIN (still deferred, then with a leg
// on tenant a's shard, which holds one row) a statement that needs every shard is refused: `run`
// sends it and returns its SQLSTATE and error message, which must be 0A000 naming the setting; the
// transaction fails (25P02, COMMIT answers ROLLBACK), nothing is left prepared or idle.
inline void check_refused_in_transaction(const ShardedFixture& f, PgConn& client, const Tenants& t,
                                         const std::function<std::pair<std::string, std::string>()>& run) {
  for (bool attached : {false, true}) {
    INFO("attached " << attached);
    REQUIRE_OK(client.exec("BEGIN"));
    if (attached) CHECK(client.value("SELECT count(*) FROM orders WHERE tenant_id = " + k(t.a)) == "1");
    const std::pair<std::string, std::string> refused = run();
    CHECK(refused.first == "0A000");
    CHECK(contains(refused.second, "sharding.cross_shard_transactions"));
    CHECK(client.exec("SELECT 1").sqlstate() == "25P02");
    CHECK(client.exec("COMMIT").command_tag() == "ROLLBACK");
  }
  CHECK(prepared_or_idle(f) == 0);
}

}  // namespace it::merged_txn
