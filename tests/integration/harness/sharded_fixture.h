// The sharding suites' common fixture: a catalog and 3 shard databases (ShardedSetup), `shardwire
// init`, one proxy, and the sharded table `orders` (bigint key tenant_id) created through the
// proxy -- which applies the CREATE TABLE on every shard and installs the fence trigger there.
// Expected shards come from the router's own bucket hash (sw_router);
// the tests check them against shardwire.bucket_of in SQL on the shards too.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/sharded_cluster.h"
#include "router/bucket_hash.h"

namespace it {

inline constexpr int kShards = 3;
inline constexpr uint32_t kBuckets = 4096;

inline uint32_t bucket_of_key(int64_t key) {
  return sw::router::bucket_of_hash(sw::router::hash_int8(key), kBuckets);
}
// Initial directory: bucket i on shard i mod N.
inline int shard_of_key(int64_t key) { return static_cast<int>(bucket_of_key(key) % kShards); }

// The first key >= from whose bucket satisfies pred(bucket).
template <typename Pred>
int64_t key_where(Pred pred, int64_t from = 1) {
  for (int64_t k = from;; ++k)
    if (pred(bucket_of_key(k))) return k;
}

// n distinct keys, deterministic for a seed: every third one small (0 .. 2^20, like ids), the
// others anywhere in the int8 range; with `extremes`, the first ones are INT64_MIN, INT64_MAX,
// -1, 0, 1 and the int4 limits.
inline std::vector<int64_t> spread_keys(size_t n, uint64_t seed, bool extremes = false) {
  std::vector<int64_t> keys;
  if (extremes) {
    for (int64_t k : {INT64_MIN, INT64_MAX, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{INT32_MIN},
                      int64_t{INT32_MAX}, int64_t{INT32_MAX} + 1})
      if (keys.size() < n) keys.push_back(k);
  }
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  while (keys.size() < n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int64_t k = static_cast<int64_t>(x ^ (x >> 29));
    if (keys.size() % 3 == 0) k = static_cast<int64_t>(x >> 44);
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  return keys;
}

// The options of a deployment in session pooling (pool.mode: session).
inline ShardedOptions session_pooling() {
  ShardedOptions options;
  options.proxy.pool_mode = "session";
  return options;
}

// The options of a deployment under sharding.cross_shard_transactions: refuse.
inline ShardedOptions refusing_cross_shard_transactions() {
  ShardedOptions options;
  options.cross_shard_transactions = "refuse";
  return options;
}

inline const char* const kCreateOrders =
    "CREATE TABLE orders (id bigserial, tenant_id bigint NOT NULL, note text, "
    "qty integer NOT NULL DEFAULT 0, PRIMARY KEY (tenant_id, id))";  // ids come from per-shard sequences

struct ShardedFixture {
  ShardedSetup setup;
  std::unique_ptr<ProxyProcess> proxy;

  explicit ShardedFixture(ShardedOptions options = {}, const PgCluster& cluster = shared_cluster())
      : setup(cluster, std::move(options)) {
    setup.init_or_throw();
    proxy = setup.start_proxy();
    PgConn c = client();
    PgResult r = c.exec(kCreateOrders);
    if (!r.ok())
      throw std::runtime_error("CREATE TABLE orders through shardwire: " + r.describe() +
                               "\n--- proxy log ---\n" + proxy->log_tail());
  }

  PgConn client(const std::string& extra = "sslmode=disable") const {
    ConnectResult r = connect(proxy->conninfo("app", "secret", extra));
    if (!r.ok)
      throw std::runtime_error("connect through shardwire: " + r.error + "\n--- proxy log ---\n" +
                               proxy->log_tail());
    return std::move(r.conn);
  }
  std::string log_tail(size_t lines = 40) const { return proxy->log_tail(lines); }

  // "tenant|note" of every row of orders on shard i, sorted (direct connection).
  std::vector<std::string> rows_on(int shard, const std::string& where = "true") const {
    PgConn c = setup.shard(shard);
    PgResult r = c.exec("SELECT tenant_id::text || '|' || coalesce(note, '') FROM orders WHERE " + where +
                        " ORDER BY 1");
    if (!r.ok()) throw std::runtime_error("rows on shard " + std::to_string(shard) + ": " + r.describe());
    std::vector<std::string> out;
    for (const auto& row : r.data()) out.push_back(row.at(0));
    std::sort(out.begin(), out.end());
    return out;
  }
  // Rows of orders on shard i whose bucket (shardwire.bucket_of in SQL) the initial directory
  // does not give to shard i.
  long long misplaced_on(int shard) const {
    PgConn c = setup.shard(shard);
    return std::stoll(c.value("SELECT count(*) FROM orders WHERE shardwire.bucket_of(tenant_id, " +
                              std::to_string(kBuckets) + ") % " + std::to_string(kShards) + " <> " +
                              std::to_string(shard)));
  }
  // Servers of shard i left idle in a transaction, polled until none is (or 5 s passed): after a
  // transaction ended through shardwire, none may be.
  long long idle_in_transaction(int shard) const {
    PgConn c = setup.shard(shard);
    long long n = 0;
    for (int i = 0; i < 50; ++i) {
      n =
          std::stoll(c.value("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND state LIKE 'idle in transaction%'"));
      if (n == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return n;
  }
};

// The first key >= from that the initial directory over `shards` shards puts on `shard`.
inline int64_t tenant_on(int shard, int shards, int64_t from = 100) {
  return key_where([=](uint32_t b) { return static_cast<int>(b % static_cast<uint32_t>(shards)) == shard; },
                   from);
}

inline std::string row_of(int64_t key, const std::string& note) { return std::to_string(key) + "|" + note; }

}  // namespace it
