// An INSERT ... VALUES into one sharded table whose rows fall on several shards
// (docs/architecture.md §6.3, "Split INSERT"): one INSERT per shard with only that shard's rows,
// or with ON CONFLICT DO NOTHING and RETURNING one INSERT per row in each shard's part.
#include <algorithm>

#include "router/dml_router.h"

namespace sw::router::detail {

// A part of a row-by-row split (InsertSplit::row_by_row): one INSERT per row, and as its Query
// text those INSERTs in order (each ends on a new line, so a trailing `--` comment ends there).
bool DmlRouter::cut_row_by_row(InsertSplit::Part& part, const std::string& table, Route& error) const {
  part.sql.clear();
  for (size_t row : part.rows) {
    auto cut = parser::insert_with_rows(facts_, {row});
    if (!cut) {
      error = make_error(cut.status().sqlstate,
                         "INSERT into sharded table " + table + ": " + cut.status().message, table);
      return false;
    }
    if (!part.sql.empty()) part.sql += "\n;\n";
    part.sql += cut.value().sql;
    part.row_statements.push_back(std::move(cut.value()));
  }
  return true;
}

// An INSERT whose VALUES rows fall on several shards (docs/architecture.md §6.3, "Split INSERT"):
// one INSERT per shard with only that shard's rows, every other part of the text verbatim
// (ON CONFLICT, RETURNING). The parts must run in one transaction; a caller that cannot run them
// so answers Route::error (the refusal of a write on several shards). Only a plain INSERT ... VALUES
// into one sharded table is cut: another table in the statement (a subquery in a row, a CTE)
// could not be split along with it, and an ON CONFLICT DO UPDATE that sets the key to a value
// must stay on one shard, which the rows do not.
Route DmlRouter::split_insert(int table) {
  if (facts_.inserts.size() != 1 || facts_.inserts.front().table != table || sharded_.size() != 1 ||
      !unsharded_.empty() || !facts_.complete || !facts_.equalities.empty()) {
    return several_shards_error(table);
  }
  const parser::InsertFacts& insert = facts_.inserts.front();
  const TableRule& r = *rule(table);
  const auto column = std::find(insert.columns.begin(), insert.columns.end(), r.key);
  if (column == insert.columns.end()) return several_shards_error(table);
  const auto position = static_cast<size_t>(column - insert.columns.begin());

  auto split = std::make_shared<InsertSplit>();
  split->row_by_row = insert.on_conflict == parser::OnConflict::DoNothing && facts_.returning;
  std::vector<int> row_shard;
  Route route;
  for (const std::vector<parser::Value>& row : insert.rows) {
    const KeyBucket key =
        position < row.size() ? key_bucket(row[position], r, params_, dir_.bucket_count()) : KeyBucket{};
    if (key.outcome != KeyOutcome::Bucket) return several_shards_error(table);
    row_shard.push_back(dir_.bucket(key.bucket).shard);
    route.buckets.push_back(key.bucket);
    if (dir_.bucket(key.bucket).state == BucketState::Migrating) route.migrating = true;
  }
  std::vector<int> shards = row_shard;
  std::sort(shards.begin(), shards.end());
  shards.erase(std::unique(shards.begin(), shards.end()), shards.end());
  split->row_part.resize(row_shard.size());
  for (size_t part = 0; part < shards.size(); ++part) {
    Route error;
    if (!check_assignments(shards[part], error)) return error;
    std::vector<size_t> rows;
    for (size_t i = 0; i < row_shard.size(); ++i) {
      if (row_shard[i] != shards[part]) continue;
      rows.push_back(i);
      split->row_part[i] = static_cast<int>(part);
    }
    auto cut = parser::insert_with_rows(facts_, rows);
    if (!cut)
      return make_error(cut.status().sqlstate,
                        "INSERT into sharded table " + r.config_name + ": " + cut.status().message,
                        r.config_name);
    split->parts.push_back(
        {shards[part], std::move(cut.value().sql), std::move(cut.value().params), rows, {}});
    if (split->row_by_row && !cut_row_by_row(split->parts.back(), r.config_name, error)) return error;
  }
  std::sort(route.buckets.begin(), route.buckets.end());
  route.buckets.erase(std::unique(route.buckets.begin(), route.buckets.end()), route.buckets.end());
  route.kind = RouteKind::Split;
  route.table = r.config_name;
  route.reason = "the rows' keys of " + r.config_name + " fall on shards " + shard_names(dir_, shards) +
                 ": one INSERT per shard with its own rows, in one transaction";
  route.error = several_shards_error(table).error;
  route.split = std::move(split);
  return route;
}

}  // namespace sw::router::detail
