#include "catalog_rows/migration.h"

#include <string>

namespace sw::catalog_rows {

Result<MigrationStep> parse_migration_step(std::string_view name) {
  for (size_t i = 0; i < kMigrationSteps; ++i) {
    if (name == kMigrationStepNames[i]) return static_cast<MigrationStep>(i);
  }
  return Status::server("XX000", "unknown migration step \"" + std::string(name) + "\" in the catalog");
}

Result<MigrationState> parse_migration_state(std::string_view name) {
  for (size_t i = 0; i < kMigrationStates; ++i) {
    if (name == kMigrationStateNames[i]) return static_cast<MigrationState>(i);
  }
  return Status::server("XX000", "unknown migration state \"" + std::string(name) + "\" in the catalog");
}

}  // namespace sw::catalog_rows
