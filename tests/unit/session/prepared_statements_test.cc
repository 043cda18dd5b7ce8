#include "session/prepared_statements.h"

#include <doctest/doctest.h>

using sw::session::ClientStatements;
using sw::session::StatementRegistry;

TEST_CASE("the same text and types share one server statement") {
  StatementRegistry registry;
  auto a = registry.intern("SELECT $1", {23});
  auto b = registry.intern("SELECT $1", {23});
  auto c = registry.intern("SELECT $1", {20});
  auto d = registry.intern("SELECT $1::int", {23});
  CHECK(a == b);
  CHECK(a->id != c->id);
  CHECK(c->id != d->id);
  CHECK(a->server_name == "sw_" + std::to_string(a->id));
  CHECK(registry.size() == 3);
}

// The server resolves a parameter type left unspecified from the tables as they are at its Parse:
// such a statement is its client's own, parsed afresh for each Parse.
TEST_CASE("client names map to registry statements") {
  StatementRegistry registry;
  ClientStatements client;
  client.add("q1", registry.intern("SELECT 1", {}));
  client.add("q2", registry.intern("SELECT 1", {}));
  client.add("q3", registry.intern("SELECT 2", {}));
  REQUIRE(client.find("q1") != nullptr);
  CHECK(client.find("q1")->id == client.find("q2")->id);
  client.remove("q1");
  CHECK_FALSE(client.contains("q1"));
  CHECK(client.contains("q2"));
  CHECK(client.contains("q3"));
  client.clear();
  CHECK_FALSE(client.contains("q3"));
}

TEST_CASE("a statement's facts are analyzed once when interned, none for a text that does not parse") {
  StatementRegistry registry;
  auto statement = registry.intern("SELECT * FROM orders WHERE tenant_id = $1", {20});
  REQUIRE(statement->facts != nullptr);
  REQUIRE(statement->facts->statements.size() == 1);
  CHECK(statement->facts->statements[0].predicates[0].values[0].param == 1);
  CHECK(registry.intern("SELECT * FROM orders WHERE tenant_id = $1", {20})->facts == statement->facts);
  CHECK(registry.intern("SELEC oops", {})->facts == nullptr);
  ClientStatements client;
  client.add("q", statement);
  CHECK(client.shared("q") == statement);
  CHECK(client.shared("other") == nullptr);
}
