// Session: reading client messages, and forwarding them to the transaction's server.
#include <utility>

#include "common/log.h"
#include "config/config.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Client input buffered beyond this while no server can take it stops further reads.
constexpr size_t kMaxBufferedClientInput = size_t{1024} * 1024;

bool is_extended(char type) {
  return type == 'P' || type == 'B' || type == 'D' || type == 'E' || type == 'C' || type == 'H';
}

}  // namespace

std::string_view Session::client_input() const {
  return fence_.replaying() ? fence_.replay_input() : client_->input();
}

void Session::consume_client(size_t n) {
  if (request_.front.body != nullptr) request_.front.forget();
  if (fence_.replaying())
    fence_.consume_replay(n);
  else
    client_->consume(n);
}

// No runner, or a MergeFanout parked at a portal's row limit (it takes the client's next message).
bool Session::runner_takes_client_input() const {
  const MergeFanout* merge = txn_.runner.get<MergeFanout>();
  return txn_.runner.empty() || (merge != nullptr && merge->parked());
}

// Whether the request's state lets an event that may read client input read on (the states
// that wait are moved on by their own events).
bool Session::request_reads_client_input() {
  switch (request_.state) {
    case RequestState::WaitingForLeg:
      set_request_state(RequestState::Routing);  // routed again: it waits once more if it must
      return true;
    case RequestState::Routing:
    case RequestState::Running:
    case RequestState::Answered: return true;
    case RequestState::WaitingForServer:    // on_backend_ready / on_backend_failed / RESUME go on
    case RequestState::WaitingForCutover:   // a new directory or the timeout goes on
    case RequestState::RetryingAfterFence:  // the directory poll goes on
    case RequestState::LentUntilSync:       // the lent server's ReadyForQuery goes on
      return false;
  }
  return false;
}

// Client input may be read (it arrived, or what held it back ended): every event that can let the
// session read on comes here, and the request's state says whether it does.
void Session::read_client_messages() {
  if (!request_reads_client_input()) return;
  request_.front.forget_route();  // routed in an earlier pass: the directory or the rules may have changed
  request_.forget_bound();
  if (txn_.runner.get<CopyIn>()) {
    feed_copy_in();
    return;
  }
  while (phase_ == Phase::Ready && reads_client_input(request_.state) && runner_takes_client_input() &&
         !txn_.two_phase) {
    auto result = wire::read_frame(client_input(), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      LOG_INFO("client=c%llu protocol violation: %s", (unsigned long long)id(), result.error.c_str());
      terminate(Status::client("08P01", result.error));
      return;
    }
    const wire::Frame& frame = result.frame;
    if (frame.type == 'X') {
      close("client sent Terminate");
      return;
    }
    if (txn_.parked_busy()) return;  // on_leg_caught_up reads on once they answered
    if (Next next = continue_held_portal(frame); next != Next::Forward) {  // a portal at its row limit
      if (next == Next::Continue) continue;
      return;
    }
    if (request_.skip_until_sync && frame.type != 'S') {
      consume_client(frame.size);
      continue;
    }
    if (frame.type == 'P') {
      Next next = prepare_transaction_batch_as_query();
      if (next == Next::Continue) continue;
      if (next == Next::Stop) return;
    }
    if (Next next = merged_cursor_statement(frame); next != Next::Forward) {
      if (next == Next::Continue) continue;
      return;
    }
    restore_parked_leg();
    const bool started = !txn_.leg.attached();
    if (started) {
      Next next = start_without_server(frame);
      if (next == Next::Continue) continue;
      if (next == Next::Stop) return;
    }
    if (frame.type == 'Q' && txn_.control.movable() && needs_move(frame)) {
      move_transaction();
      return;
    }
    const bool batch_start = is_extended(frame.type) && frame.type != 'H' && !request_.batch_open;
    const bool first_bind = frame.type == 'B' && request_.batch_open && !request_.batch_bound;
    if (!started && (frame.type == 'Q' || batch_start || first_bind)) {
      Next next = frame.type == 'Q' ? route_across_legs(frame)
                  : batch_start     ? route_batch_across_legs()
                                    : close_batch_for_another_leg();
      if (next == Next::Continue) continue;
      if (next == Next::Stop) return;
    }
    if (!started && ((frame.type == 'B' && request_.batch_bound) ||
                     (frame.type == 'S' && txn_.spread != SpreadBatch::None))) {
      Next next = frame.type == 'B' ? spread_batch_to_another_leg() : end_spread_batch(frame);
      if (next == Next::Continue) continue;
      if (next == Next::Stop) return;
    }
    if (active_server().connection().over_high_water()) {
      client_->pause_reading();  // resumed by on_leg_drained
      return;
    }
    if (frame.type == 'S') request_.skip_until_sync = false;
    fence_.capture(whole(frame));
    if (clock_.request_started_us == 0) note_request_start();
    Status status = forward(frame);
    consume_client(frame.size);
    if (!status) {
      terminate(status);
      return;
    }
  }
}

// The frame at the front of the input starts a request and no server is attached: answer it,
// route it and attach a server, or wait.
Session::Next Session::start_without_server(const wire::Frame& frame) {
  if (answer_without_server(frame)) {
    consume_client(frame.size);
    set_request_state(RequestState::Answered);
    return Next::Continue;
  }
  if (host_.hold_if_paused(this)) {
    legs_.stop_waiting();  // PAUSE: no new transaction until RESUME
    set_request_state(RequestState::WaitingForServer);
    return Next::Stop;
  }
  set_request_state(RequestState::Routing);
  int shard = -1;
  Start start = start_request(frame, &shard);
  if (start == Start::Answered) {
    if (request_.state == RequestState::Routing) set_request_state(RequestState::Answered);
    return Next::Continue;
  }
  if (start == Start::Wait) return Next::Stop;
  if (!acquire_backend(shard)) {
    if (client_->input().size() > kMaxBufferedClientInput) client_->pause_reading();
    return Next::Stop;
  }
  return Next::Forward;
}

// Between transactions some messages need no server, and a client that blocks on them (pgbench
// -M prepared prepares synchronously) must not wait for one: a Sync with nothing before it, a
// Flush, closing a statement, and preparing a statement some server has already accepted.
bool Session::answer_without_server(const wire::Frame& frame) {
  std::string out;
  switch (frame.type) {
    case 'H': return true;
    case 'S':
      request_.skip_until_sync = false;
      wire::encode_ready_for_query(out, txn_.control.status());
      break;
    case 'P': {
      // The unnamed statement (its name, first in the body, is empty) always goes to a server:
      // known without decoding the rest.
      if (pools_.session_pooling || frame.body.empty() || frame.body.front() == '\0') return false;
      auto parse = wire::decode_parse(frame.body);
      if (!parse || parse->statement.empty()) return false;
      auto statement = host_.statements().intern(parse->query, parse->param_types,
                                                 profile_.settings.current("search_path"));
      // A name the client PREPAREd in SQL: forward_parse answers its 42P05.
      if (!statement->validated || profile_.sql_statements.find(parse->statement) != nullptr) return false;
      const PreparedStatement* existing = profile_.statements.find(parse->statement);
      if (existing != nullptr && !(fence_.replaying() && same_parse(*existing, *statement))) {
        wire::encode_error(out, "ERROR", "42P05",
                           "prepared statement \"" + std::string(parse->statement) + "\" already exists");
        request_.skip_until_sync = true;
      } else {
        profile_.statements.add(parse->statement, statement);
        wire::encode_parse_complete(out);
      }
      break;
    }
    case 'C': {
      auto target = wire::decode_target(frame.body);
      if (!target) return false;
      // No server attached: no portal is open (each ends with its transaction, which holds its
      // server), and closing one that does not exist is no error (node-postgres closes its
      // cursor's portal after an error, with no Sync).
      if (target->kind == 'P') {
        wire::encode_close_complete(out);
        break;
      }
      if (pools_.session_pooling || target->name.empty()) return false;
      profile_.statements.remove(target->name);
      wire::encode_close_complete(out);
      break;
    }
    default: return false;
  }
  client_->write(out);
  return true;
}

// No server could take the client's next request: answer it with `why` exactly as a server
// answers a failed request, so the client stays usable.
void Session::reject_pending_request(const Status& why, std::string_view detail) {
  auto result = wire::read_frame(client_->input(), wire::Sender::Client, limits_);
  bool simple =
      result.status == wire::FrameStatus::Complete && (result.frame.type == 'Q' || result.frame.type == 'F');
  std::string out;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message, detail);
  if (simple) {
    client_->consume(result.frame.size);
    if (request_.front.body != nullptr) request_.front.forget();
    wire::encode_ready_for_query(out, txn_.control.status());
  } else {
    request_.skip_until_sync = true;
  }
  client_->write(out);
}

void Session::expect(Owed owed, bool relay, uint64_t statement, bool relay_errors) {
  Expectation e;
  e.owed = owed;
  e.relay = relay;
  e.relay_errors = relay_errors;
  e.statement = statement;
  txn_.leg.tracker.expect(std::move(e), nullptr);
}

void Session::answer_in_place(std::string_view bytes) {
  Expectation e;
  e.owed = Owed::Synthetic;
  std::string now;
  txn_.leg.tracker.expect(std::move(e), bytes, &now);
  to_client(now);
}

// An error the proxy gives in place of a server answer, in its exact place in the stream; the
// rest of the client's extended-protocol batch is skipped like a server skips it.
void Session::answer_with_error(const Status& error) {
  std::string bytes;
  wire::encode_error(bytes, "ERROR", error.sqlstate, error.message);
  answer_in_place(bytes);
  request_.skip_until_sync = true;
}

Status Session::forward(const wire::Frame& frame) {
  if (is_extended(frame.type)) request_.batch_open = true;
  if (frame.type != 'Q') txn_.control.on_statement_sent(nullptr);
  switch (frame.type) {
    case 'Q': return forward_query(frame);
    case 'P': return forward_parse(frame);
    case 'B': return forward_bind(frame);
    case 'D':
    case 'C': return forward_describe_or_close(frame);
    case 'E':
      if (execute_sql_command(frame)) return Status::ok();
      expect_execute();
      break;
    case 'S':
      expect(Owed::Sync);
      request_.batch_open = false;
      request_.batch_bound = false;
      break;
    case 'F': expect(Owed::Query); break;
    case 'H':
      // Every answer owed so far goes to the client as it comes, none held for a fence retry.
      fence_.on_flush([this](std::string_view held) { client_->write(held); });
      if (std::exchange(request_.lend_at_flush, false)) {
        lend_until_sync(frame);
        return Status::ok();
      }
      break;
    case 'd': break;
    case 'c':
    case 'f': txn_.leg.tracker.on_client_copy_end(); break;
    default: return Status::client("08P01", std::string("unexpected message type '") + frame.type + "'");
  }
  active_server().connection().write(whole(frame));
  if (frame.type == 'S') after_sql_command_sync();
  return Status::ok();
}

// The Flush that ends a Parse/Describe batch on a lent server, then the proxy's own Sync: the
// server goes back at its ReadyForQuery (swallowed), and no client input is read until then.
void Session::lend_until_sync(const wire::Frame& flush) {
  std::string out(whole(flush));
  wire::encode_sync(out);
  expect(Owed::Sync, /*relay=*/false, 0, /*relay_errors=*/false);
  request_.batch_open = false;
  set_request_state(RequestState::LentUntilSync);
  active_server().connection().write(out);
}

// A Query refused before it reached the server: inside a transaction block it fails the block,
// as on a server; otherwise the client gets the error and ReadyForQuery in order.
void Session::answer_refused_front(const FrontQuery& front) {
  if (txn_.control.status() == 'T' && !txn_.control.deferred()) {
    inject_abort(front.refused, false);
    return;
  }
  txn_.control.abort_if_deferred();
  std::string bytes;
  wire::encode_error(bytes, "ERROR", front.refused.sqlstate, front.refused.message, front.refused_detail);
  wire::encode_ready_for_query(bytes, txn_.control.status());
  answer_in_place(std::move(bytes));
  maybe_release_backend();
}

Status Session::forward_query(const wire::Frame& frame) {
  auto sql = wire::decode_query(frame.body);
  if (!sql) return sql.status();
  const FrontQuery& front = front_query(frame, *sql);
  if (!front.refused.is_ok()) {
    answer_refused_front(front);
    return Status::ok();
  }
  std::shared_ptr<const parser::QueryFacts> known = front.facts;
  txn_.control.on_statement_sent(known && known->statements.size() == 1 ? &known->statements.front()
                                                                        : nullptr);
  bool routed = std::exchange(request_.routed, false);
  if (known && host_.directory()) {
    note_for_every_leg(*known);
    // The kept route is read in place, then forgotten: forwarding is its last use.
    const router::Route* kept = kept_front_route(*known);
    Status allowed =
        kept != nullptr
            ? check_query_route(*known, *kept, routed)
            : check_query_route(
                  *known, router::route_query(*known, nullptr, *host_.directory(), host_.routing_rules()),
                  routed);
    if (kept != nullptr) request_.front.forget_route();
    if (!allowed.is_ok()) {
      inject_abort(allowed, false);
      return Status::ok();
    }
  }
  if (known && known->statements.size() == 1) {
    if (auto drop = drop_index_on_every_shard(known->statements.front())) {
      // A server is attached: the transaction (or the pipeline) cannot give it up for every shard.
      inject_abort(drop->is_ok()
                       ? Status::client("0A000",
                                        "DROP INDEX through shardwire with several shards runs only "
                                        "outside a transaction block")
                       : drop->status(),
                   false);
      return Status::ok();
    }
  }
  const bool was_pinned = pools_.pinned != PinReason::None;
  if (known && refuse_in_query(*known)) return Status::ok();
  // (Only with no other Query in progress: a failure then is this one's.)
  request_.unpin_if_failed = !was_pinned && pools_.pinned != PinReason::None && request_.queries.empty() &&
                             pin_undone_by_failure(*known);
  if (known && known->statements.size() == 1 && answer_sql_deallocate(known->statements.front(), frame.size))
    return Status::ok();
  std::string restore = known ? profile_.settings.restore_startup(known->statements) : std::string();
  if (request_.queries.empty() && !request_.rewritten_queries.empty())
    request_.rewritten_queries.clear();  // none in progress
  const bool rewritten = known && !front.expanded_pieces.empty();
  const bool tracked = known && (rewritten || changes_tracked_state(*known));
  request_.queries.push_back(tracked ? known : nullptr);
  if (tracked && tracks_sql_prepared()) note_prepare_source(known, *sql);
  if (front.runs) ensure_prepared_before_query(front);  // its answers come first
  if (known && answers_prepared_view(*known)) describe_unresolved_statements(/*sync=*/true);
  expect(Owed::Query);
  if (!front.expanded.empty()) {
    if (rewritten)
      request_.rewritten_queries.push_back(
          {{std::string(*sql), parser::ExpandedSql{front.expanded, front.expanded_pieces}}, known});
    std::string statement;
    wire::encode_query(statement, front.expanded);
    active_server().connection().write(statement);
  } else {
    active_server().connection().write(whole(frame));
  }
  if (known) forget_sql_prepares(*known);
  if (!restore.empty()) {
    // The server's RESET went to the proxy login's defaults; the client's are its startup values.
    std::string out;
    wire::encode_query(out, restore);
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
    active_server().connection().write(out);
    request_.restore_owed = true;
    request_.restore_settings = true;
  }
  return Status::ok();
}

// SET/RESET or set_config() of a setting the proxy protects (the bucket fence depends on
// session_replication_role), or set_config() of a name computed at run time that might be one.
Status Session::refuse_protected_setting(const parser::StatementFacts& statement) {
  const bool sets = statement.kind == parser::StatementKind::Set ||
                    statement.kind == parser::StatementKind::SetLocal ||
                    statement.kind == parser::StatementKind::Reset;
  if (sets && SessionState::is_protected(statement.set_name))
    return Status::client("42501",
                          "parameter \"" + statement.set_name + "\" cannot be set through shardwire");
  for (const parser::SetConfigCall& call : statement.set_config_calls) {
    const parser::Value& name = call.name;
    if (name.kind != parser::ValueKind::String) {
      return Status::client(
          "42501",
          "set_config() with a setting name that is not a string literal cannot run through "
          "shardwire; name the setting literally");
    }
    if (SessionState::is_protected(name.text)) {
      return Status::client("42501", "parameter \"" + name.text + "\" cannot be set through shardwire");
    }
  }
  return Status::ok();
}

// The first of the refusals below that applies to `statement`; each Status is returned as built
// (no move-assignment on the path every statement takes).
Status Session::refusal_in_query(const parser::StatementFacts& statement) {
  if (Status refused = refuse_protected_setting(statement); !refused.is_ok()) return refused;
  if (Status refused = refuse_two_phase(statement); !refused.is_ok()) return refused;
  return refuse_unpoolable(statement);
}

// Settings the proxy protects, two-phase commit, and what cannot survive transaction pooling are
// refused in the Query's place.
bool Session::refuse_in_query(const parser::QueryFacts& facts) {
  for (const auto& statement : facts.statements) {
    Status refused = refusal_in_query(statement);
    if (refused.is_ok()) continue;
    std::string bytes;
    wire::encode_error(bytes, "ERROR", refused.sqlstate, refused.message);
    wire::encode_ready_for_query(bytes, txn_.control.status());
    answer_in_place(std::move(bytes));
    maybe_release_backend();
    return true;
  }
  return false;
}

}  // namespace sw::session
