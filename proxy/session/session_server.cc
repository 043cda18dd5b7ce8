// Session: the runner of its own engine's legs (the transaction's servers): what they send back,
// on its way to the client.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "session/leg_engine.h"
#include "session/session.h"
#include "wire/messages.h"
#include "wire/server_check.h"

namespace sw::session {

// The session's engine reads every leg of the transaction in its one loop (LegEngine::read): the
// active leg's answers go on to the client through its ResponseTracker (handle_server_message),
// held while the client's output is over its high-water mark, and once consumed the session does
// what each asks for (after_active_message); a parked leg's are swallowed (on_parked_frame).
// Reading the leg stops when the session let go of its server (a violation, a FATAL, a fence
// retry, the end of its transaction) or refused the message (on_leg_refused: it already ended
// the session).
bool Session::on_leg_message(size_t leg, const LegEngine::Message& message) {
  const wire::Frame& frame = message.read;
  if (leg != txn_.leg.slot) {
    LegAnswers* parked = parked_leg(leg);
    return (parked != nullptr && on_parked_frame(*parked, frame)) || stop_reading_leg(leg);
  }
  if (client_->over_high_water()) {
    legs_.hold(leg);  // resumed by on_drained
    return true;
  }
  const AfterMessage after = handle_server_message(frame);
  if (after == AfterMessage::Dropped) return stop_reading_leg(leg);
  legs_.consume(leg);
  if (after == AfterMessage::Retry) {
    retry_after_fence();  // lets go of the server
  } else {
    after_active_message();
  }
  return true;
}

// The session let go of the leg's server, or ended (on_leg_refused: nothing more to do).
bool Session::stop_reading_leg(size_t leg) {
  return refuse(leg, Status::proxy("XX000", "the session stopped reading this server"));
}

void Session::after_active_message() {
  if (phase_ == Phase::AwaitingServerParameters) {
    if (txn_.leg.tracker.idle()) end_startup_probe();
    return;
  }
  const RequestState before = request_.state;
  maybe_release_backend();  // a lent server a pin kept is the session's: input is read again
  if (phase_ == Phase::Ready) after_server_frame(before);
}

// Every answer a parked leg had was read: legs whose transaction ended go back, and the client's
// input is read once no parked leg owes anything.
void Session::on_leg_caught_up(size_t leg) {
  if (leg == txn_.leg.slot || parked_leg(leg) == nullptr) return;
  release_idle_parked();
  if (!txn_.parked_busy() && phase_ == Phase::Ready) read_client_messages();
}

// A broken or hostile server (the engine logged it): never reused. The active one's client is
// not left to parse its bytes; a parked one fails the transaction.
void Session::on_leg_violation(size_t leg, const Status& why) {
  if (leg == txn_.leg.slot) {
    drop_violating_server(why);
  } else if (const LegAnswers* parked = parked_leg(leg)) {
    fail_parked_leg(*parked);
  }
}

void Session::drop_violating_server(const Status& why) {
  release_backend(false);
  terminate(Status::server("08P01", why.message + "; the server connection was closed"));
}

// The leg's server is gone (the pool deletes it): the transaction is lost there; the other legs
// are closed with the session (their servers roll back), none is left in a transaction.
void Session::on_leg_lost(size_t leg, const Status& why) {
  drop_leg(leg);
  request_.queries.clear();
  LOG_WARN("client=c%llu user=%s lost its server: %s", (unsigned long long)id(), profile_.user.c_str(),
           why.message.c_str());
  // The transaction died with the server; the client must not carry on as if it had not.
  terminate(Status::server("08006", why.message + "; the transaction in progress was lost"));
}

// A server's output went out: the client's input, held meanwhile, is read again.
void Session::on_leg_drained(size_t /*leg*/) {
  if (phase_ != Phase::Ready) return;
  client_->resume_reading();
  read_client_messages();
}

// The pool's answer to a leg's wait (LegEngine::wait_for; a bare target: no prologue, the session
// brings the server to the client's state in attach).
void Session::on_leg_server(size_t leg, std::string /*prologue*/) { on_backend_ready(legs_.backend(leg)); }
void Session::on_no_server(const Status& why) { on_backend_failed(why); }

// A frame of the active leg was handled (the request was in `before`): what the session does
// next, by the state the request is in now.
void Session::after_server_frame(RequestState before) {
  // The lent server went back (routing) or the session kept it (running): input is read again.
  const bool lent_ended = before == RequestState::LentUntilSync && !server_lent();
  const bool pipelined = (!txn_.leg.attached() || lent_ended) && !client_->input().empty();
  switch (request_.state) {
    case RequestState::WaitingForLeg:
      // Once the active leg owes nothing, the request that needs another leg goes on.
      if (pipelined || txn_.leg.tracker.idle()) read_client_messages();
      break;
    case RequestState::Routing:
    case RequestState::Running:
    case RequestState::Answered:
      if (pipelined) read_client_messages();  // the client pipelined its next transaction already
      break;
    case RequestState::LentUntilSync:              // the lent server's Sync is not answered yet
    case RequestState::WaitingForServer:           // on_backend_ready goes on
    case RequestState::WaitingForCutover:          // resume_after_directory_change goes on
    case RequestState::RetryingAfterFence: break;  // retry_after_fence's poll goes on
  }
}

Session::AfterMessage Session::handle_server_message(const wire::Frame& frame) {
  if (frame.type == 'E' && ends_session(frame, active_server())) return AfterMessage::Dropped;
  LegAnswers& leg = txn_.leg;
  std::string due;
  auto outcome = leg.tracker.on_server_message(frame.type, &due);
  if (outcome.verdict == ResponseTracker::Verdict::Desync) {
    LOG_WARN("client=c%llu server=s%llu sent unexpected message '%c'; closing it", (unsigned long long)id(),
             (unsigned long long)active_server().id(), frame.type);
    release_backend(false);
    terminate(Status::server("08P01", "server sent an unexpected message; connection closed"));
    return AfterMessage::Dropped;
  }
  bool relay = outcome.verdict == ResponseTracker::Verdict::Relay;
  bool answered = outcome.finished.relay;  // a client request's ReadyForQuery, when frame is 'Z'
  if (frame.type == 'C' && outcome.completed && outcome.finished.settings)
    on_execute_settings(*outcome.finished.settings);
  switch (frame.type) {
    case 'S':
      relay_parameter_status(frame.body);
      relay = false;
      break;
    case 't': note_parameter_description(frame.body); break;
    case 'E':
      retire_if_stale(frame, outcome);
      relay = on_server_error(frame, relay, outcome.completed);
      break;
    case 'C': {
      auto tag = wire::decode_command_complete(frame.body);
      if (tag && *tag == "LOAD")
        active_server().library_loaded = true;  // whoever sent it: the server is closed when released
      if (relay && tag) {
        on_sql_command_complete(*tag);
        if (*tag == "ROLLBACK") profile_.settings.end_transaction(false);
        if (*tag == "COMMIT" || *tag == "ROLLBACK") txn_.active_committed = *tag == "COMMIT";
        // The written leg commits last: its COMMIT ends a transaction on several shards.
        if (*tag == "COMMIT" && txn_.shards.open() && txn_.shards.touched().size() >= 2)
          host_.traffic().count_cross_shard_commit(stats::CrossShardOutcome::OnePhase);
      }
      break;
    }
    case 'Z':
      if (answered) profile_.sql_commands.executed.clear();  // the PREPAREs left failed
      relay = on_ready_for_query(frame, relay, answered);
      break;
    default: break;
  }
  std::string combined;  // a ReadyForQuery saying a parked leg failed, or a refusal's error
  if (frame.type == 'C' && relay && !request_.prepare_refused.is_ok() &&
      wire::decode_command_complete(frame.body).is_ok() &&
      *wire::decode_command_complete(frame.body) == "ROLLBACK") {
    const Status refused = std::exchange(request_.prepare_refused, Status::ok());
    wire::encode_error(combined, "ERROR", refused.sqlstate, refused.message);
  }
  if (frame.type == 'E' && relay && combined.empty())
    combined = client_error_position(frame, outcome.finished.rewritten.get());
  if (frame.type == 'Z' && relay && txn_.combined_status(leg.server_status) != leg.server_status) {
    wire::encode_ready_for_query(combined, 'E');
    txn_.control.on_server_status('E');
  }
  if (request_.restore_owed) {
    hold_until_restored(frame, relay, due);
  } else {
    if (relay) to_client(combined.empty() ? whole(frame) : std::string_view(combined));
    if (!due.empty()) to_client(due);
  }
  if (outcome.completed || !leg.tracker.failed_parses().empty()) after_server_message(frame.type, outcome);
  if (frame.type == 'Z') {
    // Only the client's own ReadyForQuery ends its transaction: a swallowed one (a joining
    // server's reset before the deferred BEGIN, a move's ROLLBACK) leaves the SETs pending.
    if (relay && leg.server_status == 'I' && !leg.outside_transaction) {
      profile_.settings.end_transaction(true);
      profile_.schema_changes.end_transaction();
    }
    if (!leg.outside_transaction) on_active_status();
    if (fence_.pending() && answered) return AfterMessage::Retry;
  }
  return AfterMessage::Continue;
}

// A server's FATAL or PANIC (pg_terminate_backend, a shutdown, idle_in_transaction_session_timeout)
// ends the client's session as it ends a PostgreSQL client's: the client gets that ErrorResponse
// as the server sent it and the connection closes, with no error of the proxy's after it. True
// when `frame` was such an error (`backend`, the active or a parked leg's server, is closed).
// Called for ErrorResponses only: the callers test the type (every server message passes there).
bool Session::ends_session(const wire::Frame& frame, pool::Backend& backend) {
  auto fields = wire::decode_error_fields(frame.body);
  if (!fields || (fields->severity != "FATAL" && fields->severity != "PANIC")) return false;
  LOG_WARN("client=c%llu server=s%llu ended the session: %.*s %.*s", (unsigned long long)id(),
           (unsigned long long)backend.id(), static_cast<int>(fields->sqlstate.size()),
           fields->sqlstate.data(), static_cast<int>(fields->message.size()), fields->message.data());
  to_client(whole(frame));
  const size_t slot = legs_.leg_of(backend);
  if (slot == txn_.leg.slot) {
    release_backend(false);
  } else if (parked_leg(slot) != nullptr) {
    drop_leg(slot);
    legs_.detach(backend);
    backend.pool().release(&backend, false);
  }
  close("its server ended the session");
  return true;
}

// While startup values are being restored after a RESET: the client's answers from its
// ReadyForQuery on wait for the restore's own (swallowed) ReadyForQuery.
void Session::hold_until_restored(const wire::Frame& frame, bool relay, const std::string& due) {
  Request& r = request_;
  if (frame.type == 'Z' && !relay && !r.held.empty()) {
    r.restore_owed = false;
    to_client(std::exchange(r.held, {}));
    if (!due.empty()) to_client(due);
    return;
  }
  if (relay && (frame.type == 'Z' || !r.held.empty())) {
    r.held += whole(frame);
    r.held += due;
    return;
  }
  if (relay) to_client(whole(frame));
  if (!due.empty()) to_client(due);
}

// Returns whether the ErrorResponse goes on to the client.
bool Session::on_server_error(const wire::Frame& frame, bool relay, bool completed) {
  if (auto fields = wire::decode_error_fields(frame.body)) {
    LOG_DEBUG("client=c%llu server error %.*s", (unsigned long long)id(),
              static_cast<int>(fields->sqlstate.size()), fields->sqlstate.data());
    host_.traffic().count_backend_error(fields->sqlstate);
    if (fields->sqlstate == "SW001" && relay && on_fence_error(frame.body)) relay = false;
  }
  if (!request_.queries.empty() && !completed) request_.query_failed = true;
  if (relay) txn_.control.pin();  // a failed statement stays where it failed
  if (relay) request_.batch_failed = true;
  // A spread batch is skipped up to its Sync on every leg, as the failed server skips it.
  if (relay && txn_.spread == SpreadBatch::Open) request_.skip_until_sync = true;
  if (relay && server_lent()) {
    // A lent batch failed: the client's transaction fails with it, and what it sent after the
    // failed message is skipped up to its Sync, as the server would have.
    txn_.control.abort_if_deferred();
    request_.skip_until_sync = true;
  }
  return relay;
}

// Returns whether the ReadyForQuery goes on to the client as the server sent it. `answered`: it
// ends a client request (not one the proxy injected).
bool Session::on_ready_for_query(const wire::Frame& frame, bool relay, bool answered) {
  LegAnswers& leg = txn_.leg;
  if (const char status = wire::ready_for_query_status(frame.body)) leg.server_status = status;
  request_.batch_failed = false;
  if (leg.outside_transaction) {
    // This server ran a Parse/Describe batch outside the client's not-yet-started transaction:
    // the client is told its own transaction status, once the proxy's BEGIN there is rolled back.
    if (leg.outside_begun && leg.tracker.idle()) {
      leg.outside_begun = false;
      leg.client_ready_owed = relay;
      std::string rollback;
      wire::encode_query(rollback, "ROLLBACK");
      expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
      active_server().connection().write(rollback);
      relay = false;
    } else if (relay || std::exchange(leg.client_ready_owed, false)) {
      std::string ready;
      wire::encode_ready_for_query(ready, txn_.control.status());
      to_client(ready);
      relay = false;
    }
  } else {
    txn_.control.on_server_status(leg.server_status);
  }
  if (answered) {
    count_request_done();
    if (fence_.on_request_answered(net::Connection::kIdleBufferKeep)) relay = false;
  }
  return relay;
}

// Bookkeeping once the message (and the proxy's answers due after it) went to the client: only
// for a message that completed an expectation or left failed Parses (the caller tests that: it
// runs for every server message).
void Session::after_server_message(char type, const ResponseTracker::Outcome& outcome) {
  LegAnswers& leg = txn_.leg;
  if (!leg.tracker.failed_parses().empty()) forget_failed_parses();
  if (outcome.completed && outcome.finished.owed == Owed::Parse && type == '1' &&
      outcome.finished.statement != 0)
    host_.statements().mark_validated(outcome.finished.statement);
  if (outcome.completed && outcome.finished.owed == Owed::Query && outcome.finished.relay)
    on_query_finished(request_.query_failed);
}

void Session::relay_parameter_status(std::string_view body) {
  auto status = wire::decode_parameter_status(body);
  if (!status) return;
  active_server().set_parameter(status->name, status->value);
  // Also after the proxy's own statements (the settings replayed before a transaction, the startup
  // values restored after a RESET): they report the values the client's session now has.
  auto it = profile_.parameters.find(std::string(status->name));
  if (it != profile_.parameters.end() && it->second == status->value) return;
  profile_.parameters[std::string(status->name)] = std::string(status->value);
  if (phase_ != Phase::Ready) return;  // a login's probe: finish_login tells the client
  std::string out;
  wire::encode_parameter_status(out, status->name, status->value);
  client_->write(out);
}

void Session::on_query_finished(bool failed) {
  request_.query_failed = false;
  if (std::exchange(request_.unpin_if_failed, false) && failed && txn_.control.status() == 'I')
    unpin_after_failure();
  if (!request_.prepare_refused.is_ok()) request_.prepare_refused = Status::ok();
  // A PREPARE or DEALLOCATE may change what the next EXECUTE runs.
  if (request_.front.body != nullptr) request_.front.forget();
  const bool restored_settings = std::exchange(request_.restore_settings, false);
  if (failed && restored_settings) {
    // The failed Query's RESET was rolled back, the restore after it may not be: the server is
    // brought back to the client's settings (in a failed transaction block this fails unseen, and
    // the rollback does the same).
    std::string out;
    wire::encode_query(out, profile_.settings.reset_and_replay());
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
    active_server().connection().write(out);
  }
  if (request_.queries.empty()) return;
  auto facts = std::move(request_.queries.front());
  request_.queries.pop_front();
  auto& rewritten = request_.rewritten_queries;
  if (!rewritten.empty() && facts && rewritten.front().facts == facts) rewritten.pop_front();
  std::string source;  // the text of a Query that PREPAREd
  if (!request_.prepare_sources.empty()) source = take_prepare_source(facts);
  if (failed || !facts) return;
  note_settings_of_query(*facts);
  for (const auto& statement : facts->statements) {
    profile_.settings.on_statement(statement);
    note_sql_prepared(statement, source);
    reset_other_legs(statement);
  }
}

}  // namespace sw::session
