#include "session/cursor_scroll.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::CursorScroll;
using sw::session::CursorStatement;
using Direction = CursorStatement::Direction;

namespace {

constexpr int64_t kAll = CursorStatement::kAll;

// A cursor over rows "1".."n", kept as its moves need them; each move's rows as numbers.
struct Cursor {
  explicit Cursor(int rows) : total(rows) {}
  std::vector<int> fetch(Direction direction, int64_t steps) {
    const int64_t needed = scroll.needed(direction, steps);
    while (scroll.kept() < total && (needed == kAll || scroll.kept() < needed))
      REQUIRE(scroll.keep(std::to_string(scroll.kept() + 1), "c").is_ok());
    std::vector<int> out;
    for (int64_t i : scroll.move(direction, steps, scroll.kept() == total))
      out.push_back(std::stoi(scroll.row(i)));
    return out;
  }
  int64_t total;
  CursorScroll scroll{1 << 20};
};

}  // namespace

TEST_CASE("forward and backward moves, as PostgreSQL positions a cursor") {
  Cursor c(5);
  CHECK(c.fetch(Direction::Forward, 2) == std::vector<int>{1, 2});
  CHECK(c.fetch(Direction::Backward, 1) == std::vector<int>{1});  // PRIOR
  CHECK(c.scroll.position() == 1);
  CHECK(c.fetch(Direction::Backward, 1).empty());  // before the first row
  CHECK(c.scroll.position() == 0);
  CHECK(c.fetch(Direction::Forward, kAll) == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(c.scroll.position() == 6);  // past the last row
  CHECK(c.fetch(Direction::Forward, 1).empty());
  CHECK(c.fetch(Direction::Backward, 2) == std::vector<int>{5, 4});
  CHECK(c.fetch(Direction::Backward, kAll) == std::vector<int>{3, 2, 1});
  CHECK(c.scroll.position() == 0);
}

TEST_CASE("ABSOLUTE, RELATIVE, FIRST, LAST and the current row") {
  Cursor c(5);
  CHECK(c.fetch(Direction::Absolute, 3) == std::vector<int>{3});
  CHECK(c.scroll.kept() == 3);  // only what the move needed
  CHECK(c.fetch(Direction::Relative, 0) == std::vector<int>{3});
  CHECK(c.fetch(Direction::Relative, -2) == std::vector<int>{1});
  CHECK(c.fetch(Direction::Relative, -1).empty());
  CHECK(c.scroll.position() == 0);
  CHECK(c.fetch(Direction::Relative, 0).empty());
  CHECK(c.fetch(Direction::Absolute, -1) == std::vector<int>{5});  // LAST
  CHECK(c.fetch(Direction::Absolute, -5) == std::vector<int>{1});
  CHECK(c.fetch(Direction::Absolute, -6).empty());
  CHECK(c.scroll.position() == 0);
  CHECK(c.fetch(Direction::Absolute, 9).empty());
  CHECK(c.scroll.position() == 6);
  CHECK(c.fetch(Direction::Relative, -1) == std::vector<int>{5});
  CHECK(c.fetch(Direction::Relative, 3).empty());
  CHECK(c.scroll.position() == 6);
  CHECK(c.fetch(Direction::Absolute, 0).empty());
  CHECK(c.fetch(Direction::Forward, 1) == std::vector<int>{1});
}

TEST_CASE("the kept rows are bounded in bytes: 54000 past the bound") {
  CursorScroll scroll(10);
  CHECK(scroll.keep("12345", "c").is_ok());
  CHECK(scroll.keep("12345", "c").is_ok());
  sw::Status past = scroll.keep("1", "c");
  CHECK(past.sqlstate == "54000");
  CHECK(past.message.find("fanout.max_scroll_bytes") != std::string::npos);
}
