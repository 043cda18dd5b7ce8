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
TEST_CASE("a statement whose parameter types the server resolves is not shared") {
  using sw::session::resolves_parameter_types;
  CHECK(resolves_parameter_types("SELECT $1", {}));
  CHECK(resolves_parameter_types("SELECT $1, $2", {23}));
  CHECK(resolves_parameter_types("SELECT $1, $10", {23, 23}));
  CHECK(resolves_parameter_types("SELECT $1", {0}));
  CHECK(resolves_parameter_types("SELECT 1", {23, 0}));
  CHECK_FALSE(resolves_parameter_types("SELECT $1, $2", {23, 25}));
  CHECK_FALSE(resolves_parameter_types("SELECT 1", {}));
  CHECK_FALSE(resolves_parameter_types("SELECT a$1 FROM t$2", {}));  // identifiers, no parameters
  CHECK_FALSE(resolves_parameter_types("SELECT $x$1$x$", {}));
  StatementRegistry registry;
  auto a = registry.intern("INSERT INTO t VALUES ($1)", {0});
  auto b = registry.intern("INSERT INTO t VALUES ($1)", {0});
  auto c = registry.intern("INSERT INTO t VALUES ($1)", {});
  CHECK(a->id != b->id);
  CHECK(a->server_name != b->server_name);
  CHECK(b->id != c->id);
  CHECK(sw::session::same_parse(*a, *b));
  CHECK_FALSE(sw::session::same_parse(*a, *c));
  CHECK(registry.size() == 0);
  CHECK_FALSE(a->validated);
}

// A server that accepted an own statement's Parse proves its text parses: a later Parse of the
// same text, types and search_path is answered without a server (its types are still resolved
// by the server that runs it, afresh).
TEST_CASE("an own statement's text a server accepted needs no server for its next Parse") {
  StatementRegistry registry;
  auto first = registry.intern("INSERT INTO t VALUES ($1)", {0});
  auto failed = registry.intern("INSERT INTO u VALUES ($1)", {0});
  registry.forget_failed(failed->id);
  registry.mark_validated(failed->id);  // forgotten: proves nothing
  CHECK_FALSE(registry.intern("INSERT INTO u VALUES ($1)", {0})->validated);
  CHECK_FALSE(registry.intern("INSERT INTO t VALUES ($1)", {0})->validated);
  registry.mark_validated(first->id);
  auto again = registry.intern("INSERT INTO t VALUES ($1)", {0});
  CHECK(again->validated);
  CHECK(again->id != first->id);
  CHECK_FALSE(registry.intern("INSERT INTO t VALUES ($1)", {0}, "schema_b")->validated);
  CHECK_FALSE(registry.intern("INSERT INTO t VALUES ($1)", {})->validated);
  CHECK(registry.size() == 0);
}

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

// DDL sent through the proxy advances the schema epoch (docs/architecture.md §5.3): a registry
// that sees a newer one shares none of its older statements or accepted texts, and a client
// holding an old statement keeps it (PostgreSQL's own error for a statement prepared before).
TEST_CASE("a registry forgets its shared statements and accepted texts once the schema changed") {
  using sw::session::SchemaChanges;
  StatementRegistry registry;
  auto shared = registry.intern("SELECT * FROM t", {});
  auto own = registry.intern("SELECT * FROM t WHERE v = $1", {0});
  registry.mark_validated(shared->id);
  registry.mark_validated(own->id);
  REQUIRE(registry.intern("SELECT * FROM t", {}) == shared);
  REQUIRE(registry.intern("SELECT * FROM t WHERE v = $1", {0})->validated);

  SchemaChanges client;
  client.note_sent(*registry.intern("SELECT 1", {})->facts);  // no DDL: nothing changes
  CHECK(registry.intern("SELECT * FROM t", {}) == shared);
  const uint64_t before = sw::session::schema_epoch();
  auto alter = registry.intern("SELECT 1; ALTER TABLE t ALTER COLUMN v TYPE text", {});
  REQUIRE(alter->facts != nullptr);
  client.note_sent(*alter->facts);
  CHECK(sw::session::schema_epoch() == before + 1);
  auto after = registry.intern("SELECT * FROM t", {});
  CHECK(after != shared);
  CHECK(after->id != shared->id);
  CHECK_FALSE(after->validated);
  CHECK_FALSE(registry.intern("SELECT * FROM t WHERE v = $1", {0})->validated);
  CHECK(shared->query == "SELECT * FROM t");  // its clients keep it
  registry.mark_validated(shared->id);        // an answer for the old one changes nothing now
  CHECK_FALSE(registry.intern("SELECT * FROM t", {})->validated);

  // The end of the DDL's transaction advances it once more, and only once.
  auto during = registry.intern("SELECT * FROM t", {});
  client.end_transaction();
  CHECK(sw::session::schema_epoch() == before + 2);
  CHECK(registry.intern("SELECT * FROM t", {}) != during);
  client.end_transaction();
  CHECK(sw::session::schema_epoch() == before + 2);
  for (const char* ddl :
       {"CREATE TYPE e AS ENUM ('a')", "DROP TABLE t", "CREATE TABLE t (v int)", "ALTER TYPE e ADD VALUE 'b'",
        "CREATE DOMAIN d AS int", "DROP SCHEMA s CASCADE", "CREATE OR REPLACE VIEW w AS SELECT 1",
        "CREATE EXTENSION hstore", "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'"}) {
    CAPTURE(ddl);
    auto facts = registry.intern(ddl, {})->facts;
    REQUIRE(facts != nullptr);
    CHECK(sw::session::changes_schema(*facts));
  }
  CHECK_FALSE(sw::session::changes_schema(*registry.intern("SELECT * FROM t", {})->facts));
  CHECK_FALSE(sw::session::changes_schema(*registry.intern("TRUNCATE t", {})->facts));
}
