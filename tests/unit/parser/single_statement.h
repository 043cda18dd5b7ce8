// The facts of a text that must analyze to exactly one statement (a failed REQUIRE otherwise), for
// the parser's unit tests.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "parser/analyze.h"

namespace sw::test {

inline parser::StatementFacts facts(const std::string& sql) {
  auto result = parser::analyze_uncached(sql);
  REQUIRE_MESSAGE(result.is_ok(), sql);
  REQUIRE(result.value()->statements.size() == 1);
  return result.value()->statements[0];
}

}  // namespace sw::test
