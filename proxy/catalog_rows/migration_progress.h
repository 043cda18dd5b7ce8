// How far a migration's copy is and when it should end, and the same for a whole rebalance: what
// SHOW MIGRATIONS, SHOW REBALANCE and the shardwire_rebalance_* metrics report
// (docs/architecture.md §9.1). Plain arithmetic over the catalog's rows; no I/O.
//
// The copy is the part of a move that scales with the data; catch-up and cutover take seconds
// after it. So "done" means copied, the rate is the copy's mean since it started (rows and bytes
// per second), and the estimated time to finish is the copy's remaining rows at that rate.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "catalog_rows/migration.h"

namespace sw::catalog_rows {

struct Progress {
  int64_t rows_done = 0, rows_total = 0;
  int64_t bytes_done = 0, bytes_total = 0;            // bytes_total: the copied rows' mean size x rows_total
  std::optional<double> rows_per_sec, bytes_per_sec;  // none before the copy's first report
  std::optional<double> eta_seconds;                  // 0 once copied; none while the rate is unknown
  double percent() const;                             // rows_done of rows_total, 0..100
};

// One migration. Planned: nothing done, totals unknown (0). Copying: as reported. Past the copy
// (catching up, cutting over, rollback window, cleaning, done): done = total, eta 0. Failed,
// cancelled or rolled back: what was copied, no eta.
Progress migration_progress(const Migration& m);

// The rebalance under way: the migrations from the oldest unfinished one on (by id, the order a
// REBALANCE creates them), except failed, cancelled and rolled back ones; none when every
// migration has finished. A planned migration's rows and bytes are estimated from the rows and
// bytes per bucket of those whose copy started. The rate is the sum of the copying migrations'
// rates (or, between copies, their mean); the eta is the remaining rows at that rate.
struct RebalanceProgress {
  int migrations = 0, planned = 0, copying = 0, copied = 0;  // copied: past the copy
  Progress total;
};
RebalanceProgress rebalance_progress(const std::vector<Migration>& all);

}  // namespace sw::catalog_rows
