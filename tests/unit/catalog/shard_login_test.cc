// The advice shardwire gives (init report, start-up log) about a shard's max_prepared_transactions.
#include <doctest/doctest.h>

#include <string>

#include "catalog/shard_login.h"

using sw::catalog::prepared_transactions_advice;

TEST_CASE("max_prepared_transactions 0: say what needs it and how to set it; above 0: nothing") {
  const std::string advice = prepared_transactions_advice("s2", 0);
  CHECK(advice.find("shard s2: max_prepared_transactions is 0") == 0);
  CHECK(advice.find("two-phase commit") != std::string::npos);
  CHECK(advice.find("fail") != std::string::npos);
  CHECK(advice.find("ALTER SYSTEM SET max_prepared_transactions = 100") != std::string::npos);
  CHECK(advice.find("restart") != std::string::npos);
  CHECK(prepared_transactions_advice("s2", 1).empty());
  CHECK(prepared_transactions_advice("s2", 10).empty());
}
