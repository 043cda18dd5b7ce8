#include "catalog/shard_login.h"

#include "catalog/pq.h"

namespace sw::catalog {

Result<bool> login_is_superuser(const std::string& dsn, const std::string& what, int connect_timeout_s) {
  ConnectOptions options;
  options.application_name = "shardwire login check";
  options.connect_timeout_s = connect_timeout_s;
  auto conn = connect(dsn, what, options);
  if (!conn) return conn.status();
  auto result = query(conn->get(), "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user");
  if (!result) return result.status();
  return text_value(result->get(), 0, 0) == "t";
}

}  // namespace sw::catalog
