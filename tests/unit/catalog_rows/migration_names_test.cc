// The migration catalog's typed names: every state and step has one name in the catalog, parsed
// back to the same enum; unknown names are a server-fault error, never a silent default.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "catalog_rows/migration.h"

using namespace sw::catalog_rows;

TEST_CASE("every migration state round-trips through its catalog name") {
  std::set<std::string> seen;
  for (size_t i = 0; i < kMigrationStates; ++i) {
    auto state = static_cast<MigrationState>(i);
    const std::string name = migration_state_name(state);
    CHECK(seen.insert(name).second);
    auto parsed = parse_migration_state(name);
    REQUIRE(parsed);
    CHECK(*parsed == state);
  }
  CHECK(std::string(migration_state_name(MigrationState::RollbackWindow)) == "rollback_window");
  CHECK_FALSE(parse_migration_state("catching-up"));
}

TEST_CASE("every migration step round-trips; the names SHOW MIGRATIONS and the mover's failpoints use") {
  std::set<std::string> seen;
  for (size_t i = 0; i < kMigrationSteps; ++i) {
    auto step = static_cast<MigrationStep>(i);
    const std::string name = migration_step_name(step);
    CHECK(seen.insert(name).second);
    auto parsed = parse_migration_step(name);
    REQUIRE(parsed);
    CHECK(*parsed == step);
  }
  CHECK(std::string(migration_step_name(MigrationStep::None)).empty());
  CHECK(std::string(migration_step_name(MigrationStep::PublishMigrating)) == "publish_migrating");
  CHECK(std::string(migration_step_name(MigrationStep::FenceSource)) == "fence_source");
  CHECK(std::string(migration_step_name(MigrationStep::DeleteSourceRows)) == "delete_source_rows");
  auto unknown = parse_migration_step("fence");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.status().sqlstate == "XX000");
}
