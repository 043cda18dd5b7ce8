// The mover's persistent state (shardwire.migrations in the catalog, DESIGN §7): one row per
// migration, written before each step it describes, so a restarted mover resumes from it.
// Blocking libpq on a connection the caller owns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/pq.h"
#include "common/status.h"

namespace sw::catalog {

enum class MigrationState {
  Planned, Copying, CatchingUp, CuttingOver, RollbackWindow, Cleaning,  // active
  Done, Failed, Cancelled, RolledBack,                                   // final
};
constexpr size_t kMigrationStates = 10;
const char* migration_state_name(MigrationState state);  // "planned", "catching_up", ...
Result<MigrationState> parse_migration_state(std::string_view name);
bool is_final(MigrationState state);

struct Migration {
  int64_t id = 0;
  MigrationState state = MigrationState::Planned;
  std::string step;                 // sub-step inside the state (cutover: "fence_source", ...)
  std::string source;
  std::string target;
  std::vector<uint32_t> buckets;
  std::string slot;                 // logical slot on the source (forward stream)
  std::string publication;
  std::optional<std::string> consistent_lsn;  // the slot's consistent point, "16/B374D848"
  int64_t rows_copied = 0, rows_total = 0, bytes_copied = 0;
  int64_t lag_bytes = 0;
  double lag_seconds = 0;
  bool paused = false, cancel_requested = false, rollback_requested = false, expire_requested = false;
  bool rolling_back = false;        // the reverse cutover of ROLLBACK MIGRATION is under way
  int cutover_attempts = 0;
  std::optional<double> last_pause_ms;
  bool retry_due = true;            // retry_at is null or past
  std::optional<std::string> rollback_expires_at;  // timestamptz text
  double rollback_seconds_left = 0; // 0 when no window is open
  std::string reverse_slot;         // logical slot on the target (rollback window)
  std::string reverse_publication;
  std::optional<std::string> reverse_lsn;
  std::string error;
  std::string created_at;
};

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
enum class MigrationRequest { Pause, Resume, Cancel, Rollback, ExpireRollback };
Status request_migration(PGconn* conn, int64_t id, MigrationRequest request);

}  // namespace sw::catalog
