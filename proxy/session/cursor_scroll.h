// The rows a SCROLL cursor merged across shards already returned (docs/architecture.md §5.6,
// "Cursors merged across shards"): the merge only moves forward, so a move back (PRIOR, BACKWARD,
// FIRST, ABSOLUTE, RELATIVE) is answered from the merged rows the proxy kept, as encoded
// DataRows, up to a byte bound (fanout.max_scroll_bytes: 54000 past it). Positions as PostgreSQL
// counts them: 0 before the first row, k on row k, past the last row after it. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "session/cursor_statement.h"

namespace sw::session {

class CursorScroll {
 public:
  explicit CursorScroll(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // How many merged rows must be kept before `move` can be answered (kAll: every row).
  int64_t needed(CursorStatement::Direction direction, int64_t steps) const;
  int64_t kept() const { return static_cast<int64_t>(rows_.size()); }
  // Keeps the next merged row (a DataRow message); 54000 past the bound.
  Status keep(std::string data_row, const std::string& cursor);

  // The rows `move` returns, in order (indexes into the kept rows), once needed() rows were kept
  // or the merge ended (`ended`); the position moves.
  std::vector<int64_t> move(CursorStatement::Direction direction, int64_t steps, bool ended);
  const std::string& row(int64_t index) const { return rows_[static_cast<size_t>(index)]; }
  int64_t position() const { return position_; }

 private:
  uint64_t max_bytes_;
  uint64_t bytes_ = 0;
  std::vector<std::string> rows_;
  int64_t position_ = 0;
};

}  // namespace sw::session
