#include "catalog/shard_login.h"

#include "catalog/pq.h"

namespace sw::catalog {

Result<ShardLoginFacts> check_shard_login(const std::string& dsn, const std::string& what,
                                          int connect_timeout_s) {
  ConnectOptions options;
  options.application_name = "shardwire login check";
  options.connect_timeout_s = connect_timeout_s;
  auto conn = connect(dsn, what, options);
  if (!conn) return conn.status();
  auto result = query(conn->get(),
                      "SELECT r.rolsuper, current_setting('max_prepared_transactions') "
                      "FROM pg_catalog.pg_roles r WHERE r.rolname = current_user");
  if (!result) return result.status();
  ShardLoginFacts facts;
  facts.superuser = text_value(result->get(), 0, 0) == "t";
  parse_int64(result->get(), 0, 1, &facts.max_prepared_transactions);
  return facts;
}

std::string prepared_transactions_advice(const std::string& shard_name, int64_t value) {
  if (value > 0) return "";
  return "shard " + shard_name + ": max_prepared_transactions is " + std::to_string(value) +
         "; transactions that write on several shards will commit with two-phase commit, which needs "
         "it above 0, so those that write on this shard fail until it is: set it on that PostgreSQL (e.g. "
         "ALTER SYSTEM SET max_prepared_transactions = 100, "
         "at least the number of server connections shardwire opens to it) and restart it";
}

}  // namespace sw::catalog
