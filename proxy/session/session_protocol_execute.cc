// Session: SQL EXECUTE of a client's protocol-level prepared statement where servers hold it under
// the proxy's name (transaction pooling, docs/architecture.md §5.3): PostgreSQL has one namespace
// for both kinds, so `EXECUTE name[(args)]` (alone, in EXPLAIN, in CREATE TABLE AS) runs the
// statement a Parse named `name` created. The server gets that statement's Parse first when it
// lacks it, as for a Bind, and the EXECUTE names it by the server's name; the rest of the client's
// text is sent as written, so an error's position is moved back into it (error_position.h).
// PostgreSQL's argument count check runs here, under the client's name. With several shards the
// EXECUTE is routed as its statement with the arguments in place (the expansion of SQL-level
// statements, without casts), and runs on that one shard; so too in session pooling, where the
// servers hold the client's names but the one that parsed it may be another shard's.
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

using parser::StatementKind;

// The client's protocol-level statement that `statement` EXECUTEs (`*execute` located), when the
// server knows it by another name; null otherwise.
std::shared_ptr<const PreparedStatement> Session::protocol_execute(const parser::StatementFacts& statement,
                                                                   parser::SqlExecute* execute) const {
  // Session pooling with one shard: the server that parsed it runs the EXECUTE as written.
  if ((pools_.session_pooling && !expands_sql_execute()) || profile_.statements.empty()) return nullptr;
  if (statement.kind != StatementKind::Execute && statement.node_type != "ExplainStmt" &&
      statement.node_type != "CreateTableAsStmt")
    return nullptr;
  auto found = parser::sql_execute(statement.text);
  if (!found) return nullptr;
  auto runs = profile_.statements.shared(found->name);
  if (runs) *execute = std::move(*found);
  return runs;
}

// `front` (the Query `sql`, whose only statement is `statement`) runs the protocol-level statement
// it EXECUTEs under the server's name; PostgreSQL's error when the arguments do not fit, or ours
// when it would need every shard.
Status Session::rename_protocol_execute(std::string_view sql, const parser::StatementFacts& statement,
                                        FrontQuery& front) {
  parser::SqlExecute execute;
  auto runs = protocol_execute(statement, &execute);
  if (!runs) return Status::ok();
  const auto begin = static_cast<uint32_t>(std::max(statement.begin.location, 0));
  std::shared_ptr<const parser::QueryFacts> routing;
  if (auto prepared = parser::protocol_prepare(runs->query, runs->param_types.size())) {
    auto expanded = parser::expand_execute(sql, begin, execute, *prepared);
    if (!expanded) {
      if (expanded.status().sqlstate == "42601")
        front.refused_detail = "Expected " + std::to_string(prepared->parameter_count()) +
                               " parameters but got " + std::to_string(execute.args.size()) + ".";
      return expanded.status();
    }
    // A statement the proxy keeps (it reads pg_prepared_statements) runs as its text, the view
    // read as the client's statements now: no server holds it.
    if (!pools_.session_pooling && keeps_view_reader(*runs)) {
      auto facts = parser::analyze(expanded->sql);
      if (!facts) return Status::ok();  // as written: the server reports what is wrong
      front.expanded = std::move(expanded->sql);
      front.expanded_pieces = std::move(expanded->pieces);
      auto read = read_view_in_expanded(front.expanded, front.expanded_pieces, **facts);
      front.facts = read ? std::move(read) : std::move(*facts);
      return Status::ok();
    }
    if (expands_sql_execute()) {
      auto facts = parser::analyze(expanded->sql);
      if (facts) routing = std::move(*facts);
    }
  }
  if (routing) {
    const router::Route route =
        router::route_query(*routing, nullptr, *host_.directory(), host_.routing_rules());
    if (route.kind == router::RouteKind::Scatter || route.kind == router::RouteKind::AllShards ||
        route.kind == router::RouteKind::Split)
      return Status::client("0A000", "EXECUTE of the protocol-level prepared statement \"" + execute.name +
                                         "\" would need every shard; run it with Bind and Execute instead");
  }
  front.runs_name = execute.name;
  if (pools_.session_pooling) {  // the servers know it by the client's name: routed only
    front.runs = std::move(runs);
    if (routing) front.facts = std::move(routing);
    return Status::ok();
  }
  parser::ExpandedSql renamed = parser::rename_execute(sql, begin, execute, runs->server_name);
  front.expanded = std::move(renamed.sql);
  front.expanded_pieces = std::move(renamed.pieces);
  front.runs = std::move(runs);
  if (!routing) {
    auto facts = parser::analyze(front.expanded);
    if (facts) routing = std::move(*facts);
  }
  front.facts = std::move(routing);
  return Status::ok();
}

// Before a Query that EXECUTEs `front.runs`: its Parse (under the server's name, or in session
// pooling the client's), and a Sync so that a failed Parse does not
// make the server skip the Query (answer swallowed; the Parse's error reaches the client). A
// failed transaction block parses nothing: the EXECUTE fails there as it would anyway.
void Session::ensure_prepared_before_query(const FrontQuery& front) {
  if (txn_.control.status() == 'E') return;
  if (pools_.session_pooling) {
    if (txn_.leg.client_statements.count(front.runs_name) != 0) return;
    ensure_session_statement(front.runs_name);
  } else {
    if (active_server().prepared.count(front.runs->id) != 0) return;
    ensure_prepared(*front.runs);
  }
  std::string sync;
  wire::encode_sync(sync);
  expect(Owed::Sync, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(sync);
}

// A Parse of `query` that EXECUTEs a protocol-level statement (`*runs`): its text with the
// server's name (that statement parsed first), or with the statement's text in its place for one
// the proxy keeps (`*runs` null), or null when it is none. `*refused` when it cannot
// run. One shard only: with several, a Bind routes the Parse's statement by its own facts.
std::shared_ptr<const RewrittenText> Session::renamed_parse(std::string_view query, Status* refused,
                                                            std::shared_ptr<const PreparedStatement>* runs) {
  if (pools_.session_pooling || profile_.statements.empty() || expands_sql_execute()) return nullptr;
  auto facts = parser::analyze(query);
  if (!facts || (*facts)->statements.size() != 1) return nullptr;
  FrontQuery front;
  *refused = rename_protocol_execute(query, (*facts)->statements.front(), front);
  if (!refused->is_ok() || front.expanded.empty()) return nullptr;
  if (front.runs) ensure_prepared(*front.runs);  // none for a statement the proxy keeps
  *runs = front.runs;
  return std::make_shared<const RewrittenText>(
      RewrittenText{std::string(query), parser::ExpandedSql{front.expanded, front.expanded_pieces}});
}

}  // namespace sw::session
