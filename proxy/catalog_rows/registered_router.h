// A proxy registered in the catalog (shardwire.routers, docs/architecture.md §7): plain data, what
// SHOW ROUTERS lists. catalog/routers.h reads the rows.
#pragma once

#include <cstdint>
#include <string>

namespace sw::catalog_rows {

struct RegisteredRouter {
  std::string id;
  std::string host;
  int port = 0;
  int pid = 0;
  int64_t directory_version = 0;
  std::string started_at;  // timestamptz text
  std::string heartbeat_at;
  double heartbeat_age_seconds = 0;
};

}  // namespace sw::catalog_rows
