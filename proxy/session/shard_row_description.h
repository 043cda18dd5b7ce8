// The first RowDescription of a merge's shards (docs/architecture.md §5.6), as both readers of it
// take it: a merged read (MergeFanout) and a cursor merged across shards (MergedCursor). Its
// fields, their types and names (what Merger::describe learns), their column origins (for the
// collation checks), and the client's RowDescription made from it. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "merge/collation.h"
#include "merge/plan.h"
#include "wire/row_description.h"

namespace sw::session {

struct ShardRowDescription {
  std::vector<wire::RowField> fields;
  std::vector<uint32_t> types;
  std::vector<std::string> names;
};

// Reads a shard's RowDescription `body` (text-format columns only); each column's origin is
// appended to `columns->origins`.
Result<ShardRowDescription> read_shard_row_description(std::string_view body, merge::ShardColumns* columns);

// Whether the client's columns are not the shards' (an aggregate computed from several partial
// columns: avg, variances, count(DISTINCT), string_agg, or HAVING's own aggregates).
bool rebuilt_columns(const merge::MergePlan& plan);

// The client's RowDescription of such a plan: the shards' field for each output column that is
// theirs, a column of the merger's `output_types` (no table column) for one the proxy computes.
std::string rebuilt_row_description(const std::vector<wire::RowField>& fields, const merge::MergePlan& plan,
                                    const std::vector<uint32_t>& output_types);

// The client's RowDescription: the shards' `fields` without the plan's hidden sort columns.
Result<std::string> without_hidden_columns(const std::vector<wire::RowField>& fields,
                                           const merge::MergePlan& plan);

}  // namespace sw::session
