// Session: pg_prepared_statements in transaction pooling (docs/architecture.md §5.3,
// "pg_prepared_statements"). The servers hold a client's protocol-level statements under the
// proxy's names, shared with other clients, so a Query or an unnamed Parse that reads the view
// gets it replaced by a subquery of the client's own statements (prepared_view.h). What the view
// shows of a statement that the proxy alone knows is kept here: the text of a Query that
// PREPAREd, and the parameter types a server resolved for a statement of the client's own (a
// Describe of the proxy's after its first Parse, answers swallowed).
#include "parser/prepared_view.h"
#include "session/prepared_view.h"
#include "session/session.h"
#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::session {

// A statement of `facts` reads the view and the servers hold the client's statements under other
// names (transaction pooling). Callers on the per-statement path test reads_prepared_view first.
bool Session::answers_prepared_view(const parser::QueryFacts& facts) const {
  return reads_prepared_view(facts) && !pools_.session_from_start();
}

// `sql` (analyzed as `facts`) reading the client's statements where it reads the view; nullopt
// when it goes as written.
std::optional<parser::ExpandedSql> Session::prepared_view_rewrite(std::string_view sql,
                                                                  const parser::QueryFacts& facts) const {
  if (!answers_prepared_view(facts)) return std::nullopt;
  return parser::replace_prepared_statements_view(
      sql, facts,
      prepared_statements_subquery(profile_.statements, profile_.sql_statements,
                                   servers_hold_sql_prepared()));
}

// The front Query, unless rewritten already (an EXECUTE), reads the client's statements instead.
void Session::rewrite_prepared_view(std::string_view sql, FrontQuery& front) const {
  if (!front.expanded.empty() || !front.facts) return;
  auto rewritten = prepared_view_rewrite(sql, *front.facts);
  if (!rewritten) return;
  auto facts = parser::analyze(rewritten->sql);
  if (!facts) return;  // the text as written: the server answers it
  front.expanded = std::move(rewritten->sql);
  front.expanded_pieces = std::move(rewritten->pieces);
  front.facts = std::move(*facts);
}

// After the proxy's Parse of a statement whose parameter types the server resolves: a Describe of
// it (answers swallowed), whose ParameterDescription says which (note_parameter_description).
// Once per statement: a server that parses it again resolves the types of its first Parse or
// fails (the registry forgets a text once DDL ran, §5.3).
void Session::describe_parameters(const PreparedStatement& statement) {
  if (!statement.own || statement.resolved_types ||
      profile_.statements.resolved_types(statement.id) != nullptr)
    return;
  std::string describe;
  wire::encode_target(describe, 'D', 'S', statement.server_name);
  txn_.leg.backend->connection().write(describe);
  expect(Owed::DescribeStatement, /*relay=*/false, statement.id, /*relay_errors=*/false);
}

// A ParameterDescription ('t') from the server: the types of the statement a Describe of the
// proxy's names.
void Session::note_parameter_description(std::string_view body) {
  const Expectation* head = txn_.leg.tracker.head();
  if (head == nullptr || head->owed != Owed::DescribeStatement || head->relay || head->statement == 0) return;
  auto types = wire::decode_parameter_description(body);
  if (!types) return;
  for (const auto& [name, entry] : profile_.statements.all()) {
    if (entry.statement->id != head->statement) continue;
    host_.statements().note_resolved_types(*entry.statement, *types);  // for its text's later Parses
    profile_.statements.note_resolved_types(head->statement, std::move(*types));
    return;
  }
}

// A forwarded Query: when it PREPAREs, its text, which pg_prepared_statements shows.
void Session::note_prepare_source(const std::shared_ptr<const parser::QueryFacts>& facts,
                                  std::string_view sql) {
  if (request_.queries.size() == 1) request_.prepare_sources.clear();  // none other in progress
  for (const auto& statement : facts->statements) {
    if (statement.kind != parser::StatementKind::Prepare) continue;
    request_.prepare_sources.emplace_back(facts, std::string(sql));
    return;
  }
}

// The text of the finished Query `facts`, if it PREPAREd; "" otherwise.
std::string Session::take_prepare_source(const std::shared_ptr<const parser::QueryFacts>& facts) {
  auto& sources = request_.prepare_sources;
  if (sources.empty() || sources.front().first != facts) return {};
  std::string source = std::move(sources.front().second);
  sources.pop_front();
  return source;
}

}  // namespace sw::session
