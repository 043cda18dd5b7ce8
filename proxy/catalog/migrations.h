// The mover's persistent state (shardwire.migrations in the catalog, docs/architecture.md §8, §9.1): one row
// per migration, written before each step it describes, so a restarted mover resumes from it. Blocking libpq
// on a connection the caller owns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/pq.h"
#include "catalog_rows/migration.h"
#include "common/status.h"

namespace sw::catalog {

// The row and its names are plain data in catalog_rows; these functions read and write it.
using catalog_rows::Migration;
using catalog_rows::MigrationRequest;
using catalog_rows::MigrationState;
using catalog_rows::MigrationStep;

// Creates a planned migration after checking, in one transaction, that every bucket exists,
// is ACTIVE on `source`, and is in no unfinished migration. Client-fault errors say which bucket.
Result<int64_t> create_migration(PGconn* conn, const std::string& source, const std::string& target,
                                 const std::vector<uint32_t>& buckets);
Result<Migration> get_migration(PGconn* conn, int64_t id);
// Unfinished migrations when `active_only`, else all, by id.
Result<std::vector<Migration>> list_migrations(PGconn* conn, bool active_only);

// ---- Transitions: one function per change the mover makes to a migration's row ---------------
// Each is one UPDATE (updated_at = now()); the SQL lives in migrations.cc only.

// Moves to `state` at `step` and clears the error (a state reached is progress).
Status mark_state(PGconn* conn, int64_t id, MigrationState state, MigrationStep step = MigrationStep::None);
Status record_step(PGconn* conn, int64_t id, MigrationStep step);
// The last error of the migration's current step (SHOW MIGRATIONS' `error`); errors only.
Status record_error(PGconn* conn, int64_t id, const std::string& error);
Status clear_error(PGconn* conn, int64_t id);

// The copy begins: its slot, publication and consistent point, progress reset.
struct CopyStart {
  std::string slot, publication, consistent_lsn;  // lsn as text, "16/B374D848"
  int64_t rows_total = 0;                         // an estimate until record_rows_total
};
Status record_copy_start(PGconn* conn, int64_t id, const CopyStart& start);
// Progress of the copy; the result says whether PAUSE or CANCEL MIGRATION was asked meanwhile.
Result<bool> record_copy_progress(PGconn* conn, int64_t id, int64_t rows, int64_t bytes);
Status record_rows_total(PGconn* conn, int64_t id, int64_t rows);
// The rollback window's slot and publication on the target (both named `name`).
Status record_reverse_slot(PGconn* conn, int64_t id, const std::string& name);
Status record_lag(PGconn* conn, int64_t id, uint64_t lag_bytes, double lag_seconds);

// Cutover (`reverse`: the cutover back of ROLLBACK MIGRATION).
// False (nothing changed) for a cutover back whose ROLLBACK MIGRATION was withdrawn meanwhile by
// EXPIRE ROLLBACK.
Result<bool> begin_cutover(PGconn* conn, int64_t id, bool reverse);
Status record_reverse_position(PGconn* conn, int64_t id, const std::string& lsn);
// An undone cutover: back to catching_up (rollback_window when `reverse`), the reason as the
// error, a retry after a backoff that grows with the attempts (at most 30 s).
Status abort_cutover(PGconn* conn, int64_t id, bool reverse, const std::string& why);
// A cutover a crashed runner left before its flip, undone: back where it came from.
Status undo_interrupted_cutover(PGconn* conn, int64_t id, bool reverse);
// The flip's own row change, inside the caller's catalog transaction: forward -> rollback_window
// (closing in `rollback_window_ms`), reverse -> cleaning with rolling_back.
Status record_flip(PGconn* conn, int64_t id, bool reverse, double pause_ms, int64_t rollback_window_ms);

// After the flip.
// -> cleaning, delete_source_rows (why the window closed is logged, not an error).
Status close_rollback_window(PGconn* conn, int64_t id);
Status mark_rolled_back(PGconn* conn, int64_t id);

// Operator requests from the console; each validates the migration's state and says why not.
Status request_migration(PGconn* conn, int64_t id, MigrationRequest request);

}  // namespace sw::catalog
