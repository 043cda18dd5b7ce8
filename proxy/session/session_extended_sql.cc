// Session: SQL-level PREPARE / EXECUTE / DEALLOCATE sent in the extended protocol (a driver's
// command with parameters or with binary results: Parse, Bind, Describe, Execute of the unnamed
// statement), kept exactly as in the simple protocol (session_sql_prepared.cc):
//  * EXECUTE of a statement the client prepared runs as that statement with its arguments in
//    place, routed by its key; the result formats of the Bind play no part in that;
//  * a PREPARE is noted once its CommandComplete arrived, and in transaction pooling with several
//    shards the server forgets it again after the batch's Sync (answers swallowed);
//  * in transaction pooling DEALLOCATE of a name no server holds under the client's name (one of
//    its protocol-level statements; with several shards, its SQL-level ones too) is answered by the
//    proxy (proxy_answers_deallocate).
#include <utility>

#include "session/prepared_view.h"
#include "session/session.h"
#include "sqltext/catalog_sql.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

using parser::StatementKind;

const parser::StatementFacts* single(const parser::QueryFacts* facts) {
  return facts != nullptr && facts->statements.size() == 1 ? &facts->statements.front() : nullptr;
}

std::string no_data() { return std::string("n\0\0\0\4", 5); }

}  // namespace

// The statement an EXECUTE of a statement this client prepared runs instead (alone, in EXPLAIN or
// in CREATE TABLE AS), with `*refused` set when its arguments do not fit; nullopt when `query` is
// no such EXECUTE.
std::optional<parser::ExpandedSql> Session::expanded_execute(std::string_view query, Status* refused) const {
  // With one shard only an EXECUTE of a statement that reads the view runs as its text
  // (client_execute): a text that names no EXECUTE is not analyzed for it.
  if (profile_.sql_statements.size() == 0 ||
      (!expands_sql_execute() && !contains_ignoring_case(query, "execute")))
    return std::nullopt;
  auto facts = parser::analyze(query);
  const parser::StatementFacts* only = facts ? single(facts->get()) : nullptr;
  if (only == nullptr) return std::nullopt;
  auto execute = client_execute(*only);
  if (!execute) return std::nullopt;
  auto expanded = expand_client_execute(query, *only, *execute, nullptr);
  if (!expanded) {
    *refused = expanded.status();
    return std::nullopt;
  }
  if (auto runs = parser::analyze(expanded->sql); runs && reads_prepared_view(**runs))
    read_view_in_expanded(expanded->sql, expanded->pieces, **runs);
  return std::move(*expanded);
}

// A batch whose Bind names an EXECUTE is routed as the statement it runs.
Status Session::expand_batch_execute(ExtendedBatch& batch) {
  if (batch.kind != ExtendedBatch::Kind::Bound || !client_execute(batch.only())) return Status::ok();
  Status refused = Status::ok();
  auto expanded = expanded_execute(batch.query(), &refused);
  if (!refused.is_ok() || !expanded) return refused;
  if (auto facts = parser::analyze(expanded->sql); facts && (*facts)->statements.size() == 1)
    batch.facts = *facts;
  return Status::ok();
}

// The client's unnamed statement is a PREPARE or DEALLOCATE: remembered; true when the proxy
// answered the Parse itself (a DEALLOCATE it answers).
bool Session::parse_sql_command(const wire::ParseMessage& parse, const parser::QueryFacts* facts) {
  if (!parse.statement.empty()) return false;
  ExtendedSqlCommands& commands = profile_.sql_commands;
  commands.forget_unnamed();
  const parser::StatementFacts* only = single(facts);
  if (only == nullptr || !tracks_sql_prepared()) return false;
  if (only->kind == StatementKind::Prepare) {
    commands.unnamed_prepare = parser::sql_prepare(only->text);
    commands.unnamed_prepare_sql = only->text + ";";
    commands.unnamed_prepare_source.assign(parse.query);
    return false;
  }
  if (only->kind != StatementKind::Deallocate) return false;
  commands.unnamed_deallocate = parser::sql_deallocate(only->text);
  const std::optional<std::string>& name = commands.unnamed_deallocate;
  if (!name || pools_.session_pooling || txn_.control.status() == 'E') return false;
  if (!proxy_answers_deallocate(*name)) return false;  // a server runs it, or reports the unknown name
  commands.deallocate_answered = true;
  profile_.unnamed_elsewhere = true;  // no server parsed it
  std::string bytes;
  wire::encode_parse_complete(bytes);
  answer_in_place(bytes);
  return true;
}

// A Bind into the unnamed portal; true when the proxy answered it (a DEALLOCATE it answers).
bool Session::bind_sql_command(const wire::BindMessage& bind) {
  ExtendedSqlCommands& commands = profile_.sql_commands;
  if (!bind.portal.empty()) return false;
  commands.portal_runs_unnamed = bind.statement.empty();
  if (!commands.portal_answered()) return false;
  std::string bytes;
  wire::encode_bind_complete(bytes);
  answer_in_place(bytes);
  return true;
}

// A Describe of a DEALLOCATE the proxy answers: no parameters, no rows.
bool Session::describe_sql_command(const wire::TargetMessage& target, bool describe) {
  const ExtendedSqlCommands& commands = profile_.sql_commands;
  if (!describe || !target.name.empty()) return false;
  if (target.kind == 'P' && commands.portal_answered()) {
    answer_in_place(no_data());
    return true;
  }
  if (target.kind == 'S' && commands.deallocate_answered) {
    answer_in_place(std::string("t\0\0\0\6\0\0", 7) + no_data());
    return true;
  }
  return false;
}

// An Execute of the unnamed portal: a DEALLOCATE the proxy answers (true), or a PREPARE or
// DEALLOCATE a server runs, noted at its CommandComplete; a PREPARE is forgotten by a server of
// transaction pooling after the Sync.
bool Session::execute_sql_command(const wire::Frame& execute) {
  ExtendedSqlCommands& commands = profile_.sql_commands;
  if (execute.body.empty() || execute.body.front() != '\0' || !commands.portal_runs_unnamed) return false;
  if (commands.portal_answered()) {
    const std::string name = *commands.unnamed_deallocate;
    forget_deallocated(name);
    std::string bytes;
    wire::encode_command_complete(bytes, name.empty() ? "DEALLOCATE ALL" : "DEALLOCATE");
    answer_in_place(bytes);
    return true;
  }
  if (commands.unnamed_prepare) {
    commands.executed.push_back(
        {commands.unnamed_prepare, {}, commands.unnamed_prepare_sql, commands.unnamed_prepare_source});
    if (!pools_.session_pooling && !servers_hold_sql_prepared())
      commands.to_forget += "DEALLOCATE " + sqltext::quote_identifier(commands.unnamed_prepare->name) + ";";
  } else if (commands.unnamed_deallocate) {
    commands.executed.push_back({std::nullopt, *commands.unnamed_deallocate});
  }
  return false;
}

// DEALLOCATE name ("" for ALL) of the client's statements, SQL-level and protocol-level alike (one
// namespace on a server). The servers' own statements stay prepared: they are shared.
void Session::forget_deallocated(const std::string& name) {
  if (name.empty()) {
    profile_.sql_statements.clear();
    profile_.statements.clear();
    return;
  }
  profile_.sql_statements.remove(name);
  profile_.statements.remove(name);
}

// After the client's Sync went to the server: the PREPAREs of the batch are forgotten there (the
// next client of the server must not meet them). The client's ReadyForQuery waits for this one.
void Session::after_sql_command_sync() {
  ExtendedSqlCommands& commands = profile_.sql_commands;
  if (commands.to_forget.empty()) return;
  std::string out;
  wire::encode_query(out, commands.to_forget);
  commands.to_forget.clear();
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(out);
  request_.restore_owed = true;
}

// A CommandComplete relayed to the client: an executed PREPARE is now the client's, a DEALLOCATE
// forgot its statement.
void Session::on_sql_command_complete(std::string_view tag) {
  std::vector<ExtendedSqlCommands::Executed>& executed = profile_.sql_commands.executed;
  if (executed.empty() || (tag != "PREPARE" && tag != "DEALLOCATE" && tag != "DEALLOCATE ALL")) return;
  ExtendedSqlCommands::Executed done = std::move(executed.front());
  executed.erase(executed.begin());
  if (done.prepare) {
    // Session pooling: it lives on this server only, a DEALLOCATE of it runs here.
    if (pools_.session_pooling) txn_.leg.client_statements.emplace(done.prepare->name);
    const std::string name = done.prepare->name;
    const uint64_t version = profile_.sql_statements.add(std::move(*done.prepare),
                                                         std::move(done.prepare_sql), std::move(done.source));
    if (servers_hold_sql_prepared() && txn_.leg.attached()) active_server().sql_prepared[name] = version;
    return;
  }
  forget_deallocated(done.deallocate);
  if (servers_hold_sql_prepared() && txn_.leg.attached()) {
    // The server ran it: it holds that statement no more (none of them, nor the shared ones, for ALL).
    pool::Backend& backend = active_server();
    if (!done.deallocate.empty()) {
      backend.sql_prepared.erase(done.deallocate);
    } else {
      backend.sql_prepared.clear();
      backend.prepared.clear();
    }
  }
  // Session pooling: the other servers of the session drop it too (session_legs_reset.cc).
  if (pools_.session_pooling)
    drop_session_statements(done.deallocate.empty() ? std::nullopt
                                                    : std::optional<std::string>(done.deallocate));
}

}  // namespace sw::session
