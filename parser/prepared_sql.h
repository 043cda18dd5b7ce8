// SQL-level PREPARE / EXECUTE / DEALLOCATE read from libpg_query's tree, and an EXECUTE rewritten
// as the statement it runs (docs/architecture.md §5.2). A server's prepared statement lives on one
// server, so where the proxy keeps a client's PREPARE itself (transaction pooling, several
// shards), it runs EXECUTE as that statement with the arguments in place of its parameters
// ($n -> (arg)::type), wherever PostgreSQL's grammar takes an EXECUTE: alone, in EXPLAIN, in
// CREATE TABLE AS, and in EXPLAIN CREATE TABLE AS. Pure: no I/O; never throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sw::parser {

// PREPARE name [(type, ...)] AS statement.
struct SqlPrepare {
  bool operator==(const SqlPrepare&) const = default;
  std::string name;                // as PostgreSQL folds it (unquoted: lower case)
  std::vector<std::string> types;  // the declared parameter types, as written
  std::string query;               // the statement after AS, as written
  bool select = false;             // the statement is a SELECT (CREATE TABLE AS EXECUTE takes only those)
  struct Param {
    bool operator==(const Param&) const = default;
    uint32_t at = 0;  // the "$n" at [at, at + length) in `query`
    uint32_t length = 0;
    int number = 0;  // n
  };
  std::vector<Param> params;  // every $n of the statement, in text order
  // The parameters an EXECUTE passes: the declared ones, or more when the statement uses a
  // higher $n (PostgreSQL infers their types).
  size_t parameter_count() const;
};

// EXECUTE name [(argument, ...)], alone or inside EXPLAIN / CREATE TABLE AS. Offsets are into the
// statement's text as given.
struct SqlExecute {
  bool operator==(const SqlExecute&) const = default;
  std::string name;  // as PostgreSQL folds it
  struct Argument {
    bool operator==(const Argument&) const = default;
    std::string text;  // as written
    uint32_t at = 0;   // where it begins
  };
  std::vector<Argument> args;
  uint32_t begin = 0;  // "EXECUTE name[(args)]" is [begin, end)
  uint32_t end = 0;
  uint32_t name_at = 0;  // the name as written (a word or a quoted identifier) is [name_at, name_end)
  uint32_t name_end = 0;
  bool create_table_as = false;  // CREATE TABLE ... AS EXECUTE (under EXPLAIN too)
  bool wrapped = false;          // inside EXPLAIN or CREATE TABLE AS
};

// One statement's text (StatementFacts::text); nullopt when it is not of that form, or cannot be
// located exactly in the text (the server then answers it as written).
std::optional<SqlPrepare> sql_prepare(std::string_view statement);
std::optional<SqlExecute> sql_execute(std::string_view statement);
// DEALLOCATE [PREPARE] name | ALL: the name, "" for ALL.
std::optional<std::string> sql_deallocate(std::string_view statement);

// `sql` (a client's whole Query or Parse text) with the EXECUTE of the statement at
// `statement_begin` replaced by `prepared`'s statement, each $n by (args[n-1])::types[n-1] (just
// (args[n-1]) when no type, or an empty one, was declared for it). Remembers which bytes came from `sql`, so
// a server's error position can be put back into the client's text.
struct ExpandedSql {
  std::string sql;
  struct Piece {
    uint32_t at = 0;  // [at, at + length) of `sql` is [source, source + length) of the client's text
    uint32_t length = 0;
    uint32_t source = 0;
  };
  std::vector<Piece> pieces;  // in order; bytes in no piece (the statement run instead) have no source
  // The client-text offset of byte `offset` of `sql`; nullopt when it has none.
  std::optional<uint32_t> source_offset(uint32_t offset) const;
};
// `sql` with the name of the EXECUTE of the statement at `statement_begin` replaced by
// `server_name` (a protocol-level statement the server holds under the proxy's name, §5.3).
ExpandedSql rename_execute(std::string_view sql, uint32_t statement_begin, const SqlExecute& execute,
                           std::string_view server_name);
// The statement of a protocol-level Parse (`query`, with `declared` parameter types) as a
// PREPARE's: its $n located, no type to cast to; nullopt when it does not parse as one statement.
std::optional<SqlPrepare> protocol_prepare(std::string_view query, size_t declared);
// 42601 when the arguments do not match the parameters; 42809 for CREATE TABLE AS EXECUTE of a
// statement that is not a SELECT (PostgreSQL's errors).
Result<ExpandedSql> expand_execute(std::string_view sql, uint32_t statement_begin, const SqlExecute& execute,
                                   const SqlPrepare& prepared);

}  // namespace sw::parser
