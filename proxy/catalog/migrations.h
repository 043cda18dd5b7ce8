// The mover's persistent state (shardwire.migrations in the catalog, DESIGN §7): one row per
// migration, written before each step it describes, so a restarted mover resumes from it.
// Blocking libpq on a connection the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/migration.h"
#include "catalog/pq.h"
#include "common/status.h"

namespace sw::catalog {

// Creates a planned migration after checking, in one transaction, that every bucket exists,
// is ACTIVE on `source`, and is in no unfinished migration. Client-fault errors say which bucket.
Result<int64_t> create_migration(PGconn* conn, const std::string& source, const std::string& target,
                                 const std::vector<uint32_t>& buckets);
Result<Migration> get_migration(PGconn* conn, int64_t id);
// Unfinished migrations when `active_only`, else all, by id.
Result<std::vector<Migration>> list_migrations(PGconn* conn, bool active_only);

// Moves to `state` (and sub-step), recording `error` (empty clears it).
Status set_migration_state(PGconn* conn, int64_t id, MigrationState state, const std::string& step = {},
                           const std::string& error = {});
Status set_migration_step(PGconn* conn, int64_t id, const std::string& step);
// A free-form update: "SET <assignments>" with $2.. parameters ($1 is the id).
Status update_migration(PGconn* conn, int64_t id, const std::string& assignments,
                        const std::vector<std::optional<std::string>>& params = {});

// Operator requests from the console; each validates the migration's state and says why not.
Status request_migration(PGconn* conn, int64_t id, MigrationRequest request);

}  // namespace sw::catalog
