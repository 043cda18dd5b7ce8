// The routers registered in the catalog (shardwire.routers), for the admin console.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace sw::catalog {

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

// Blocking: connects to `dsn`, reads every row, disconnects.
Result<std::vector<RegisteredRouter>> list_routers(const std::string& dsn);

}  // namespace sw::catalog
