// Session: pg_prepared_statements in transaction pooling (docs/architecture.md §5.3,
// "pg_prepared_statements"). The servers hold a client's protocol-level statements under the
// proxy's names, shared with other clients, so a Query or an unnamed Parse that reads the view
// gets it replaced by a subquery of the client's own statements (prepared_view.h); a named one
// the proxy keeps and parses anew, unnamed, before each run. What the view shows of a statement
// that the proxy alone knows is kept here: the text of a Query that PREPAREd, and the parameter
// types a server resolved for a statement of the client's own (a Describe of the proxy's before a
// statement reads the view, answers swallowed).
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

// `sql`, a statement an EXECUTE runs instead (analyzed as `facts`; `pieces`: which of its bytes
// are the client's), reading the client's statements where it reads the view: both rewritten in
// place, the pieces mapping the new text to the client's still; its facts, null when unchanged.
std::shared_ptr<const parser::QueryFacts> Session::read_view_in_expanded(
    std::string& sql, std::vector<parser::ExpandedSql::Piece>& pieces,
    const parser::QueryFacts& facts) const {
  auto view = prepared_view_rewrite(sql, facts);
  if (!view) return nullptr;
  auto rewritten = parser::analyze(view->sql);
  if (!rewritten) return nullptr;
  std::vector<parser::ExpandedSql::Piece> composed;
  for (const auto& outer : view->pieces) {  // the new text's bytes that were `sql`'s
    for (const auto& inner : pieces) {      // `sql`'s bytes that are the client's
      const uint32_t lo = std::max(outer.source, inner.at);
      const uint32_t hi = std::min(outer.source + outer.length, inner.at + inner.length);
      if (lo < hi)
        composed.push_back({outer.at + (lo - outer.source), hi - lo, inner.source + (lo - inner.at)});
    }
  }
  sql = std::move(view->sql);
  pieces = std::move(composed);
  return std::move(*rewritten);
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

// Before a statement that reads the view runs on this server: the client's statements whose
// parameter types a server resolves and that nobody learned yet are parsed here if missing and
// described (answers swallowed; note_parameter_description keeps the types for later reads), so
// the subquery's join with the server's own rows gives them now. `sync` (before a Query): a Sync
// follows, answer swallowed, so a failed Parse does not make the server skip the Query; in an
// extended batch the errors reach the client, as a Bind's statement parsed first. Nothing in a
// failed transaction block (the statement fails there anyway) or when every type is known.
void Session::describe_unresolved_statements(bool sync) {
  if (txn_.control.status() == 'E') return;
  bool sent = false;
  for (const auto& [name, entry] : profile_.statements.all()) {
    const PreparedStatement& statement = *entry.statement;
    if (!statement.own || statement.resolved_types ||
        profile_.statements.resolved_types(statement.id) != nullptr || keeps_view_reader(statement))
      continue;
    ensure_prepared(statement, /*relay_errors=*/!sync);
    std::string describe;
    wire::encode_target(describe, 'D', 'S', statement.server_name);
    active_server().connection().write(describe);
    expect(Owed::DescribeStatement, /*relay=*/false, statement.id, /*relay_errors=*/!sync);
    sent = true;
  }
  if (!sent || !sync) return;
  std::string out;
  wire::encode_sync(out);
  expect(Owed::Sync, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(out);
}

// A protocol-level statement that reads the view, in transaction pooling: the proxy keeps it and
// never prepares it on a server under a shared name (its rows would be the moment of that Parse,
// and other clients' statements). Each Bind or Describe of it is preceded by an unnamed Parse of
// its text read as the client's statements at that moment (parse_view_reader).
bool Session::keeps_view_reader(const PreparedStatement& statement) const {
  return statement.facts != nullptr && answers_prepared_view(*statement.facts);
}

// The unnamed Parse, on this server, of `statement`'s text with the view replaced by the client's
// statements now; the rewrite (error positions map back), null when it goes as written. The
// server's unnamed statement is this one then: the client's own is parsed again before a Bind or
// Describe names it (ensure_unnamed_parsed).
std::shared_ptr<const RewrittenText> Session::parse_view_reader(const PreparedStatement& statement) {
  std::shared_ptr<const RewrittenText> rewrite;
  if (auto view = prepared_view_rewrite(statement.query, *statement.facts))
    rewrite = std::make_shared<const RewrittenText>(RewrittenText{statement.query, std::move(*view)});
  std::string parse;
  wire::encode_parse(parse, "", rewrite ? std::string_view(rewrite->server_sql.sql) : statement.query,
                     statement.param_types);
  active_server().connection().write(parse);
  if (!profile_.unnamed.query.empty() || profile_.unnamed.facts != nullptr) profile_.unnamed_elsewhere = true;
  return rewrite;
}

// The client's Parse of `client_name`, a statement the proxy keeps: its answer is the client's
// (the text checked by a server as PostgreSQL checks it at Parse). A statement whose parameter
// types the server resolves is described too (answer swallowed): the view shows them.
void Session::parse_view_reader_for(std::string_view client_name, const PreparedStatement& statement) {
  auto rewrite = parse_view_reader(statement);
  expect_parse(client_name, statement.id, /*answered=*/false, std::move(rewrite));
  if (!statement.own || statement.resolved_types) return;
  std::string describe;
  wire::encode_target(describe, 'D', 'S', "");
  active_server().connection().write(describe);
  expect(Owed::DescribeStatement, /*relay=*/false, statement.id, /*relay_errors=*/false);
}

// Not the client's: its ParseComplete is swallowed, its error is the Bind's or Describe's.
void Session::expect_view_reader_parse(std::shared_ptr<const RewrittenText> rewrite) {
  Expectation e;
  e.owed = Owed::Parse;
  e.relay = false;
  e.rewritten = std::move(rewrite);
  txn_.leg.tracker.expect(std::move(e), nullptr);
}

// A Bind of a statement the proxy keeps: it binds the unnamed statement parsed just before, after
// the client's statements' types are described as for any statement reading the view.
void Session::bind_view_reader(const wire::BindMessage& bind, const PreparedStatement& statement) {
  describe_unresolved_statements(/*sync=*/false);
  expect_view_reader_parse(parse_view_reader(statement));
  std::string& rewritten = request_.rewritten;
  rewritten.clear();
  wire::encode_bind_renamed(rewritten, bind, "");
  active_server().connection().write(rewritten);
  expect(Owed::Bind);
}

// A Describe of a statement the proxy keeps: PostgreSQL's answer for its text (ParameterDescription,
// RowDescription or NoData), from the unnamed statement parsed just before.
void Session::describe_view_reader(const PreparedStatement& statement) {
  expect_view_reader_parse(parse_view_reader(statement));
  std::string describe;
  wire::encode_target(describe, 'D', 'S', "");
  active_server().connection().write(describe);
  expect(Owed::DescribeStatement);
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
