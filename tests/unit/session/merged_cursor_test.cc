#include "session/merged_cursor.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

using sw::session::CursorsEnd;
using sw::session::end_cursors;
using sw::session::MergedCursor;
using sw::session::MergedCursors;

namespace {

// A transaction's cursor `name` (held: WITH HOLD; committed: by an earlier transaction).
void add(MergedCursors& cursors, const std::string& name, bool held, bool committed) {
  auto cursor = std::make_shared<MergedCursor>(name, std::vector<int>{0, 1}, sw::merge::MergePlan{},
                                               sw::config::Fanout{}, held);
  cursor->committed = committed;
  cursors[name] = cursor;
}

MergedCursors three() {
  MergedCursors cursors;
  add(cursors, "plain", false, false);
  add(cursors, "held_now", true, false);
  add(cursors, "held_before", true, true);
  return cursors;
}

}  // namespace

TEST_CASE("COMMIT keeps the held cursors, committed from then on; the others end") {
  MergedCursors cursors = three();
  end_cursors(cursors, CursorsEnd::Commit);
  CHECK(cursors.size() == 2);
  CHECK(cursors.count("plain") == 0);
  CHECK(cursors.at("held_now")->committed);
  CHECK_FALSE(cursors.at("held_now")->failed);
  CHECK(cursors.at("held_before")->committed);
}

TEST_CASE("ROLLBACK drops every cursor the transaction declared, held ones too") {
  MergedCursors cursors = three();
  end_cursors(cursors, CursorsEnd::Rollback);
  CHECK(cursors.size() == 1);
  CHECK(cursors.count("held_before") == 1);
  CHECK_FALSE(cursors.at("held_before")->failed);
}

TEST_CASE("a failure drops the transaction's cursors; the held one whose FETCH failed only closes") {
  MergedCursors cursors = three();
  add(cursors, "other_before", true, true);
  end_cursors(cursors, CursorsEnd::Failure, "held_before");
  CHECK(cursors.size() == 2);
  CHECK(cursors.at("held_before")->failed);
  CHECK_FALSE(cursors.at("other_before")->failed);
}

TEST_CASE("a held cursor is declared WITH HOLD on each shard") {
  MergedCursor held("h", {0, 1}, sw::merge::MergePlan{}, sw::config::Fanout{}, true);
  MergedCursor plain("p", {0, 1}, sw::merge::MergePlan{}, sw::config::Fanout{});
  CHECK(held.declare_messages(0, nullptr).find("NO SCROLL CURSOR WITH HOLD FOR") != std::string::npos);
  CHECK(plain.declare_messages(0, nullptr).find("NO SCROLL CURSOR FOR") != std::string::npos);
  CHECK(plain.declare_messages(0, nullptr).find("WITH HOLD") == std::string::npos);
}
