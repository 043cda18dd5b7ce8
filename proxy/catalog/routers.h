// The routers registered in the catalog (shardwire.routers), for the admin console; the row is
// catalog_rows/registered_router.h.
#pragma once

#include <string>
#include <vector>

#include "catalog_rows/registered_router.h"
#include "common/status.h"

namespace sw::catalog {

// Blocking: connects to `dsn`, reads every row, disconnects.
Result<std::vector<catalog_rows::RegisteredRouter>> list_routers(const std::string& dsn);

}  // namespace sw::catalog
