// The proxy's half of a scatter plan: the shards' rows in, the client's rows out. Pure (no I/O):
// the session pushes each shard's DataRows as they arrive and pulls merged rows when it can
// write them; the merger says how many rows it holds per shard so the session can stop reading
// a shard whose rows are not needed yet.
//
// Concat and MergeSort stream: MergeSort emits a row once every shard still sending has a row
// buffered (each shard's rows arrive sorted). Aggregate folds rows into groups as they come
// and emits after the last shard finished (sorted by ORDER BY, then OFFSET/LIMIT). DISTINCT
// and GROUP BY keep at most `max_groups` keys (54000 beyond).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "merge/aggregate.h"
#include "merge/collation.h"
#include "merge/parameter.h"
#include "merge/plan.h"
#include "merge/value.h"

namespace sw::merge {

using Row = std::vector<std::optional<std::string>>;

// A DataRow body ('D' without its header) as values; nullopt when malformed.
std::optional<Row> decode_data_row(std::string_view body);

class Merger {
 public:
  Merger(MergePlan plan, size_t legs, size_t max_groups);

  // The shards' column types (from the first RowDescription). Fails (0A000) when a sort key,
  // group key or aggregate has a type shardwire cannot merge, naming the column.
  Status describe(std::vector<uint32_t> shard_types, const std::vector<std::string>& names);
  // Per shard column: how the merge compares its text (after describe(); collation.h says which
  // collations allow it).
  const std::vector<TextCompare>& compared_text() const { return compared_text_; }
  // The client's column types (after describe(); without plan.hidden_outputs).
  const std::vector<uint32_t>& output_types() const { return output_types_; }

  // The client's Bind parameters (extended protocol), for HAVING comparisons with $n; bound to
  // the comparisons by describe(), once the column types are known.
  void set_parameters(std::vector<BindParameter> parameters) { parameters_ = std::move(parameters); }
  // How the session's DateStyle and TimeZone print dates and timestamps: how they are read.
  void set_dates(DateReading dates) { dates_ = dates; }
  DateReading dates() const { return dates_; }
  // The distinct values count(DISTINCT) columns may hold over all groups (54000 beyond).
  void set_max_distinct_values(size_t limit) { distinct_budget_->limit = limit; }

  Status push(size_t leg, Row row);
  Status finish_leg(size_t leg);

  // The next row for the client, or nullopt: wait for more shard rows (or done()). Fails on
  // a value it cannot read or a DISTINCT past max_groups.
  Result<std::optional<Row>> next();
  // Every row the client gets was returned by next(): LIMIT reached, or all shards finished
  // and drained. The session may stop reading the shards then.
  bool done() const;
  size_t buffered(size_t leg) const { return legs_[leg].rows.size(); }
  // Whether the merger needs rows from `leg` before it can emit more (MergeSort: its buffer is
  // empty and it is not finished).
  bool waiting_for(size_t leg) const;
  uint64_t rows_in() const { return rows_in_; }

 private:
  struct Entry {
    Row row;
    std::vector<Value> keys;  // the sort keys' decoded values (NULL: no value, see nulls)
    std::vector<bool> nulls;
  };
  struct LegRows {
    std::deque<Entry> rows;
    bool finished = false;
  };
  struct Group {
    Row keys;
    std::vector<Accumulator> accumulators;
  };

  Result<Entry> make_entry(Row row) const;
  // ORDER BY order of two rows on their first `keys` sort keys (all: the whole ORDER BY).
  int compare(const Entry& a, const Entry& b, size_t keys = SIZE_MAX) const;
  // DISTINCT ON: whether the entry's key is the previous row's (then it is dropped); else it
  // becomes the previous row.
  bool repeats_distinct_on(const Entry& entry);
  Status add_to_group(const Row& row);
  Group new_group(const Row& row) const;
  Accumulator new_accumulator(const OutputColumn& out) const;
  Status accumulate(Group& group, const Row& row) const;
  Result<std::optional<Row>> group_row(Group& group) const;
  // Expression outputs' types (from the other outputs') and which of them HAVING compares.
  Status type_expressions();
  // The row's Expression outputs that HAVING compares (`for_having`), or the others.
  Status compute_expressions(Row& row, bool for_having) const;
  // The types ORDER BY keys index: an aggregate merge's outputs (hidden ones included), else the
  // shards' columns.
  const std::vector<uint32_t>& sort_types() const {
    return plan_.kind == MergeKind::Aggregate ? having_types_ : output_types_;
  }
  // plan.stream_groups (merger_stream.cc): a shard's group row with its sort keys read from the
  // key columns' shard positions; the next final group, combined as the k-way merge meets it.
  Result<Entry> make_group_entry(Row row) const;
  Result<std::optional<Row>> next_streamed_group();
  Status finalize_groups();
  // DISTINCT / OFFSET / LIMIT on a row about to go out: true when it goes out.
  Result<bool> admit(const Row& row);
  Result<std::string> canonical_key(const Row& row, const std::vector<int>& columns,
                                    const std::vector<uint32_t>& types) const;

  MergePlan plan_;
  size_t max_groups_;
  std::vector<LegRows> legs_;
  std::vector<uint32_t> shard_types_;
  std::vector<uint32_t> output_types_;
  std::vector<uint32_t> having_types_;      // Aggregate: of every output, hidden ones included
  std::vector<bool> expression_in_having_;  // per output: an Expression HAVING compares
  std::vector<TextCompare> compared_text_;
  std::vector<BindParameter> parameters_;
  DateReading dates_;
  std::unique_ptr<DistinctBudget> distinct_budget_ = std::make_unique<DistinctBudget>();
  std::vector<int> key_sources_;  // Aggregate: shard columns of the GROUP BY keys
  std::unordered_map<std::string, size_t> group_index_;
  std::vector<Group> groups_;
  std::deque<Entry> finalized_;  // Aggregate: result rows in output order
  bool finalized_ready_ = false;
  std::optional<Group> open_group_;       // stream_groups: the group being combined
  Entry open_keys_;                       // stream_groups: its sort keys
  std::unordered_set<std::string> seen_;  // DISTINCT
  std::optional<Entry> last_on_;          // DISTINCT ON: the sort keys of the last row kept
  int64_t skipped_ = 0;
  int64_t emitted_ = 0;
  uint64_t rows_in_ = 0;
};

}  // namespace sw::merge
