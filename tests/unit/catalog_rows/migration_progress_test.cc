#include "catalog_rows/migration_progress.h"

#include <doctest/doctest.h>

using namespace sw::catalog_rows;

namespace {

Migration make(int64_t id, MigrationState state, int buckets, int64_t copied, int64_t total, int64_t bytes,
               double seconds) {
  Migration m;
  m.id = id;
  m.state = state;
  for (int b = 0; b < buckets; ++b) m.buckets.push_back(static_cast<uint32_t>(id * 100 + b));
  m.rows_copied = copied;
  m.rows_total = total;
  m.bytes_copied = bytes;
  m.copy_seconds = seconds;
  return m;
}

}  // namespace

TEST_CASE("a copying migration: the mean rate since its start and the remaining rows at that rate") {
  Progress p = migration_progress(make(1, MigrationState::Copying, 4, 3000, 10000, 300000, 3.0));
  CHECK(p.rows_done == 3000);
  CHECK(p.rows_total == 10000);
  CHECK(p.bytes_done == 300000);
  CHECK(p.bytes_total == 1000000);  // 100 bytes a row so far
  REQUIRE(p.rows_per_sec);
  CHECK(*p.rows_per_sec == doctest::Approx(1000));
  CHECK(*p.bytes_per_sec == doctest::Approx(100000));
  REQUIRE(p.eta_seconds);
  CHECK(*p.eta_seconds == doctest::Approx(7.0));
  CHECK(p.percent() == doctest::Approx(30));
}

TEST_CASE("before the first report nothing is known; past the copy it is done; abandoned has no eta") {
  Progress planned = migration_progress(make(1, MigrationState::Planned, 2, 0, 0, 0, 0));
  CHECK_FALSE(planned.rows_per_sec);
  CHECK_FALSE(planned.eta_seconds);
  Progress started = migration_progress(make(1, MigrationState::Copying, 2, 0, 500, 0, 0));
  CHECK(started.rows_total == 500);
  CHECK_FALSE(started.rows_per_sec);
  CHECK_FALSE(started.eta_seconds);
  for (MigrationState s :
       {MigrationState::CatchingUp, MigrationState::RollbackWindow, MigrationState::Done}) {
    Progress p = migration_progress(make(1, s, 2, 800, 800, 8000, 4.0));
    CHECK(p.rows_done == p.rows_total);
    CHECK(p.percent() == 100);
    REQUIRE(p.eta_seconds);
    CHECK(*p.eta_seconds == 0);
    CHECK(*p.rows_per_sec == doctest::Approx(200));
  }
  Progress failed = migration_progress(make(1, MigrationState::Failed, 2, 100, 800, 1000, 1.0));
  CHECK(failed.rows_done == 100);
  CHECK_FALSE(failed.eta_seconds);
}

TEST_CASE("a rebalance: from the oldest unfinished migration on, planned ones estimated per bucket") {
  std::vector<Migration> all = {
      make(1, MigrationState::Done, 4, 50, 50, 500, 1.0),                   // an earlier rebalance
      make(2, MigrationState::Failed, 4, 10, 99, 100, 1.0),                 // before the oldest unfinished
      make(3, MigrationState::RollbackWindow, 2, 2000, 2000, 200000, 4.0),  // copied: 500 rows/s
      make(4, MigrationState::Copying, 2, 1000, 2000, 100000, 1.0),         // 1000 rows/s
      make(5, MigrationState::Cancelled, 2, 0, 0, 0, 0),                    // abandoned: left out
      make(6, MigrationState::Planned, 4, 0, 0, 0, 0),                      // ~ 4 x 1000 rows
  };
  RebalanceProgress r = rebalance_progress(all);
  CHECK(r.migrations == 3);
  CHECK(r.planned == 1);
  CHECK(r.copying == 1);
  CHECK(r.copied == 1);
  CHECK(r.total.rows_done == 3000);
  CHECK(r.total.rows_total == 8000);  // 2000 + 2000 + 4 buckets x (4000 rows / 4 buckets)
  CHECK(r.total.bytes_done == 300000);
  CHECK(r.total.bytes_total == 800000);
  REQUIRE(r.total.rows_per_sec);
  CHECK(*r.total.rows_per_sec == doctest::Approx(1000));  // only the copying one counts
  REQUIRE(r.total.eta_seconds);
  CHECK(*r.total.eta_seconds == doctest::Approx(5.0));
  CHECK(r.total.percent() == doctest::Approx(37.5));

  // Between copies (one copied, the next planned), the rate is the copied ones' mean.
  all[3].state = MigrationState::CatchingUp;
  r = rebalance_progress(all);
  CHECK(*r.total.rows_per_sec == doctest::Approx(750));
  // Everything finished: no rebalance under way.
  for (auto& m : all)
    if (!is_final(m.state)) m.state = MigrationState::Done;
  r = rebalance_progress(all);
  CHECK(r.migrations == 0);
  CHECK(r.total.rows_total == 0);
  CHECK_FALSE(r.total.eta_seconds);
}
