#include "catalog_rows/migration_progress.h"

#include <algorithm>
#include <cmath>

namespace sw::catalog_rows {
namespace {

bool past_copy(MigrationState state) {
  return state >= MigrationState::CatchingUp && state <= MigrationState::Done;
}

bool abandoned(MigrationState state) {
  return state == MigrationState::Failed || state == MigrationState::Cancelled ||
         state == MigrationState::RolledBack;
}

int64_t scaled(int64_t value, int64_t numerator, int64_t denominator) {
  if (denominator <= 0) return 0;
  return static_cast<int64_t>(std::llround(static_cast<double>(value) * static_cast<double>(numerator) /
                                           static_cast<double>(denominator)));
}

}  // namespace

double Progress::percent() const {
  if (rows_total <= 0) return 0;
  return std::min(100.0, 100.0 * static_cast<double>(rows_done) / static_cast<double>(rows_total));
}

Progress migration_progress(const Migration& m) {
  Progress p;
  if (m.state == MigrationState::Planned) return p;
  p.rows_done = m.rows_copied;
  p.rows_total = std::max(m.rows_total, m.rows_copied);
  p.bytes_done = m.bytes_copied;
  p.bytes_total = p.rows_done > 0 ? scaled(m.bytes_copied, p.rows_total, p.rows_done) : 0;
  if (m.copy_seconds > 0 && m.rows_copied > 0) {
    p.rows_per_sec = static_cast<double>(m.rows_copied) / m.copy_seconds;
    p.bytes_per_sec = static_cast<double>(m.bytes_copied) / m.copy_seconds;
  }
  if (past_copy(m.state)) {
    p.rows_total = p.rows_done;
    p.bytes_total = p.bytes_done;
    p.eta_seconds = 0.0;
  } else if (!abandoned(m.state) && p.rows_per_sec) {
    p.eta_seconds = static_cast<double>(p.rows_total - p.rows_done) / *p.rows_per_sec;
  }
  return p;
}

RebalanceProgress rebalance_progress(const std::vector<Migration>& all) {
  RebalanceProgress out;
  int64_t first = 0;
  for (const auto& m : all)
    if (!is_final(m.state) && (first == 0 || m.id < first)) first = m.id;
  if (first == 0) return out;

  std::vector<const Migration*> set;
  for (const auto& m : all)
    if (m.id >= first && !abandoned(m.state)) set.push_back(&m);
  // Rows and bytes per bucket of the migrations whose copy started: the planned ones' estimate.
  int64_t known_rows = 0, known_bytes = 0, known_buckets = 0, planned_buckets = 0;
  double copying_rate = 0, copying_bytes_rate = 0, rate_sum = 0, bytes_rate_sum = 0;
  int rates = 0;
  Progress& t = out.total;
  for (const Migration* m : set) {
    ++out.migrations;
    const auto buckets = static_cast<int64_t>(m->buckets.size());
    if (m->state == MigrationState::Planned) {
      ++out.planned;
      planned_buckets += buckets;
      continue;
    }
    Progress p = migration_progress(*m);
    if (m->state == MigrationState::Copying) ++out.copying;
    if (past_copy(m->state)) ++out.copied;
    t.rows_done += p.rows_done;
    t.rows_total += p.rows_total;
    t.bytes_done += p.bytes_done;
    t.bytes_total += p.bytes_total;
    known_rows += p.rows_total;
    known_bytes += p.bytes_total;
    known_buckets += buckets;
    if (p.rows_per_sec) {
      if (m->state == MigrationState::Copying) {
        copying_rate += *p.rows_per_sec;
        copying_bytes_rate += *p.bytes_per_sec;
      }
      rate_sum += *p.rows_per_sec;
      bytes_rate_sum += *p.bytes_per_sec;
      ++rates;
    }
  }
  t.rows_total += scaled(known_rows, planned_buckets, known_buckets);
  t.bytes_total += scaled(known_bytes, planned_buckets, known_buckets);
  if (copying_rate > 0) {
    t.rows_per_sec = copying_rate;
    t.bytes_per_sec = copying_bytes_rate;
  } else if (rates > 0) {
    t.rows_per_sec = rate_sum / rates;
    t.bytes_per_sec = bytes_rate_sum / rates;
  }
  const int64_t remaining = t.rows_total - t.rows_done;
  if (out.planned == 0 && out.copying == 0)
    t.eta_seconds = 0.0;
  else if (t.rows_per_sec && *t.rows_per_sec > 0)
    t.eta_seconds = static_cast<double>(std::max<int64_t>(remaining, 0)) / *t.rows_per_sec;
  return out;
}

}  // namespace sw::catalog_rows
