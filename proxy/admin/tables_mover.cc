#include "admin/tables.h"

#include "catalog_rows/migration_progress.h"

namespace sw::admin {
namespace {
using T = ColumnType;

Value optional_decimal(const std::optional<double>& value) { return value ? decimal(*value) : Value(); }

}  // namespace

std::string bucket_ranges(const std::vector<uint32_t>& buckets) {
  std::string out;
  for (size_t i = 0; i < buckets.size();) {
    size_t j = i;
    while (j + 1 < buckets.size() && buckets[j + 1] == buckets[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(buckets[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(buckets[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string waiting_reason(const catalog_rows::Migration& m, const std::vector<catalog_rows::Migration>& all,
                           int max_concurrent) {
  if (m.state != catalog_rows::MigrationState::Planned) return "";
  if (m.paused) return "paused: RESUME MIGRATION " + std::to_string(m.id);
  if (max_concurrent <= 0)
    return "mover.max_concurrent is 0 on this instance: an instance with a mover must run it";
  std::string holders;
  int busy = 0, ahead = 0;
  for (const auto& other : all) {
    if (catalog_rows::holds_mover_slot(other)) {
      ++busy;
      holders += (holders.empty() ? "" : ", ") + std::to_string(other.id);
    } else if (other.state == catalog_rows::MigrationState::Planned && !other.paused && other.id < m.id) {
      ++ahead;
    }
  }
  const std::string limit = "mover.max_concurrent = " + std::to_string(max_concurrent);
  if (busy >= max_concurrent)
    return "for a mover slot: migration(s) " + holders + " copy, catch up or cut over (" + limit +
           "; rollback windows hold none)";
  if (busy + ahead >= max_concurrent)
    return "for a mover slot: " + std::to_string(ahead) + " planned migration(s) before it (" + limit + ")";
  return "for the mover to start it (it looks every second)";
}

ResultTable migrations_table(const std::vector<catalog_rows::Migration>& migrations, int max_concurrent) {
  static constexpr Column kColumns[] = {{"id", T::Int8},
                                        {"buckets", T::Text},
                                        {"source", T::Text},
                                        {"target", T::Text},
                                        {"state", T::Text},
                                        {"step", T::Text},
                                        {"rows_copied", T::Int8},
                                        {"rows_total", T::Int8},
                                        {"percent", T::Float8},
                                        {"lag_bytes", T::Int8},
                                        {"lag_seconds", T::Float8},
                                        {"last_pause_ms", T::Float8},
                                        {"rollback_expires_at", T::Text},
                                        {"paused", T::Bool},
                                        {"error", T::Text},
                                        {"waiting", T::Text},
                                        {"bytes_copied", T::Int8},
                                        {"bytes_total", T::Int8},
                                        {"rows_per_sec", T::Float8},
                                        {"bytes_per_sec", T::Float8},
                                        {"eta_seconds", T::Float8}};
  ResultTable table(kColumns);
  for (const auto& m : migrations) {
    const catalog_rows::Progress progress = catalog_rows::migration_progress(m);
    double percent = m.rows_total > 0
                         ? 100.0 * static_cast<double>(m.rows_copied) / static_cast<double>(m.rows_total)
                     : m.state >= catalog_rows::MigrationState::CatchingUp ? 100.0
                                                                           : 0.0;
    if (percent > 100) percent = 100;
    table.add({number(m.id),
               text(bucket_ranges(m.buckets)),
               text(m.source),
               text(m.target),
               text(catalog_rows::migration_state_name(m.state)),
               text(catalog_rows::migration_step_name(m.step)),
               number(m.rows_copied),
               number(m.rows_total),
               decimal(percent),
               number(m.lag_bytes),
               decimal(m.lag_seconds),
               m.last_pause_ms ? decimal(*m.last_pause_ms) : Value(),
               m.rollback_expires_at ? text(*m.rollback_expires_at) : Value(),
               text(m.paused ? "t" : "f"),
               m.error.empty() ? Value() : text(m.error),
               m.state == catalog_rows::MigrationState::Planned
                   ? text(waiting_reason(m, migrations, max_concurrent))
                   : Value(),
               number(progress.bytes_done),
               number(progress.bytes_total),
               optional_decimal(progress.rows_per_sec),
               optional_decimal(progress.bytes_per_sec),
               optional_decimal(progress.eta_seconds)});
  }
  return table;
}

ResultTable rebalance_progress_table(const std::vector<catalog_rows::Migration>& migrations) {
  static constexpr Column kColumns[] = {
      {"migrations", T::Int4},     {"planned", T::Int4},         {"copying", T::Int4},
      {"copied", T::Int4},         {"rows_copied", T::Int8},     {"rows_total", T::Int8},
      {"bytes_copied", T::Int8},   {"bytes_total", T::Int8},     {"percent", T::Float8},
      {"rows_per_sec", T::Float8}, {"bytes_per_sec", T::Float8}, {"eta_seconds", T::Float8}};
  ResultTable table(kColumns);
  const catalog_rows::RebalanceProgress r = catalog_rows::rebalance_progress(migrations);
  const catalog_rows::Progress& t = r.total;
  table.add({number(static_cast<int64_t>(r.migrations)), number(static_cast<int64_t>(r.planned)),
             number(static_cast<int64_t>(r.copying)), number(static_cast<int64_t>(r.copied)),
             number(t.rows_done), number(t.rows_total), number(t.bytes_done), number(t.bytes_total),
             decimal(t.percent()), optional_decimal(t.rows_per_sec), optional_decimal(t.bytes_per_sec),
             optional_decimal(t.eta_seconds)});
  return table;
}

ResultTable rebalance_table(const std::vector<PlannedMigration>& plan) {
  static constexpr Column kColumns[] = {
      {"source", T::Text},       {"target", T::Text},        {"bucket_count", T::Int4},
      {"buckets", T::Text},      {"migration_id", T::Int8},  {"rows", T::Int8},
      {"bytes", T::Int8},        {"plan_rows", T::Int8},     {"plan_bytes", T::Int8},
      {"minimum_rows", T::Int8}, {"minimum_bytes", T::Int8}, {"expected_spread", T::Text}};
  auto optional = [](const std::optional<uint64_t>& n) {
    return n ? number(static_cast<int64_t>(*n)) : Value();
  };
  ResultTable table(kColumns);
  for (const auto& move : plan) {
    table.add({text(move.source), text(move.target), number(static_cast<int64_t>(move.buckets.size())),
               text(bucket_ranges(move.buckets)), move.id == 0 ? Value() : number(move.id),
               number(static_cast<int64_t>(move.rows)), number(static_cast<int64_t>(move.bytes)),
               optional(move.plan_rows), optional(move.plan_bytes), optional(move.minimum_rows),
               optional(move.minimum_bytes),
               move.expected_spread.empty() ? Value() : text(move.expected_spread)});
  }
  return table;
}

ResultTable verify_table(uint32_t bucket, const std::vector<BucketCheck>& checks) {
  static constexpr Column kColumns[] = {{"bucket", T::Int4},   {"shard", T::Text},
                                        {"role", T::Text},     {"rows", T::Int8},
                                        {"checksum", T::Text}, {"matches_owner", T::Bool}};
  ResultTable table(kColumns);
  const BucketCheck* owner = nullptr;
  for (const auto& check : checks) {
    if (check.role == "owner") owner = &check;
  }
  for (const auto& check : checks) {
    bool same = owner != nullptr && owner->rows == check.rows && owner->checksum == check.checksum;
    table.add({number(static_cast<int64_t>(bucket)), text(check.shard), text(check.role), number(check.rows),
               text(check.checksum), text(same ? "t" : "f")});
  }
  return table;
}

ResultTable verify_reference_table(const std::vector<ReferenceCheck>& checks) {
  static constexpr Column kColumns[] = {
      {"shard", T::Text}, {"rows", T::Int8}, {"checksum", T::Text}, {"matches", T::Bool}};
  ResultTable table(kColumns);
  for (const auto& check : checks) {
    table.add({text(check.shard), check.exists ? number(check.rows) : Value(),
               check.exists ? text(check.checksum) : Value(), text(check.matches ? "t" : "f")});
  }
  return table;
}

}  // namespace sw::admin
