// pg_prepared_statements as one client's session shows it on PostgreSQL, in transaction pooling
// (docs/architecture.md §5.3, "pg_prepared_statements"): the servers hold the client's
// protocol-level statements under the proxy's names, shared with other clients, so a statement
// that reads the view reads instead a subquery of the client's own statements (the parser splices
// it in, parser/prepared_view.h). Pure: no I/O.
#pragma once

#include <string>

#include "parser/analyze.h"
#include "session/prepared_statements.h"
#include "session/sql_prepared.h"

namespace sw::session {

// A SELECT with the view's columns (PostgreSQL 15: name, statement, prepare_time,
// parameter_types, from_sql, generic_plans, custom_plans) and a row per statement of `protocol`
// (the client's names, Parse texts, their Parse's time) and of `sql` (PREPAREs: the text the
// client sent, from_sql). Parameter types: those the Parse declared or a server resolved for it
// (ClientStatements::resolved_types); else the server's own row for the statement's server name;
// else as declared (a type left to the server: `unknown`). Plan counts: the server's row for the
// server name (a shared statement's count other clients' executions on that server too), else 0.
// `servers_hold_sql`: the servers hold the SQL-level statements under the client's names (one
// shard, §5.7). Zero rows, typed, for a client with none.
// Some statement of `facts` reads the view: the first statement's flag read inline, the rest
// looked at only when there are several (every Query and unnamed Parse asks; nearly none do).
inline bool reads_prepared_view(const parser::QueryFacts& facts) {
  const auto& statements = facts.statements;
  if (statements.size() == 1) return statements.front().reads_prepared_statements;
  for (const auto& statement : statements)
    if (statement.reads_prepared_statements) return true;
  return false;
}

// `text` holds `lower_word` in any letter case: a cheap test before analyzing it.
bool contains_ignoring_case(std::string_view text, std::string_view lower_word);
// `text` (a statement the client PREPAREd) may name the view.
inline bool may_read_prepared_view(std::string_view text) {
  return contains_ignoring_case(text, "pg_prepared_statements");
}

std::string prepared_statements_subquery(const ClientStatements& protocol, const SqlStatements& sql,
                                         bool servers_hold_sql);

// `micros` since the Unix epoch as a timestamptz literal's text in UTC ("2026-01-02 03:04:05.000006+00").
std::string utc_timestamp_text(int64_t micros);

}  // namespace sw::session
