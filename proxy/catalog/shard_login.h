// What shardwire checks about a shard login at start (its DSN): whether it is a superuser, and the
// shard's max_prepared_transactions. One connection, one query, then closed.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace sw::catalog {

struct ShardLoginFacts {
  bool superuser = false;
  int64_t max_prepared_transactions = 0;
};

// `what` names the target in errors ("shard s1"); blocking, bounded by `connect_timeout_s`.
Result<ShardLoginFacts> check_shard_login(const std::string& dsn, const std::string& what,
                                          int connect_timeout_s);

// What to do about a shard whose max_prepared_transactions is `value`: writes that span shards
// commit with two-phase commit, which needs it above 0. Empty when it is above 0.
std::string prepared_transactions_advice(const std::string& shard_name, int64_t value);

}  // namespace sw::catalog
