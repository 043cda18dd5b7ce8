// Whether a shard login (its DSN) is a superuser: one connection, one query, then closed.
#pragma once

#include <string>

#include "common/status.h"

namespace sw::catalog {

// `what` names the target in errors ("shard s1"); blocking, bounded by `connect_timeout_s`.
Result<bool> login_is_superuser(const std::string& dsn, const std::string& what, int connect_timeout_s);

}  // namespace sw::catalog
