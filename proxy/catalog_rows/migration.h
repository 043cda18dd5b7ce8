// A migration as the catalog records it (shardwire.migrations, docs/architecture.md §8.2, §9.1): plain data,
// shared by the mover, the console and the metrics. The catalog I/O is in catalog/migrations.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::catalog_rows {

enum class MigrationState {
  Planned,
  Copying,
  CatchingUp,
  CuttingOver,
  RollbackWindow,
  Cleaning,  // active
  Done,
  Failed,
  Cancelled,
  RolledBack,  // final
};
constexpr size_t kMigrationStates = 10;
inline constexpr std::array<const char*, kMigrationStates> kMigrationStateNames = {
    "planned",  "copying", "catching_up", "cutting_over", "rollback_window",
    "cleaning", "done",    "failed",      "cancelled",    "rolled_back"};
inline const char* migration_state_name(MigrationState state) {
  return kMigrationStateNames[static_cast<size_t>(state)];
}
inline bool is_final(MigrationState state) { return state >= MigrationState::Done; }
Result<MigrationState> parse_migration_state(std::string_view name);

// The sub-step inside a state, recorded before it is taken (SHOW MIGRATIONS' `step` column and
// the mover's failpoints `mover.<name>` use these names).
enum class MigrationStep {
  None,              // ""
  Copy,              // copying: the bulk copy
  CatchUp,           // catching_up: streaming; cutting_over: the final catch-up behind the fence
  Paused,            // PAUSE MIGRATION holds it
  PublishMigrating,  // cutover: MIGRATING published, waiting for the routers
  FenceSource,
  Drain,
  Verify,
  ReversePosition,  // cutover: where the rollback window's stream starts
  UnfenceTarget,
  Flipped,
  DeleteSourceRows,  // cleaning after the rollback window
};
constexpr size_t kMigrationSteps = 12;
inline constexpr std::array<const char*, kMigrationSteps> kMigrationStepNames = {
    "",      "copy",   "catch_up",         "paused",         "publish_migrating", "fence_source",
    "drain", "verify", "reverse_position", "unfence_target", "flipped",           "delete_source_rows"};
static_assert(static_cast<size_t>(MigrationStep::DeleteSourceRows) + 1 == kMigrationSteps);
inline const char* migration_step_name(MigrationStep step) {
  return kMigrationStepNames[static_cast<size_t>(step)];
}
Result<MigrationStep> parse_migration_step(std::string_view name);

struct Migration {
  int64_t id = 0;
  MigrationState state = MigrationState::Planned;
  MigrationStep step = MigrationStep::None;
  std::string source;
  std::string target;
  std::vector<uint32_t> buckets;
  std::string slot;  // logical slot on the source (forward stream)
  std::string publication;
  std::optional<std::string> consistent_lsn;  // the slot's consistent point, "16/B374D848"
  int64_t rows_copied = 0, rows_total = 0, bytes_copied = 0;
  double copy_seconds = 0;  // from the copy's start to its last progress report (migration_progress.h)
  int64_t lag_bytes = 0;
  double lag_seconds = 0;
  bool paused = false, cancel_requested = false, rollback_requested = false, expire_requested = false;
  bool rolling_back = false;  // the reverse cutover of ROLLBACK MIGRATION is under way
  int cutover_attempts = 0;
  std::optional<double> last_pause_ms;
  bool retry_due = true;                           // retry_at is null or past
  std::optional<std::string> rollback_expires_at;  // timestamptz text
  double rollback_seconds_left = 0;                // 0 when no window is open
  std::string reverse_slot;                        // logical slot on the target (rollback window)
  std::string reverse_publication;
  std::optional<std::string> reverse_lsn;
  std::string error;
  std::string created_at;
};

// Whether the migration holds one of a mover's mover.max_concurrent slots: it is copying,
// streaming towards or in a cutover (forward, or back for ROLLBACK MIGRATION). A rollback window
// (its reverse stream) and the cleanup after it do not: they never wait for a slot, so a
// REBALANCE is not held up for a whole window.
inline bool holds_mover_slot(const Migration& m) {
  return (m.state >= MigrationState::Copying && m.state <= MigrationState::CuttingOver);
}

// Operator requests from the console (PAUSE/RESUME/CANCEL/ROLLBACK MIGRATION, EXPIRE ROLLBACK).
enum class MigrationRequest { Pause, Resume, Cancel, Rollback, ExpireRollback };

}  // namespace sw::catalog_rows
