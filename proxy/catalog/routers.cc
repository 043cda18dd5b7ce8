#include "catalog/routers.h"

#include <cstdlib>

#include "catalog/pq.h"

namespace sw::catalog {

using catalog_rows::RegisteredRouter;

Result<std::vector<RegisteredRouter>> list_routers(const std::string& dsn) {
  auto conn = connect(dsn, "catalog");
  if (!conn) return conn.status();
  auto result =
      query(conn->get(),
            "SELECT id, host, coalesce(port, 0), coalesce(pid, 0), directory_version, started_at::text, "
            "heartbeat_at::text, extract(epoch FROM now() - heartbeat_at)::float8 "
            "FROM shardwire.routers ORDER BY id",
            {});
  if (!result) return result.status();
  const PGresult* res = result->get();
  std::vector<RegisteredRouter> routers;
  for (int row = 0; row < PQntuples(res); ++row) {
    RegisteredRouter r;
    r.id = text_value(res, row, 0);
    r.host = text_value(res, row, 1);
    r.port = std::atoi(text_value(res, row, 2).c_str());
    r.pid = std::atoi(text_value(res, row, 3).c_str());
    parse_int64(res, row, 4, &r.directory_version);
    r.started_at = text_value(res, row, 5);
    r.heartbeat_at = text_value(res, row, 6);
    r.heartbeat_age_seconds = std::atof(text_value(res, row, 7).c_str());
    routers.push_back(std::move(r));
  }
  return routers;
}

}  // namespace sw::catalog
