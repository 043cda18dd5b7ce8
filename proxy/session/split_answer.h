// SplitAnswer: the answers of a split INSERT's parts (one INSERT per shard with its own VALUES rows,
// docs/architecture.md §6.3 "Split INSERT", §5.11) combined into the one answer PostgreSQL gives the
// whole INSERT: RowDescription once, the RETURNING rows in the order of the client's VALUES rows,
// one `INSERT 0 n` with the summed count. Pure: fed each part's whole messages, it holds them
// until every part answered.
//
// A part returns its rows in its own VALUES order, so when every part returned a row for each of
// its VALUES rows, row i of the client's VALUES is the next unused row of part row_part[i]. When a
// part returned some but not all of its rows (ON CONFLICT DO UPDATE ... WHERE or a trigger skipped
// one), nothing says which were skipped: the combined answer is refused (0A000) rather than
// guessed; a part that returned none of its rows is no obstacle. Row by row (each part runs one
// INSERT per VALUES row, InsertSplit::row_by_row), each INSERT's answer is its row's: its rows,
// if any, are that row's RETURNING rows.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::session {

class SplitAnswer {
 public:
  // The client's result is held until every part answered; RETURNING beyond this is refused.
  static constexpr size_t kMaxHeldBytes = 64u << 20;

  // `row_part`: per VALUES row, the index of the part that inserts it (InsertSplit::row_part).
  explicit SplitAnswer(std::vector<int> row_part, bool row_by_row = false);

  // A part's messages to its INSERT, whole (type, length, body). The first RowDescription (or
  // NoData, to a Describe of an INSERT without RETURNING) is the client's: the parts are the same
  // statement, so theirs are equal.
  Status on_row_description(size_t part, std::string_view frame);
  Status on_data_row(size_t part, std::string_view frame);
  // The CommandComplete tag of the part's INSERT (row by row: of its next row's): `INSERT 0 n`.
  Status on_command_complete(size_t part, std::string_view tag);

  // RowDescription, DataRows in VALUES order and CommandComplete for the client; 0A000 when a
  // part returned only some of its rows.
  Result<std::string> combine() const;
  // The summed row count of the parts so far.
  long long inserted() const { return inserted_; }

 private:
  Result<std::string> combine_row_by_row() const;

  std::vector<int> row_part_;
  std::vector<size_t> part_rows_;  // VALUES rows per part
  bool row_by_row_ = false;
  std::vector<std::vector<std::string>> returned_;  // per part: its DataRows, in its order
  // per part: the count of its DataRows at each of its INSERTs' CommandComplete
  std::vector<std::vector<size_t>> completed_;
  std::string row_description_;
  size_t held_ = 0;
  long long inserted_ = 0;
};

}  // namespace sw::session
