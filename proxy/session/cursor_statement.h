// The SQL-level cursor statements a cursor merged across shards answers (docs/architecture.md
// §5.6, "Cursors merged across shards"), read from a Query's text: DECLARE (its name, options and
// the query after FOR), FETCH and MOVE (direction, count, name), CLOSE name / CLOSE ALL. Pure: no
// I/O. Names as PostgreSQL keeps them: unquoted ones lower-cased, quoted ones as written.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace sw::session {

struct CursorStatement {
  // Unread: a FETCH or MOVE in a form not read here.
  enum class Kind : uint8_t { None, Declare, Fetch, Move, Close, CloseAll, Unread };
  Kind kind = Kind::None;
  std::string name;
  // DECLARE: the options written before CURSOR and the hold clause, and the query after FOR.
  bool binary = false;
  bool scroll = false;  // SCROLL (NO SCROLL: false)
  bool insensitive = false;
  bool hold = false;  // WITH HOLD
  std::string query;
  // FETCH / MOVE: how many rows forward (kAll: every row left). `backward` names the form that
  // moves otherwise (BACKWARD, PRIOR, FIRST, LAST, ABSOLUTE n, RELATIVE n, a count of 0 or less),
  // which a merged cursor cannot run.
  static constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  int64_t count = 1;
  std::string backward;
  // The move as PostgreSQL runs it (a SCROLL cursor runs every form): NEXT, FORWARD n and n are
  // Forward n; PRIOR, BACKWARD n Backward n (a negative count turns either around, ALL is kAll);
  // FIRST Absolute 1, LAST Absolute -1, ABSOLUTE n; RELATIVE n, and a count of 0, Relative.
  enum class Direction : uint8_t { Forward, Backward, Absolute, Relative };
  Direction direction = Direction::Forward;
  int64_t steps = 1;
};

// The statement `sql` (one statement, a trailing ';' allowed); Kind::None when it is none of these
// or not written in a form read here (the usual path then runs it).
CursorStatement read_cursor_statement(std::string_view sql);

// `name` as an SQL identifier, always quoted ("a""b").
std::string quoted_name(std::string_view name);

}  // namespace sw::session
