#include "session/pinning.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using sw::session::PinReason;

namespace {

PinReason reason_of(const std::string& sql) {
  auto facts = sw::parser::analyze(sql);
  REQUIRE(facts);
  PinReason first = PinReason::None;
  for (const auto& statement : (*facts)->statements) {
    PinReason reason = sw::session::pin_reason(statement);
    if (first == PinReason::None) first = reason;
  }
  return first;
}

struct Case {
  const char* sql;
  PinReason reason;
};

}  // namespace

TEST_CASE("pin_reason: what stays in the server's session after the transaction") {
  const std::vector<Case> cases = {
      {"CREATE TEMP TABLE t (x int)", PinReason::TempTable},
      {"CREATE TEMPORARY TABLE t AS SELECT 1", PinReason::TempTable},
      {"SELECT 1 AS x INTO TEMP t", PinReason::TempTable},
      {"CREATE TABLE pg_temp.t (x int)", PinReason::TempTable},
      {"CREATE TEMP TABLE t (x int) ON COMMIT DROP", PinReason::None},
      {"CREATE TEMP VIEW v AS SELECT 1", PinReason::TempView},
      {"CREATE TEMP SEQUENCE s", PinReason::TempSequence},
      {"CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1'", PinReason::TempRoutine},
      {"CREATE TYPE pg_temp.t AS (a int)", PinReason::TempType},
      {"DECLARE c CURSOR WITH HOLD FOR SELECT 1", PinReason::HoldCursor},
      {"DECLARE c CURSOR FOR SELECT 1", PinReason::None},
      {"LOAD 'auto_explain'", PinReason::Library},
      {"LISTEN ch", PinReason::Listen},
      {"UNLISTEN ch", PinReason::None},
      {"SELECT pg_advisory_lock(1)", PinReason::AdvisoryLock},
      {"SELECT pg_try_advisory_lock_shared(1, 2)", PinReason::AdvisoryLock},
      {"SELECT pg_advisory_xact_lock(1)", PinReason::None},
      {"SELECT set_config('search_path', 'a', false)", PinReason::None},  // replayed
      {"SELECT set_config('search_path', 'a', true)", PinReason::None},   // ends with the transaction
      {"SELECT set_config('search_path', current_user, false)", PinReason::ComputedSetConfig},
      {"SELECT set_config('search_path', 'a', $1)", PinReason::ComputedSetConfig},
      {"SET search_path = a", PinReason::None},
      {"SET ROLE x", PinReason::None},
      {"CREATE TABLE t (x int)", PinReason::None},
      {"SELECT 1; CREATE TEMP TABLE t (x int)", PinReason::TempTable},
  };
  for (const Case& c : cases) {
    CAPTURE(c.sql);
    CHECK(reason_of(c.sql) == c.reason);
  }
}

TEST_CASE("describe: every reason names itself") {
  CHECK(sw::session::describe(PinReason::None).empty());
  for (int r = 1; r <= static_cast<int>(PinReason::ComputedSetConfig); ++r)
    CHECK_FALSE(sw::session::describe(static_cast<PinReason>(r)).empty());
}
