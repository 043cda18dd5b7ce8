// Session: SQL-level PREPARE / EXECUTE / DEALLOCATE (sql_prepared.h, docs/architecture.md §5.7).
// With several shards EXECUTE of a statement the client prepared runs as that statement with its
// arguments in place, routed by its key like any other; in transaction pooling the server forgets
// the PREPARE again at once (the next client of that server must not meet it), and DEALLOCATE of
// a statement the proxy knows is answered by the proxy. With one shard in transaction pooling the
// servers run them as PostgreSQL does: each server the client borrows is brought to hold exactly
// its statements under its names (server_state.h), and the proxy only notes what they hold.
#include <algorithm>

#include "session/error_position.h"
#include "session/prepared_view.h"
#include "session/session.h"
#include "sqltext/catalog_sql.h"
#include "wire/messages.h"

namespace sw::session {

// Several shards: EXECUTE runs as the statement it names, routed by its arguments.
bool Session::expands_sql_execute() const {
  return host_.directory() && host_.directory()->shards().size() > 1;
}

// The proxy keeps the client's PREPAREs: to expand EXECUTE, or for the servers it borrows.
bool Session::tracks_sql_prepared() const { return !pools_.session_from_start() || expands_sql_execute(); }

// Transaction pooling with one shard: every server the client borrows holds its statements.
bool Session::servers_hold_sql_prepared() const {
  return !pools_.session_from_start() && !expands_sql_execute();
}

// The Query at the front of the input: analyzed at its first look (routing), the same facts at
// every later one (forwarding), without copying its text. For an EXECUTE of a statement this
// client prepared, the facts are those of the statement it runs instead (or it is refused).
const FrontQuery& Session::front_query(const wire::Frame& frame, std::string_view sql) {
  FrontQuery& front = request_.front;
  if (front.body != nullptr && front.body == frame.body.data() && front.size == frame.body.size())
    return front;
  front.forget();
  front.body = frame.body.data();
  front.size = frame.body.size();
  auto facts = parser::analyze(sql);
  if (!facts) return front;
  front.facts = std::move(*facts);
  profile_.schema_changes.note_sent(*front.facts);
  if (prepare_transaction_as_rollback(front)) return front;
  if (!tracks_sql_prepared()) return front;
  const auto& statements = front.facts->statements;
  bool runs_sql_statement = false;  // an EXECUTE of the client's PREPARE, expanded
  for (const auto& statement : statements) {
    // Nothing to refuse or run instead (the common case, once per Query: no calls, no Status).
    if (statement.kind != parser::StatementKind::Prepare && profile_.sql_statements.size() == 0 &&
        profile_.statements.empty())
      continue;
    if (Status duplicate = refuse_duplicate_prepare(statement); !duplicate.is_ok()) {
      front.refused = std::move(duplicate);
      break;
    }
    auto execute = client_execute(statement);
    parser::SqlExecute protocol;
    if (!execute && protocol_execute(statement, &protocol)) execute = std::move(protocol);
    if (!execute) continue;
    if (statements.size() != 1) {
      front.refused = Status::client("0A000", "EXECUTE " + execute->name +
                                                  " inside a query of several statements cannot run through "
                                                  "shardwire; send the EXECUTE as a query of its own");
      break;
    }
    if (profile_.sql_statements.find(execute->name) == nullptr) {  // a protocol-level statement
      front.refused = rename_protocol_execute(sql, statement, front);
      break;
    }
    auto expanded = expand_client_execute(sql, statement, *execute, &front.refused_detail);
    if (!expanded) {
      front.refused = expanded.status();
      break;
    }
    front.expanded = std::move(expanded->sql);
    front.expanded_pieces = std::move(expanded->pieces);
    runs_sql_statement = true;
    break;
  }
  if (!front.refused.is_ok()) {
    front.facts = nullptr;
  } else if (runs_sql_statement) {
    auto expanded = parser::analyze(front.expanded);
    front.facts = expanded ? std::move(*expanded) : nullptr;
    if (front.facts && reads_prepared_view(*front.facts))
      if (auto read = read_view_in_expanded(front.expanded, front.expanded_pieces, *front.facts))
        front.facts = std::move(read);
  } else if (front.facts && reads_prepared_view(*front.facts)) {
    rewrite_prepared_view(sql, front);
  }
  return front;
}

// The EXECUTE of a statement this client prepared that `statement` runs (alone, in EXPLAIN, in
// CREATE TABLE AS); nullopt when it runs none, or when the servers keep the client's statements.
// With one shard in transaction pooling the servers hold the statement, but one that reads
// pg_prepared_statements runs as its text all the same: each EXECUTE lists the client's
// statements of its moment (§5.3, "pg_prepared_statements").
std::optional<parser::SqlExecute> Session::client_execute(const parser::StatementFacts& statement) const {
  if (profile_.sql_statements.size() == 0) return std::nullopt;
  const bool expands = expands_sql_execute();
  if (!expands && !servers_hold_sql_prepared()) return std::nullopt;
  if (statement.kind != parser::StatementKind::Execute && statement.node_type != "ExplainStmt" &&
      statement.node_type != "CreateTableAsStmt")
    return std::nullopt;
  auto execute = parser::sql_execute(statement.text);
  if (!execute) return std::nullopt;
  const parser::SqlPrepare* prepared = profile_.sql_statements.find(execute->name);
  if (prepared == nullptr || (!expands && !may_read_prepared_view(prepared->query))) return std::nullopt;
  return execute;
}

// `sql` (the client's text, `statement` one of its statements) with the EXECUTE replaced by the
// statement it runs; PostgreSQL's error (and `*detail`) when the arguments do not fit.
Result<parser::ExpandedSql> Session::expand_client_execute(std::string_view sql,
                                                           const parser::StatementFacts& statement,
                                                           const parser::SqlExecute& execute,
                                                           std::string* detail) const {
  const parser::SqlPrepare& prepared = *profile_.sql_statements.find(execute.name);
  auto expanded = parser::expand_execute(sql, static_cast<uint32_t>(std::max(statement.begin.location, 0)),
                                         execute, prepared);
  if (!expanded && expanded.status().sqlstate == "42601" && detail != nullptr)
    *detail = "Expected " + std::to_string(prepared.parameter_count()) + " parameters but got " +
              std::to_string(execute.args.size()) + ".";
  return expanded;
}

// PREPARE of a name the client has prepared already (either protocol: one namespace, as on a
// server, whose copy the proxy forgot): PostgreSQL's 42P05.
Status Session::refuse_duplicate_prepare(const parser::StatementFacts& statement) const {
  if (statement.kind != parser::StatementKind::Prepare) return Status::ok();
  auto prepare = parser::sql_prepare(statement.text);
  if (!prepare || (profile_.sql_statements.find(prepare->name) == nullptr &&
                   !profile_.statements.contains(prepare->name)))
    return Status::ok();
  return Status::client("42P05", "prepared statement \"" + prepare->name + "\" already exists");
}

// `parse`: the rewrite of the Parse the error answers, if any; else the Query in progress's.
std::string Session::client_error_position(const wire::Frame& error, const RewrittenText* parse) {
  const auto& rewritten = request_.rewritten_queries;
  if (parse == nullptr &&
      (rewritten.empty() || request_.queries.empty() || request_.queries.front() != rewritten.front().facts))
    return {};
  const std::optional<uint32_t> position = error_position(error.body);
  if (!position) return {};
  const RewrittenText& text = parse != nullptr ? *parse : rewritten.front();
  return error_with_position(
      error.body, client_position(*position, text.server_sql.sql, text.client_sql, text.server_sql));
}

namespace {

// Routes when converted: optional::emplace builds the Route in place from the returned value.
struct RouteOf {
  const parser::QueryFacts& facts;
  const router::Directory& directory;
  const router::RoutingRules& rules;
  operator router::Route() const {  // NOLINT(google-explicit-constructor)
    return router::route_query(facts, nullptr, directory, rules);
  }
};

}  // namespace

router::Route& Session::front_route(const parser::QueryFacts& facts) {
  if (kept_front_route(facts) != nullptr) return *request_.front.route;
  return request_.front.route.emplace(RouteOf{facts, *host_.directory(), host_.routing_rules()});
}

router::Route Session::take_front_route() {
  router::Route route = std::move(*request_.front.route);
  request_.front.route.reset();
  return route;
}

const router::Route* Session::kept_front_route(const parser::QueryFacts& facts) const {
  return request_.front.route && request_.front.facts.get() == &facts ? &*request_.front.route : nullptr;
}

// Transaction pooling with several shards: after the client's Query with PREPAREs, the server
// forgets them again (answers swallowed); EXECUTE runs the statements themselves (front_query).
void Session::forget_sql_prepares(const parser::QueryFacts& facts) {
  if (pools_.session_from_start() || servers_hold_sql_prepared()) return;
  std::string deallocate;
  for (const auto& statement : facts.statements) {
    if (statement.kind != parser::StatementKind::Prepare) continue;
    if (auto prepare = parser::sql_prepare(statement.text))
      deallocate += "DEALLOCATE " + sqltext::quote_identifier(prepare->name) + ";";
  }
  if (deallocate.empty()) return;
  std::string out;
  wire::encode_query(out, deallocate);
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(out);
  // The client's ReadyForQuery waits for this one: until then the server is not back in its pool,
  // and the client's next statement must not find it still attached (hold_until_restored).
  request_.restore_owed = true;
}

// A statement of a Query that succeeded: the client's prepared statements as the server has them.
// `source`: that Query's text.
void Session::note_sql_prepared(const parser::StatementFacts& statement, std::string_view source) {
  pool::Backend* backend = server_of(txn_.leg);
  if (statement.kind == parser::StatementKind::Prepare) {
    auto prepare = parser::sql_prepare(statement.text);
    if (!prepare) return;
    const std::string name = prepare->name;
    const uint64_t version =
        profile_.sql_statements.add(std::move(*prepare), statement.text + ";", std::string(source));
    if (backend != nullptr && servers_hold_sql_prepared()) backend->sql_prepared[name] = version;
    return;
  }
  bool all = statement.kind == parser::StatementKind::DiscardAll;
  if (statement.kind == parser::StatementKind::Deallocate) {
    auto name = parser::sql_deallocate(statement.text);
    if (!name) return;
    all = name->empty();
    if (!all) {
      profile_.sql_statements.remove(*name);
      if (backend != nullptr) backend->sql_prepared.erase(*name);
    }
  }
  if (!all) return;
  // The server dropped its prepared statements, the shared ones of transaction pooling too.
  profile_.sql_statements.clear();
  profile_.statements.clear();
  if (backend == nullptr) return;
  backend->prepared.clear();
  backend->sql_prepared.clear();
}

// Transaction pooling: DEALLOCATE of a statement the proxy knows (or ALL) is answered here, the
// servers never kept it. False when a server must answer (an unknown name: 26000; a failed
// transaction: 25P02; a statement a server holds).
bool Session::answer_sql_deallocate(const parser::StatementFacts& statement, size_t frame_size) {
  if (pools_.session_from_start() || statement.kind != parser::StatementKind::Deallocate ||
      txn_.control.status() == 'E')
    return false;
  auto name = parser::sql_deallocate(statement.text);
  if (!name || !proxy_answers_deallocate(*name)) return false;
  forget_deallocated(*name);  // DEALLOCATE ALL drops protocol-level statements too
  std::string bytes;
  wire::encode_command_complete(bytes, name->empty() ? "DEALLOCATE ALL" : "DEALLOCATE");
  wire::encode_ready_for_query(bytes, txn_.control.status());
  if (txn_.leg.attached()) {
    answer_in_place(std::move(bytes));
    maybe_release_backend();
  } else {
    client_->write(bytes);
    consume_client(frame_size);
  }
  return true;
}

// DEALLOCATE of `name` ("" for ALL) in transaction pooling: the proxy answers it for the
// statements no server holds under the client's name (protocol-level ones always; SQL-level ones
// with several shards); the server runs it for the SQL-level statements it holds, and for ALL.
bool Session::proxy_answers_deallocate(const std::string& name) const {
  const bool sql_level = !name.empty() && profile_.sql_statements.find(name) != nullptr;
  if (servers_hold_sql_prepared()) return !name.empty() && !sql_level && profile_.statements.contains(name);
  return name.empty() || sql_level || profile_.statements.contains(name);
}

}  // namespace sw::session
