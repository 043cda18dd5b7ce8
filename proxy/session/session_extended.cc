// Session: extended-protocol messages that name prepared statements. In session pooling they pass
// through untouched; in transaction pooling client names are mapped to shared server statements
// that are prepared lazily on whichever server runs them.
#include <utility>

#include "session/prepared_view.h"
#include "session/session.h"
#include "wire/bind_values.h"
#include "wire/messages.h"

namespace sw::session {

void Session::ensure_prepared(const PreparedStatement& statement, bool relay_errors) {
  if (active_server().prepared.count(statement.id) != 0) return;
  if (statement.runs) ensure_prepared(*statement.runs);  // the statement its EXECUTE names
  std::string parse;
  wire::encode_parse(parse, statement.server_name, statement.query, statement.param_types);
  active_server().connection().write(parse);
  active_server().prepared.insert(statement.id);
  // The client never sent this Parse; but if it fails, the client's Bind/Describe fails with it.
  expect(Owed::Parse, /*relay=*/false, statement.id, relay_errors);
}

// The unnamed statement was parsed on a server given back since (or only by the proxy): this
// server gets it before the Bind or Describe that names it. Its errors reach the client there.
void Session::ensure_unnamed_parsed() {
  if (!std::exchange(profile_.unnamed_elsewhere, false)) return;
  if (profile_.unnamed_runs) ensure_prepared(*profile_.unnamed_runs);  // the statement it EXECUTEs
  std::string parse;
  wire::encode_parse(parse, "", profile_.unnamed.query, profile_.unnamed.types);
  active_server().connection().write(parse);
  expect(Owed::Parse, /*relay=*/false, 0, /*relay_errors=*/true);
}

Status Session::forward_parse(const wire::Frame& frame) {
  auto parse = wire::decode_parse(frame.body);
  if (!parse) return parse.status();
  // An EXECUTE of a statement the client prepared is parsed as the statement it runs.
  Status refused_execute = Status::ok();
  std::optional<parser::ExpandedSql> expanded = expanded_execute(parse->query, &refused_execute);
  if (!refused_execute.is_ok()) {
    answer_with_error(refused_execute);
    return Status::ok();
  }
  // Its error's position is moved back into the client's text (client_error_position).
  std::shared_ptr<const RewrittenText> rewrite;
  if (expanded)
    rewrite = std::make_shared<const RewrittenText>(RewrittenText{std::string(parse->query), *expanded});
  std::shared_ptr<const PreparedStatement> runs;  // the protocol-level statement it EXECUTEs
  if (!expanded) rewrite = renamed_parse(parse->query, &refused_execute, &runs);
  if (!refused_execute.is_ok()) {
    answer_with_error(refused_execute);
    return Status::ok();
  }
  // The Parse of the statement this batch's Bind names was analyzed when the batch was routed, in
  // this pass over the same bytes (start_bound_batch).
  const BoundRoute* bound = request_.bound ? &*request_.bound : nullptr;
  auto facts = bound != nullptr && !bound->parse_query.empty() &&
                       bound->parse_query.data() == parse->query.data() &&
                       bound->parse_query.size() == parse->query.size()
                   ? Result<std::shared_ptr<const parser::QueryFacts>>(bound->facts)
                   : parser::analyze(rewrite ? std::string_view(rewrite->server_sql.sql) : parse->query);
  // The unnamed statement runs once, now: where it reads pg_prepared_statements, it reads the
  // client's statements (a named one is kept by the proxy: keeps_view_reader).
  if (!rewrite && facts && parse->statement.empty() && reads_prepared_view(**facts)) {
    if (auto view = prepared_view_rewrite(parse->query, **facts)) {
      describe_unresolved_statements(/*sync=*/false);
      if (auto rewritten = parser::analyze(view->sql)) {
        rewrite =
            std::make_shared<const RewrittenText>(RewrittenText{std::string(parse->query), std::move(*view)});
        facts = std::move(rewritten);
      }
    }
  }
  const std::string_view query = rewrite ? std::string_view(rewrite->server_sql.sql) : parse->query;
  if (facts && refuse_parse(**facts)) return Status::ok();
  if (parse->statement.empty()) {
    profile_.unnamed.query.assign(query);  // in place: a Parse per batch in -M extended
    profile_.unnamed.types = parse->param_types;
    profile_.unnamed.facts = facts ? *facts : nullptr;  // a later Bind reuses them
    profile_.unnamed_elsewhere = false;
    profile_.unnamed_runs = runs;
  }
  if (parse_sql_command(*parse, facts ? facts->get() : nullptr)) return Status::ok();
  if (pools_.session_pooling || parse->statement.empty()) {
    forward_parse_as_sent(frame, *parse, query, rewrite);
    return Status::ok();
  }
  forward_pooled_parse(*parse, query, std::move(runs), rewrite);
  return Status::ok();
}

bool Session::refuse_parse(const parser::QueryFacts& facts) {
  profile_.schema_changes.note_sent(facts);
  for (const auto& statement : facts.statements) {
    Status refused = refuse_protected_setting(statement);
    if (refused.is_ok()) refused = refuse_two_phase(statement);
    if (refused.is_ok()) refused = refuse_unpoolable(statement);
    if (!refused.is_ok()) {
      // The server fails with it, as it fails a Parse it refuses: a transaction block the
      // client is in is failed there too (and a deferred one here).
      txn_.control.abort_if_deferred();
      inject_abort(refused, /*extended=*/true);
      return true;
    }
  }
  return false;
}

void Session::forward_parse_as_sent(const wire::Frame& frame, const wire::ParseMessage& parse,
                                    std::string_view query,
                                    const std::shared_ptr<const RewrittenText>& rewrite) {
  // Session pooling: a name this server holds already is the server's 42P05 to answer, and
  // stays defined.
  const bool held = txn_.leg.client_statements.count(parse.statement) != 0;
  if (pools_.session_pooling && !held) note_session_parse(parse.statement, query, parse.param_types);
  expect_parse(held ? std::string_view() : parse.statement, 0, /*answered=*/false, rewrite);
  if (rewrite) {
    std::string rewritten;
    wire::encode_parse(rewritten, parse.statement, query, parse.param_types);
    active_server().connection().write(rewritten);
  } else {
    active_server().connection().write(whole(frame));
  }
}

void Session::forward_pooled_parse(const wire::ParseMessage& parse, std::string_view query,
                                   std::shared_ptr<const PreparedStatement> runs,
                                   const std::shared_ptr<const RewrittenText>& rewrite) {
  auto statement = host_.statements().intern(query, parse.param_types,
                                             profile_.settings.current("search_path"), std::move(runs));
  const PreparedStatement* existing = profile_.statements.find(parse.statement);
  // A fence retry replays the Parse that already registered the name: that one is no duplicate.
  // A name the client PREPAREd in SQL is taken too: one namespace, as on a server (§5.7).
  if ((existing != nullptr && !(fence_.replaying() && same_parse(*existing, *statement))) ||
      profile_.sql_statements.find(parse.statement) != nullptr) {
    answer_with_error(Status::client(
        "42P05", "prepared statement \"" + std::string(parse.statement) + "\" already exists"));
    return;
  }
  profile_.statements.add(parse.statement, statement);
  if (keeps_view_reader(*statement)) {
    parse_view_reader_for(parse.statement, *statement);
    return;
  }
  if (active_server().prepared.count(statement->id) != 0) {
    expect_parse(parse.statement, statement->id, /*answered=*/true);
    return;
  }
  std::string rewritten;
  wire::encode_parse(rewritten, statement->server_name, statement->query, statement->param_types);
  active_server().connection().write(rewritten);
  active_server().prepared.insert(statement->id);
  expect_parse(parse.statement, statement->id, /*answered=*/false, rewrite);
}

// The client's Parse of `client_name` (statement `statement`, 0 in session pooling), sent to the
// server or `answered` by the proxy in its place (its server statement is there already). If the
// server fails or skips it, the name is not defined (forget_failed_parses).
void Session::expect_parse(std::string_view client_name, uint64_t statement, bool answered,
                           std::shared_ptr<const RewrittenText> rewritten) {
  Expectation e;
  e.rewritten = std::move(rewritten);
  e.owed = answered ? Owed::Synthetic : Owed::Parse;
  e.parse_complete = answered;
  e.statement = statement;
  std::string now;
  txn_.leg.tracker.expect(std::move(e), client_name, &now);
  to_client(now);
}

// Parses the server failed, or skipped after an error: their server statements are not on this
// server, and the client's names they were to define are not defined (a later Parse of the name
// is no duplicate). A name is forgotten only while it names that statement still: a Close and a
// new Parse of it sent meanwhile (pipelined) stand.
void Session::forget_failed_parses() {
  LegAnswers& leg = txn_.leg;
  for (const FailedParse& failed : leg.tracker.failed_parses()) {
    if (failed.on_server) active_server().prepared.erase(failed.statement);
    if (failed.statement != 0) host_.statements().forget_failed(failed.statement);
    if (failed.client_name.empty()) continue;
    const PreparedStatement* named = profile_.statements.find(failed.client_name);
    if (named == nullptr || (failed.statement != 0 && named->id != failed.statement)) continue;
    profile_.statements.remove(failed.client_name);
    if (pools_.session_pooling) leg.client_statements.erase(failed.client_name);
  }
  leg.tracker.clear_failed_parses();
}

// The server refused to run a shared statement as prepared: 0A000, "cached plan must not change
// result type" (a table it reads was altered or recreated since), or XX000, "cache lookup failed
// for type" (a type its parameters were resolved to was dropped). The registry retires it, so a
// later Parse of its text prepares a statement of its own, planned anew, as a Parse on
// PostgreSQL is; a client that holds it keeps it, as its statement would keep failing there.
void Session::retire_if_stale(const wire::Frame& error, const ResponseTracker::Outcome& outcome) {
  const Owed owed = outcome.finished.owed;
  if (!outcome.completed || outcome.finished.statement == 0 ||
      (owed != Owed::Bind && owed != Owed::DescribeStatement))
    return;
  auto fields = wire::decode_error_fields(error.body);
  if (!fields || (fields->sqlstate != "0A000" && fields->sqlstate != "XX000")) return;
  host_.statements().retire(outcome.finished.statement);
}

// Inside a transaction every Bind must route to the transaction's shard.
Status Session::check_bind_route(const wire::BindMessage& bind, bool pinned) {
  // A statement ran in this batch: a later Bind for another shard can no longer have the batch
  // ended early for it (close_batch_for_another_leg). A BEGIN alone does not count.
  const bool bound_before = std::exchange(request_.batch_bound, true);
  if (!host_.directory()) return Status::ok();
  std::string_view query;
  const std::vector<uint32_t>* types = nullptr;
  std::shared_ptr<const parser::QueryFacts> known;  // resolved at its Parse
  if (bind.statement.empty()) {
    query = profile_.unnamed.query;
    types = &profile_.unnamed.types;
    known = profile_.unnamed.facts;
  } else if (const PreparedStatement* statement = profile_.statements.find(bind.statement)) {
    query = statement->query;
    types = &statement->param_types;
    known = statement->facts;
  } else {
    return Status::ok();  // unknown statement: reported in its place by forward_bind
  }
  Result<std::shared_ptr<const parser::QueryFacts>> facts =
      known != nullptr ? Result<std::shared_ptr<const parser::QueryFacts>>(known) : parser::analyze(query);
  if (!facts || (*facts)->statements.size() != 1) return Status::ok();
  if ((*facts)->statements.front().kind == parser::StatementKind::Begin) request_.batch_bound = bound_before;
  auto check = [&](const router::Route& route) {
    note_for_every_leg(**facts);
    Status allowed = check_write(**facts, route);
    if (allowed.is_ok() && pinned) allowed = check_pinned(**facts, route);
    return allowed;  // returned as built: no copy of its strings for the routing Bind
  };
  const BoundRoute* bound = request_.bound ? &*request_.bound : nullptr;
  if (bound != nullptr && !pinned && bound->facts == *facts && bound->bind.data() == bind.rest.data() &&
      bound->bind == bind.rest) {
    // This Bind picked the server, in this pass (start_bound_batch). Its route is forgotten once
    // checked, after the answer is built in place (a returned local would be moved).
    struct ForgetBound {
      Request& request;
      ~ForgetBound() { request.forget_bound(); }
    } forget{request_};
    return check(bound->route);
  }
  request_.forget_bound();
  if (Status decoded = wire::decode_bind_values(bind.rest, *types, &request_.bind_values); !decoded.is_ok())
    return decoded;
  return check(router::route((*facts)->statements.front(), &request_.bind_values, *host_.directory(),
                             host_.routing_rules()));
}

Status Session::forward_bind(const wire::Frame& frame) {
  auto bind = wire::decode_bind(frame.body);
  if (!bind) return bind.status();
  // The Bind that picked this server was routed already; every later one is checked. Each counts
  // for the shards the transaction wrote.
  Status allowed = check_bind_route(*bind, /*pinned=*/!std::exchange(request_.routed, false));
  if (!allowed.is_ok()) {
    inject_abort(allowed, true);
    return Status::ok();
  }
  if (bind_sql_command(*bind)) return Status::ok();
  note_bound_settings(bind->statement);
  if (pools_.session_pooling || bind->statement.empty()) {
    if (bind->statement.empty()) ensure_unnamed_parsed();
    if (pools_.session_pooling) ensure_session_statement(bind->statement);
    expect(Owed::Bind);
    active_server().connection().write(whole(frame));
    return Status::ok();
  }
  const PreparedStatement* statement = profile_.statements.find(bind->statement);
  if (statement == nullptr) {
    answer_with_error(Status::client(
        "26000", "prepared statement \"" + std::string(bind->statement) + "\" does not exist"));
    return Status::ok();
  }
  if (keeps_view_reader(*statement)) {
    bind_view_reader(*bind, *statement);
    return Status::ok();
  }
  ensure_prepared(*statement);
  std::string& rewritten = request_.rewritten;
  rewritten.clear();
  wire::encode_bind_renamed(rewritten, *bind, statement->server_name);
  active_server().connection().write(rewritten);
  expect(Owed::Bind, true, statement->id);
  return Status::ok();
}

Status Session::forward_describe_or_close(const wire::Frame& frame) {
  auto target = wire::decode_target(frame.body);
  if (!target) return target.status();
  bool describe = frame.type == 'D';
  Owed owed = !describe ? Owed::Close : target->kind == 'S' ? Owed::DescribeStatement : Owed::DescribePortal;
  if (describe_sql_command(*target, describe)) return Status::ok();
  if (pools_.session_pooling || target->kind != 'S' || target->name.empty()) {
    if (describe && target->kind == 'S' && target->name.empty()) ensure_unnamed_parsed();
    if (pools_.session_pooling && target->kind == 'S')
      describe ? ensure_session_statement(target->name) : close_session_statement(target->name);
    expect(owed);
    active_server().connection().write(whole(frame));
    return Status::ok();
  }
  const PreparedStatement* statement = profile_.statements.find(target->name);
  if (!describe) {
    // Server statements are shared; closing only forgets the client's name, as a server would.
    profile_.statements.remove(target->name);
    std::string bytes;
    wire::encode_close_complete(bytes);
    answer_in_place(bytes);
    return Status::ok();
  }
  if (statement == nullptr) {
    answer_with_error(
        Status::client("26000", "prepared statement \"" + std::string(target->name) + "\" does not exist"));
    return Status::ok();
  }
  if (keeps_view_reader(*statement)) {
    describe_view_reader(*statement);
    return Status::ok();
  }
  ensure_prepared(*statement);
  std::string rewritten;
  wire::encode_target(rewritten, 'D', 'S', statement->server_name);
  active_server().connection().write(rewritten);
  expect(owed, true, statement->id);
  return Status::ok();
}

}  // namespace sw::session
