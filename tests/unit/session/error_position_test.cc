// An error of a rewritten EXECUTE: its position moved back into the client's text, or dropped.
#include <doctest/doctest.h>

#include <string>

#include "session/error_position.h"

using sw::session::client_position;
using sw::session::error_position;
using sw::session::error_with_position;

namespace {

std::string field(char type, const std::string& value) {
  return std::string(1, type) + value + std::string(1, '\0');
}

}  // namespace

TEST_CASE("the P field is replaced or removed, every other field kept in order") {
  const std::string body =
      field('S', "ERROR") + field('C', "22P02") + field('P', "9") + field('M', "bad") + '\0';
  CHECK(error_position(body) == 9u);
  const std::string moved = error_with_position(body, 13);
  const std::string expected_body =
      field('S', "ERROR") + field('C', "22P02") + field('P', "13") + field('M', "bad") + '\0';
  REQUIRE(moved.size() == 5 + expected_body.size());
  CHECK(moved[0] == 'E');
  CHECK(moved.substr(5) == expected_body);
  const std::string dropped = error_with_position(body, std::nullopt);
  CHECK(dropped.substr(5) == field('S', "ERROR") + field('C', "22P02") + field('M', "bad") + '\0');
  const std::string without = field('S', "ERROR") + field('M', "no position") + '\0';
  CHECK_FALSE(error_position(without));
  CHECK(error_with_position(without, 3).empty());  // nothing to move: relayed as it came
  CHECK(error_with_position("S", 3).empty());      // not a field list
}

TEST_CASE("positions count characters: multibyte text before the place moves it by characters") {
  const std::string client = "EXECUTE q('é', 'bad')";
  auto prepared = sw::parser::sql_prepare("PREPARE q(text, int) AS SELECT $1, $2");
  auto execute = sw::parser::sql_execute(client);
  REQUIRE(prepared);
  REQUIRE(execute);
  auto rewrite = sw::parser::expand_execute(client, 0, *execute, *prepared);
  REQUIRE(rewrite);
  REQUIRE(rewrite->sql == "SELECT ('é')::text, ('bad')::int");
  // 'bad' is character 22 of the rewritten text and character 16 of the client's.
  CHECK(client_position(22, rewrite->sql, client, *rewrite) == 16u);
  CHECK(client_position(1, rewrite->sql, client, *rewrite) == std::nullopt);  // "SELECT": not the client's
  CHECK(client_position(999, rewrite->sql, client, *rewrite) == std::nullopt);
}
