// Session: the transaction's leg, a server borrowed from a shard's pool for one transaction (or
// for the whole session in session pooling), and when it goes back.
#include <cassert>
#include <utility>

#include "common/log.h"
#include "session/server_state.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

bool Session::acquire_backend(int shard) {
  Status error;
  pool::Pool* pool = pool_for_shard(shard, &error);
  if (pool == nullptr) {
    request_.routed = false;
    refuse_request(error);
    set_request_state(RequestState::Answered);
    return false;
  }
  pool::Backend* backend = legs_.wait_for(*pool, shard, id());
  if (backend == nullptr) {
    set_request_state(RequestState::WaitingForServer);
    return false;
  }
  attach(backend);
  return true;
}

void Session::attach(pool::Backend* backend) {
  LegAnswers& leg = txn_.leg;
  // The server came to the leg that waited for it (LegEngine::wait_for): that leg, on its shard.
  const size_t slot = legs_.adopt(*backend, -1);
  assert(!leg_recorded(slot));
  leg.slot = slot;
  clock_.xact_started_us = stats::monotonic_us();
  set_request_state(RequestState::Running);
  std::string prologue;
  if (!pools_.session_pooling && backend->prepared.size() > kServerStatementLimit) {
    wire::encode_query(prologue, "DEALLOCATE ALL");
    backend->prepared.clear();
    backend->sql_prepared.clear();
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  }
  // Bring the server to this client's state before anything of the client runs there.
  const SqlStatements* held = servers_hold_sql_prepared() ? &profile_.sql_statements : nullptr;
  for (int owed = bring_server_to(*backend, profile_.settings.signature(), id(), prologue, held); owed > 0;
       --owed)
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  if (std::exchange(request_.joining_leg, false)) {
    // The transaction started on another shard: this one starts it too, then replays the
    // settings and savepoints it ran so far. A fence error here fails the request (40001).
    std::string replay = joining_prologue();
    if (!replay.empty()) {
      wire::encode_query(prologue, replay);
      expect(Owed::Query, /*relay=*/false);
    }
    backend->connection().write(prologue);
    fence_.on_attach({}, /*capture=*/false);
    return;
  }
  std::string begin;
  if (txn_.control.deferred() && !leg.outside_transaction) {
    // The transaction the proxy answered BEGIN for starts here, on the shard it picked.
    begin = txn_.control.take_begin(/*may_move=*/!pools_.session_pooling);
    txn_.shards.begin(begin);
    wire::encode_query(prologue, begin);
    expect(Owed::Query, /*relay=*/false);
  } else if (txn_.control.deferred()) {
    // A Parse/Describe batch outside the transaction sees what the transaction set so far.
    wire::encode_query(prologue, txn_.control.deferred_begin());
    expect(Owed::Query, /*relay=*/false);
    leg.outside_begun = true;
  }
  backend->connection().write(prologue);
  // Keep the first request until its answer starts: a fence error may send it elsewhere.
  fence_.on_attach(std::move(begin), !leg.outside_transaction);
}

// The pool's answer comes only to a request waiting for a server (the waiter is cancelled when it
// stops waiting); in any other state it is a defect of the session, logged and handled alike.
void Session::expect_waiting_for_server(const char* event) const {
  switch (request_.state) {
    case RequestState::WaitingForServer: return;
    case RequestState::Routing:
    case RequestState::WaitingForCutover:
    case RequestState::Running:
    case RequestState::RetryingAfterFence:
    case RequestState::Answered:
    case RequestState::WaitingForLeg:
    case RequestState::LentUntilSync: report_unexpected_event(event); return;
  }
}

void Session::on_backend_ready(pool::Backend* backend) {
  expect_waiting_for_server("a server was handed");
  set_request_state(RequestState::Routing);
  if (phase_ == Phase::AwaitingServerParameters) {
    if (startup_needs_probe()) {
      probe_startup_settings(backend);
      return;
    }
    legs_.detach(*backend);
    pools_.login->release(backend, true);
    finish_login();
    return;
  }
  if (phase_ != Phase::Ready) {
    legs_.detach(*backend);
    pools_.login->release(backend, true);
    return;
  }
  attach(backend);
  client_->resume_reading();
  read_client_messages();
}

void Session::on_backend_failed(const Status& why) {
  expect_waiting_for_server("the pool had no server");
  set_request_state(RequestState::Answered);
  txn_.leg.outside_transaction = false;
  request_.routed = false;
  request_.joining_leg = false;
  restore_parked_leg();  // a shard could not join: the transaction goes on where it was
  LOG_WARN("client=c%llu user=%s no server: %s", (unsigned long long)id(), profile_.user.c_str(),
           why.message.c_str());
  if (phase_ == Phase::AwaitingServerParameters) {
    fail_login(why);
    return;
  }
  if (phase_ != Phase::Ready) return;
  reject_pending_request(why);
  client_->resume_reading();
  read_client_messages();
}

void Session::release_at_boundary() {
  if (in_run(txn_.leg)) return;  // a run reads it: never at a boundary
  if (pools_.session_pooling && unpin_if_no_held_cursor()) release_idle_parked();
  if (pools_.session_pooling) {
    keep_pinned_leg();
    if (mode_.shutdown_pending)
      terminate(Status::proxy("57P01", "terminating connection due to administrator command"));
    return;
  }
  active_server().applied_state = profile_.settings.signature();
  release_backend(true);
  if (mode_.shutdown_pending)
    terminate(Status::proxy("57P01", "terminating connection due to administrator command"));
}

// A statement of a batch run on a lent server or outside the client's transaction (a Parse and
// Describe) pinned the client: the server is the session's from now on, and the transaction the
// proxy answered BEGIN for starts on it before anything else of the client's runs there. (Until
// the lent server was given back the client's input was not read: it would never be.)
void Session::keep_pinned_leg() {
  LegAnswers& leg = txn_.leg;
  const bool lent = server_lent();
  if (lent) set_request_state(RequestState::Running);  // input is read again
  if (!lent && !leg.outside_transaction) return;
  leg.outside_transaction = false;
  request_.lend_at_flush = false;
  if (!txn_.control.deferred()) return;
  const std::string begin = txn_.control.take_begin(/*may_move=*/false);
  txn_.shards.begin(begin);
  std::string out;
  wire::encode_query(out, begin);
  expect(Owed::Query, /*relay=*/false);
  active_server().connection().write(out);
}

void Session::release_backend(bool clean, const std::string* reset_query) {
  LegAnswers& leg = txn_.leg;
  pool::Backend* backend = server_of(leg);
  leg.slot = LegAnswers::kNoSlot;
  leg.outside_transaction = false;
  leg.outside_begun = false;
  leg.client_ready_owed = false;
  const bool lent = server_lent();
  if (request_.state == RequestState::Running || lent) set_request_state(RequestState::Routing);
  request_.lend_at_flush = false;
  // The unnamed statement stays with the server given back (and with a lent one): the next
  // server gets its Parse before a Bind or Describe names it (psql's \gdesc: Parse and Sync, then
  // Describe and Sync).
  if (lent || profile_.unnamed.facts != nullptr) profile_.unnamed_elsewhere = true;
  if (txn_.control.moving()) {
    // The transaction leaves this server for the shard its next statement needs.
    txn_.control.finish_move();
    set_request_state(RequestState::Routing);
  } else {
    txn_.control.pin();
  }
  if (!clean) {
    leg.tracker.reset();
    request_.queries.clear();
    request_.restore_owed = false;
    request_.restore_settings = false;
    request_.held.clear();
    request_.batch_open = false;
    leg.server_status = 'I';
    txn_.control.on_server_dropped();
  }
  if (backend == nullptr) return;  // its leg lost it in a run
  const bool cancelled = cancelled_by_run(*backend);
  legs_.detach(*backend);
  backend->connection().resume_reading();
  if (reset_query != nullptr && clean && !cancelled) {
    backend->detach();
    backend->pool().release_after_reset(backend, *reset_query);
    return;
  }
  backend->pool().release(backend, clean && !cancelled);
}

// Session pooling: the session's server on this shard becomes the active one outside any
// transaction of its own: it gets the settings it missed, then joins a transaction begun elsewhere.
void Session::catch_up_parked_leg() {
  LegAnswers& leg = txn_.leg;
  std::string out;
  if (std::exchange(leg.settings_behind, false)) {
    wire::encode_query(out, profile_.settings.reset_and_replay());
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  }
  if (std::string replay = joining_prologue(); !replay.empty()) {
    wire::encode_query(out, replay);
    expect(Owed::Query, /*relay=*/false);
  }
  if (!out.empty()) active_server().connection().write(out);
}

// What a server joining the transaction runs before the Query that needs it.
std::string Session::joining_prologue() {
  if (!txn_.shards.open()) return {};
  return txn_.shards.replay().empty() ? std::string("BEGIN") : txn_.shards.replay();
}

}  // namespace sw::session
