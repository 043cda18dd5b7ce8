#include "metrics/readings.h"

namespace sw::metrics {

std::string_view bucket_state_name(BucketState state) {
  switch (state) {
    case BucketState::Active: return "active";
    case BucketState::Migrating: return "migrating";
  }
  return "?";
}

std::string_view migration_state_name(MigrationState state) {
  switch (state) {
    case MigrationState::Planned: return "planned";
    case MigrationState::Copying: return "copying";
    case MigrationState::CatchingUp: return "catching_up";
    case MigrationState::CuttingOver: return "cutting_over";
    case MigrationState::RollbackWindow: return "rollback_window";
    case MigrationState::Cleaning: return "cleaning";
    case MigrationState::Done: return "done";
    case MigrationState::Failed: return "failed";
    case MigrationState::Cancelled: return "cancelled";
    case MigrationState::RolledBack: return "rolled_back";
  }
  return "?";
}

}  // namespace sw::metrics
