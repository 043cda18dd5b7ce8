// pg_prepared_statements as a client's own subquery in transaction pooling: its rows from the
// client's registries, typed when empty, literals quoted. (Run against PostgreSQL by the
// integration suite sql_prepare.)
#include <doctest/doctest.h>

#include <string>

#include "session/prepared_view.h"

using sw::session::ClientStatements;
using sw::session::prepared_statements_subquery;
using sw::session::SqlStatements;
using sw::session::StatementRegistry;
using sw::session::utc_timestamp_text;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("prepared view: no statements, one typed row filtered out") {
  const std::string sql = prepared_statements_subquery(ClientStatements(), SqlStatements(), true);
  CHECK(contains(sql,
                 "(VALUES (NULL::pg_catalog.text, NULL::pg_catalog.text, NULL::pg_catalog.timestamptz, "
                 "NULL::pg_catalog.regtype[], NULL::pg_catalog.regtype[], NULL::pg_catalog.bool, "
                 "NULL::pg_catalog.text))"));
  CHECK(contains(sql, "WHERE v.name IS NOT NULL"));
  CHECK(contains(sql, "LEFT JOIN pg_catalog.pg_prepared_statements s ON s.name = v.server_name"));
}

TEST_CASE("prepared view: a protocol-level statement shows the client's name and text, the types it knows") {
  StatementRegistry registry;
  ClientStatements client;
  client.add("it's", registry.intern("SELECT $1::int, 'a\\b'", {23}), 1'000'000);
  const std::string sql = prepared_statements_subquery(client, SqlStatements(), true);
  CHECK(contains(
      sql,
      ",('it''s',E'SELECT $1::int, ''a\\\\b''','1970-01-01 00:00:01.000000+00',"
      "'{23}'::pg_catalog.oid[]::pg_catalog.regtype[],'{23}'::pg_catalog.oid[]::pg_catalog.regtype[],"
      "false,'sw_1')"));

  // A type left to the server: unknown until a server described it, then the server's.
  ClientStatements own;
  auto statement = registry.intern("SELECT $1", {0});
  own.add("o", statement, 0);
  CHECK(contains(prepared_statements_subquery(own, SqlStatements(), true),
                 ",('o','SELECT $1','1970-01-01 00:00:00.000000+00',NULL,"
                 "'{705}'::pg_catalog.oid[]::pg_catalog.regtype[],false,'sw_2')"));
  own.note_resolved_types(statement->id, {25});
  CHECK(contains(
      prepared_statements_subquery(own, SqlStatements(), true),
      ",('o','SELECT $1','1970-01-01 00:00:00.000000+00','{25}'::pg_catalog.oid[]::pg_catalog.regtype[]"));
  own.remove("o");
  CHECK(own.resolved_types(statement->id) == nullptr);
}

TEST_CASE(
    "prepared view: a SQL-level statement shows the client's text, from_sql, the server's row by its name") {
  SqlStatements sql_statements;
  auto prepare = sw::parser::sql_prepare("PREPARE q (bigint, text) AS SELECT $1, $2");
  REQUIRE(prepare);
  sql_statements.add(*prepare, "PREPARE q (bigint, text) AS SELECT $1, $2;",
                     "PREPARE q (bigint, text) AS SELECT $1, $2", 1'500'000);
  const std::string one_shard = prepared_statements_subquery(ClientStatements(), sql_statements, true);
  CHECK(contains(one_shard,
                 ",('q','PREPARE q (bigint, text) AS SELECT $1, $2','1970-01-01 00:00:01.500000+00',NULL,"
                 "ARRAY[pg_catalog.to_regtype('bigint'),pg_catalog.to_regtype('text')]::pg_catalog."
                 "regtype[],true,'q')"));
  // Several shards: no server holds it.
  CHECK(contains(prepared_statements_subquery(ClientStatements(), sql_statements, false),
                 "]::pg_catalog.regtype[],true,NULL)"));
}

TEST_CASE("prepared view: times are UTC with microseconds") {
  CHECK(utc_timestamp_text(0) == "1970-01-01 00:00:00.000000+00");
  CHECK(utc_timestamp_text(1'796'601'845'000'006) == "2026-12-07 00:04:05.000006+00");
  CHECK(utc_timestamp_text(-1) == "1969-12-31 23:59:59.999999+00");
}

TEST_CASE("prepared view: a PREPAREd text that may name the view, in any letter case") {
  using sw::session::may_read_prepared_view;
  CHECK(may_read_prepared_view("SELECT name FROM pg_prepared_statements"));
  CHECK(may_read_prepared_view("select * from PG_CATALOG.PG_Prepared_Statements p"));
  CHECK_FALSE(may_read_prepared_view("SELECT $1 + 1"));
  CHECK_FALSE(may_read_prepared_view("SELECT * FROM pg_prepared_xacts"));
}
