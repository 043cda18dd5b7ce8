#include "session/cursor_statement.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::CursorStatement;
using sw::session::read_cursor_statement;
using Kind = CursorStatement::Kind;

TEST_CASE("DECLARE: name, options, hold clause and the query after FOR") {
  CursorStatement d =
      read_cursor_statement("DECLARE Cur NO SCROLL CURSOR WITHOUT HOLD FOR SELECT 1 FOR UPDATE");
  CHECK(d.kind == Kind::Declare);
  CHECK(d.name == "cur");
  CHECK_FALSE(d.scroll);
  CHECK_FALSE(d.hold);
  CHECK(d.query == " SELECT 1 FOR UPDATE");
  CursorStatement q =
      read_cursor_statement("declare \"My \"\"x\"\"\" binary scroll cursor with hold for select 2");
  CHECK(q.kind == Kind::Declare);
  CHECK(q.name == "My \"x\"");
  CHECK(q.binary);
  CHECK(q.scroll);
  CHECK(q.hold);
  CHECK(read_cursor_statement("/* c */ DECLARE c -- x\n CURSOR FOR SELECT 1").kind == Kind::Declare);
  CHECK(read_cursor_statement("DECLARE c CURSOR SELECT 1").kind == Kind::None);
  CHECK(read_cursor_statement("SELECT 1").kind == Kind::None);
}

TEST_CASE("FETCH and MOVE: forward counts, ALL, and the backward forms named") {
  struct Case {
    std::string sql;
    Kind kind;
    int64_t count;
    std::string backward;
  };
  const int64_t all = CursorStatement::kAll;
  const std::vector<Case> cases = {
      {"FETCH c", Kind::Fetch, 1, ""},
      {"FETCH NEXT FROM c", Kind::Fetch, 1, ""},
      {"fetch forward 3 in c;", Kind::Fetch, 3, ""},
      {"FETCH FORWARD FROM c", Kind::Fetch, 1, ""},
      {"FETCH 7 c", Kind::Fetch, 7, ""},
      {"FETCH +2 FROM c", Kind::Fetch, 2, ""},
      {"FETCH ALL FROM \"c\"", Kind::Fetch, all, ""},
      {"FETCH FORWARD ALL IN c", Kind::Fetch, all, ""},
      {"MOVE 2 IN c", Kind::Move, 2, ""},
      {"FETCH PRIOR FROM c", Kind::Fetch, 1, "prior"},
      {"FETCH BACKWARD 2 FROM c", Kind::Fetch, 1, "backward 2"},
      {"MOVE ABSOLUTE 1 IN c", Kind::Move, 1, "absolute 1"},
      {"FETCH -1 FROM c", Kind::Fetch, -1, "FETCH -1"},
      {"FETCH 0 FROM c", Kind::Fetch, 0, "FETCH 0"},
      {"FETCH 99999999999999999999 FROM c", Kind::Unread, 1, ""},
      {"FETCH FROM", Kind::Fetch, 1, ""},  // a cursor named "from"
      {"FETCH 1 FROM c; SELECT 1", Kind::Unread, 1, ""},
  };
  for (const Case& c : cases) {
    INFO(c.sql);
    CursorStatement s = read_cursor_statement(c.sql);
    CHECK(s.kind == c.kind);
    if (c.kind == Kind::Unread) continue;
    CHECK(s.count == c.count);
    CHECK(s.backward == c.backward);
  }
  CHECK(read_cursor_statement("FETCH 2 FROM \"Big\"").name == "Big");
}

TEST_CASE("CLOSE name and CLOSE ALL; names quoted for the shards") {
  CHECK(read_cursor_statement("CLOSE c").kind == Kind::Close);
  CHECK(read_cursor_statement("close all;").kind == Kind::CloseAll);
  CHECK(read_cursor_statement("CLOSE \"all\"").kind == Kind::Close);
  CHECK(sw::session::quoted_name("a\"b") == "\"a\"\"b\"");
}

TEST_CASE("FETCH and MOVE directions as PostgreSQL reads them") {
  using Direction = CursorStatement::Direction;
  struct Case {
    const char* sql;
    Direction direction;
    int64_t steps;
  };
  const Case cases[] = {
      {"FETCH c", Direction::Forward, 1},
      {"FETCH NEXT FROM c", Direction::Forward, 1},
      {"FETCH 3 c", Direction::Forward, 3},
      {"FETCH -2 c", Direction::Backward, 2},
      {"FETCH 0 c", Direction::Relative, 0},
      {"FETCH ALL c", Direction::Forward, CursorStatement::kAll},
      {"FETCH FORWARD ALL c", Direction::Forward, CursorStatement::kAll},
      {"FETCH PRIOR FROM c", Direction::Backward, 1},
      {"FETCH BACKWARD c", Direction::Backward, 1},
      {"FETCH BACKWARD 4 IN c", Direction::Backward, 4},
      {"FETCH BACKWARD -4 IN c", Direction::Forward, 4},
      {"FETCH BACKWARD ALL c", Direction::Backward, CursorStatement::kAll},
      {"FETCH FIRST c", Direction::Absolute, 1},
      {"FETCH LAST c", Direction::Absolute, -1},
      {"FETCH ABSOLUTE -3 c", Direction::Absolute, -3},
      {"MOVE RELATIVE -1 IN c", Direction::Relative, -1},
      {"MOVE RELATIVE 0 c", Direction::Relative, 0},
  };
  for (const Case& c : cases) {
    INFO(c.sql);
    CursorStatement s = read_cursor_statement(c.sql);
    REQUIRE((s.kind == Kind::Fetch || s.kind == Kind::Move));
    CHECK(s.direction == c.direction);
    CHECK(s.steps == c.steps);
  }
  CHECK(read_cursor_statement("FETCH ABSOLUTE ALL c").kind == Kind::Unread);
  CHECK(read_cursor_statement("FETCH PRIOR 2 c").kind == Kind::Unread);
}
