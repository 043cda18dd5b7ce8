// Session: a transaction on several shards. The active leg runs the client's requests; a Query
// that needs another shard waits until the active leg owes nothing, then that shard's leg becomes
// the active one (a new server joins: its BEGIN and what must be replayed run first). Answers so
// stay in request order without merging streams. COMMIT and ROLLBACK run on the parked legs first,
// then the client's own statement on the active leg, which is the written one for a COMMIT
// (TransactionShards::commit_plan); settings and savepoints reach every leg.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "config/config.h"
#include "session/leg_engine.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

using parser::StatementKind;
using router::RouteKind;

bool names_tables(const parser::QueryFacts& facts) {
  return std::any_of(facts.statements.begin(), facts.statements.end(),
                     [](const parser::StatementFacts& statement) { return !statement.tables.empty(); });
}

bool writes_any(const parser::QueryFacts& facts) {
  return std::any_of(facts.statements.begin(), facts.statements.end(), [](const parser::StatementFacts& s) {
    return s.writes || s.kind == StatementKind::Ddl || s.kind == StatementKind::Copy;
  });
}

// Statements every leg of the transaction runs (and a leg that joins later replays).
bool reaches_every_leg(StatementKind kind) {
  switch (kind) {
    case StatementKind::Savepoint:
    case StatementKind::ReleaseSavepoint:
    case StatementKind::RollbackToSavepoint:
    case StatementKind::Set:
    case StatementKind::SetLocal:
    case StatementKind::Reset:
    case StatementKind::ResetAll: return true;
    default: return false;
  }
}

}  // namespace

std::shared_ptr<const parser::QueryFacts> Session::facts_of_query(const wire::Frame& query) {
  auto sql = wire::decode_query(query.body);
  if (!sql) return nullptr;
  return front_query(query, *sql).facts;
}

// The shard a statement with `route` runs on, -1 when any (the active leg's).
int Session::statement_shard(const parser::QueryFacts& facts, const router::Route& route) {
  if (route.kind == RouteKind::Shard ||
      (route.kind == RouteKind::Default && !route.any_shard && names_tables(facts)))
    return route.shard;
  return -1;
}

// What a statement that reaches every leg runs on the others: the statement, then (after a RESET
// of a setting the client gave at startup) the startup value again, as on the active leg. None for
// other statements, and for settings the proxy refuses.
std::vector<std::string> Session::every_leg_sql(const parser::StatementFacts& statement) const {
  if (!reaches_every_leg(statement.kind) || !refuse_protected_setting(statement).is_ok()) return {};
  std::vector<std::string> sql{statement.text};
  if (std::string restore = profile_.settings.restore_startup({statement}); !restore.empty())
    sql.push_back(std::move(restore));
  return sql;
}

// Sends a statement that reaches every leg to the parked ones (those in the transaction, while
// one is open): a server outside the transaction gets a SET or RESET once it is committed, as
// its settings are brought to the session's before its next request (switch_to_leg).
void Session::send_to_every_leg(const parser::StatementFacts& statement) {
  std::vector<std::string> sql = every_leg_sql(statement);
  if (sql.empty()) return;
  const bool setting = statement.kind != StatementKind::SetLocal &&
                       statement.kind != StatementKind::Savepoint &&
                       statement.kind != StatementKind::ReleaseSavepoint &&
                       statement.kind != StatementKind::RollbackToSavepoint;
  for (LegAnswers& other : txn_.parked)
    if (setting && txn_.shards.open() && other.server_status == 'I') other.settings_behind = true;
  for (const std::string& each : sql) send_to_parked(each);
  // ROLLBACK TO SAVEPOINT recovers a leg the transaction's failure failed (every leg ran the
  // savepoint): its swallowed answer may come after the active leg's ReadyForQuery, whose status
  // the client gets (combined_status), so it counts as recovered until its own answer says not.
  if (statement.kind == StatementKind::RollbackToSavepoint) {
    for (LegAnswers& other : txn_.parked)
      if (other.server_status == 'E') other.server_status = 'T';
  }
}

// Settings and savepoints run on every leg; the joining ones replay them.
void Session::note_for_every_leg(const parser::QueryFacts& facts) {
  for (const auto& statement : facts.statements) {
    if (statement.kind == StatementKind::Begin && !txn_.shards.open()) txn_.shards.begin(statement.text);
    for (const std::string& sql : every_leg_sql(statement)) txn_.shards.note_replayed(sql);
  }
}

// A write on a second shard of the transaction is refused (TransactionShards).
Status Session::check_write(const parser::QueryFacts& facts, const router::Route& route) {
  // A BEGIN alone does nothing on its shard: a client's PREPARE TRANSACTION counts the shards
  // where statements ran (session_client_two_phase.cc).
  if (facts.statements.size() == 1 && facts.statements.front().kind == StatementKind::Begin)
    return Status::ok();
  int shard = statement_shard(facts, route);
  if (shard < 0) shard = shard_of(txn_.leg);
  if (shard < 0) return Status::ok();
  txn_.shards.set_cross_shard_writes(cross_shard_writes());
  return txn_.shards.on_statement(shard, writes_any(facts),
                                  host_.directory()->shard_name(static_cast<uint16_t>(shard)));
}

// A Query while a server is attached: does it need another leg of the transaction (or, in
// session pooling, another of the session's servers), or the transaction's end on every leg?
Session::Next Session::route_across_legs(const wire::Frame& query) {
  LegAnswers& leg = txn_.leg;
  if (Next next = write_in_open_batch(query); next != Next::Forward) return next;
  if (Next next = finish_prepared_beside_leg(query); next != Next::Forward) return next;
  if (server_lent() || leg.outside_transaction || txn_.control.moving() || request_.batch_open ||
      !host_.directory())
    return Next::Forward;
  if (txn_.ending != Ending::None) return finish_ending(query);
  auto facts = facts_of_query(query);
  if (!facts) return Next::Forward;
  const parser::StatementFacts* only = facts->statements.size() == 1 ? &facts->statements.front() : nullptr;
  if (only != nullptr && !txn_.parked.empty()) {
    if (only->kind == StatementKind::Commit || only->kind == StatementKind::Rollback)
      return end_across_legs(only->kind == StatementKind::Commit, query.size);
    send_to_every_leg(*only);
  }
  const router::Route& route = front_route(*facts);  // kept there for forwarding
  if (only != nullptr && (route.copy_in || route.reference_write || route.scatter_write() ||
                          route.kind == router::RouteKind::Split))
    return write_on_every_shard(query, *only, take_front_route());
  if (only != nullptr && scatter_read(route)) {
    router::Route taken = take_front_route();
    if (Next next = read_on_every_shard(query, taken); next != Next::Forward) return next;
    keep_front_route(std::move(taken));
  }
  int target = statement_shard(*facts, *request_.front.route);
  if (target < 0 && only != nullptr) target = shard_holding_deallocated(*only);
  if (target < 0 || target == shard_of(leg)) return Next::Forward;
  txn_.shards.set_cross_shard_writes(cross_shard_writes());
  if (writes_any(*facts) && txn_.shards.open() && !txn_.shards.may_write(target))
    return Next::Forward;  // refused there
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (leg.server_status == 'I' && !pools_.session_pooling) return Next::Forward;
  // A failed transaction stays failed on every leg: the active one answers (25P02).
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;
  return switch_to_leg(target);
}

// The active leg owes nothing: it is parked, and the leg on `shard` (parked, or a new server that
// joins the transaction) becomes the active one.
Session::Next Session::switch_to_leg(int shard) {
  auto found = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                            [&](const LegAnswers& l) { return shard_of(l) == shard; });
  size_t index = static_cast<size_t>(found - txn_.parked.begin());
  txn_.parked.push_back(std::move(txn_.leg));
  txn_.leg = LegAnswers{};
  LOG_DEBUG("client=c%llu requests go to shard %d now (%s leg)", (unsigned long long)id(), shard,
            index < txn_.parked.size() - 1 ? "a parked" : "a new");
  if (index < txn_.parked.size() - 1) {
    txn_.leg = std::move(txn_.parked[index]);
    txn_.parked.erase(txn_.parked.begin() + static_cast<std::ptrdiff_t>(index));
    fence_.on_attach({}, /*capture=*/false);
    if (txn_.leg.server_status == 'I') catch_up_parked_leg();
    return Next::Forward;
  }
  request_.joining_leg = true;
  if (acquire_backend(shard)) return Next::Forward;
  if (request_.state == RequestState::WaitingForServer) return Next::Stop;
  request_.joining_leg = false;
  restore_parked_leg();  // refused: the Query was answered with the error
  return Next::Continue;
}

void Session::restore_parked_leg() {
  if (txn_.leg.attached() || txn_.parked.empty()) return;
  txn_.leg = std::move(txn_.parked.back());
  txn_.parked.pop_back();
}

// COMMIT or ROLLBACK with parked legs: once the active leg owes nothing, a COMMIT makes the
// written leg the active one, and the parked legs get the COMMIT (ROLLBACK) first. The client's
// statement stays in the input until they answered (finish_ending).
Session::Next Session::end_across_legs(bool commit, size_t consumed, const ExtendedBatch* batch) {
  // Session pooling: the session's servers the transaction did not touch have nothing to end.
  if (std::all_of(txn_.parked.begin(), txn_.parked.end(),
                  [](const LegAnswers& other) { return other.server_status == 'I'; }))
    return Next::Forward;
  if (!txn_.leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  const bool failed = txn_.combined_status(txn_.leg.server_status) == 'E';
  if (commit && failed) {
    std::string tag;
    wire::encode_command_complete(tag, "ROLLBACK");  // as PostgreSQL answers COMMIT of a failed transaction
    txn_.end_failure = std::move(tag);
  }
  if (commit && !failed) {
    std::vector<int> legs{shard_of(txn_.leg)};
    for (const LegAnswers& other : txn_.parked) legs.push_back(shard_of(other));
    CommitPlan plan = txn_.shards.commit_plan(legs);
    if (plan.kind == CommitPlan::Kind::TwoPhase) {
      if (batch == nullptr) return start_two_phase(plan, consumed, {}, false);
      if (batch->control_size > 0) return start_two_phase(plan, *batch);
      answer_with_error(
          Status::client("0A000",
                         "COMMIT of a transaction written on several shards runs two-phase commit, "
                         "which needs the COMMIT as a Query or as [Parse] Bind [Describe portal] "
                         "Execute; the transaction is still open"));
      return Next::Continue;
    }
    if (plan.last != shard_of(txn_.leg)) switch_to_leg(plan.last);  // parked: no server is acquired
  }
  txn_.ending = commit && !failed ? Ending::Commit : Ending::Rollback;
  send_to_parked(txn_.ending == Ending::Commit ? "COMMIT" : "ROLLBACK");
  return Next::Stop;
}

// The parked legs answered the transaction's end: the client's COMMIT (ROLLBACK) goes to the
// active leg; or, when a parked leg's COMMIT failed, the active leg is rolled back and the client
// gets that failure.
Session::Next Session::finish_ending(const wire::Frame& query) {
  Ending ending = std::exchange(txn_.ending, Ending::None);
  std::string failure = std::exchange(txn_.end_failure, {});
  release_idle_parked();
  if (failure.empty()) return Next::Forward;
  if (ending == Ending::Commit)
    LOG_INFO("client=c%llu COMMIT failed on a read-only leg; rolling back shard %d", (unsigned long long)id(),
             shard_of(txn_.leg));
  consume_client(query.size);
  profile_.settings.end_transaction(false);
  profile_.schema_changes.end_transaction();
  std::string rollback;
  wire::encode_query(rollback, "ROLLBACK");
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(rollback);
  wire::encode_ready_for_query(failure, 'I');
  answer_in_place(failure);
  return Next::Continue;
}

// Runs `sql` on every parked leg, its answers swallowed (on_parked_frame). While a
// transaction is open, a leg outside it (session pooling: the session's server on a shard the
// transaction has not touched) is left out: it replays the transaction's statements if it joins.
void Session::send_to_parked(std::string_view sql) {
  std::string out;
  wire::encode_query(out, sql);
  for (LegAnswers& other : txn_.parked) {
    if (txn_.shards.open() && other.server_status == 'I') continue;
    send_unseen(other, out, {Owed::Query});
  }
}

// Writes `messages` to a leg's server; what they owe (`owed`, in order) is swallowed, errors too.
void Session::send_unseen(LegAnswers& leg, std::string_view messages, const std::vector<Owed>& owed) {
  for (Owed each : owed) {
    Expectation e;
    e.owed = each;
    e.relay = false;
    e.relay_errors = false;
    leg.tracker.expect(std::move(e), nullptr);
  }
  server_of(leg)->connection().write(messages);
}

// What a parked leg sends: the answers to what send_to_parked sent it (swallowed; a failure is
// remembered for the transaction's end), or a message nobody asked for, which ends the session.
// False: reading stops.
bool Session::on_parked_frame(LegAnswers& leg, const wire::Frame& frame) {
  if (frame.type == 'E' && ends_session(frame, *server_of(leg))) return false;
  std::string due;
  if (leg.tracker.on_server_message(frame.type, &due).verdict == ResponseTracker::Verdict::Desync) {
    fail_parked_leg(leg);
    return false;
  }
  on_parked_message(leg, frame);
  return true;
}

// A parked leg's server sent what nobody asked for, or broke the protocol: the session ends, the
// transaction rolling back on every shard.
void Session::fail_parked_leg(const LegAnswers& leg) {
  LOG_WARN("client=c%llu server=s%llu of shard %d sent an unexpected message while parked",
           (unsigned long long)id(), (unsigned long long)server_of(leg)->id(), shard_of(leg));
  terminate(Status::server("08P01", "a server of the transaction (shard " +
                                        host_.directory()->shard_name(static_cast<uint16_t>(shard_of(leg))) +
                                        ") failed; the transaction was rolled back on every shard"));
}

void Session::on_parked_message(LegAnswers& leg, const wire::Frame& frame) {
  switch (frame.type) {
    case 'E':
      if (txn_.ending == Ending::Commit && txn_.end_failure.empty())
        txn_.end_failure = std::string(whole(frame));
      break;
    case 'C':
      if (auto tag = wire::decode_command_complete(frame.body);
          tag && *tag == "ROLLBACK" && txn_.ending == Ending::Commit && txn_.end_failure.empty())
        txn_.end_failure = std::string(whole(frame));
      break;
    case 'Z':
      if (const char status = wire::ready_for_query_status(frame.body)) leg.server_status = status;
      break;
    case 'S':
      if (auto status = wire::decode_parameter_status(frame.body))
        server_of(leg)->set_parameter(status->name, status->value);
      break;
    default: break;
  }
}

// Transaction pooling: parked legs whose transaction ended go back to their pools (not while a
// two-phase commit runs: a prepared leg is out of its transaction but still owes its end). A
// client pinned only by held cursors none of which is left is unpinned first (its last leg done).
void Session::release_idle_parked() {
  if (txn_.two_phase) return;
  if (pools_.session_pooling) {
    if (!unpin_if_no_held_cursor()) return;
    maybe_release_backend();
  }
  for (size_t i = 0; i < txn_.parked.size();) {
    LegAnswers& other = txn_.parked[i];
    if (!other.tracker.idle() || other.server_status != 'I' || in_run(other)) {
      ++i;
      continue;
    }
    pool::Backend* backend = server_of(other);
    backend->applied_state = profile_.settings.signature();
    txn_.parked.erase(txn_.parked.begin() + static_cast<std::ptrdiff_t>(i));
    const bool cancelled = cancelled_by_run(*backend);
    legs_.detach(*backend);
    backend->pool().release(backend, !cancelled);
  }
}

// The active leg's transaction ended by a statement the proxy did not run on the parked legs
// (an extended-protocol COMMIT, a multi-statement Query): they end it the same way.
void Session::end_parked_like_active(bool committed) {
  bool open = std::any_of(txn_.parked.begin(), txn_.parked.end(), [](const LegAnswers& other) {
    return other.server_status != 'I' && other.tracker.idle();
  });
  if (!open || txn_.ending != Ending::None) return;
  send_to_parked(committed ? "COMMIT" : "ROLLBACK");
}

// The active leg reported its transaction status; once it owes nothing and is out of the
// transaction, so is every other leg.
void Session::on_active_status() {
  const LegAnswers& leg = txn_.leg;
  txn_.shards.on_server_status(leg.server_status);
  if (leg.server_status != 'I' || !leg.tracker.idle()) return;
  end_parked_like_active(txn_.active_committed);
  txn_.shards.end();
}

// The session ends: every parked leg goes back (reset, in session pooling, at a boundary; rolled
// back, in transaction pooling, idle in the transaction) or is closed (a run reads it, or a run
// cancelled it), which rolls it back.
void Session::release_parked_legs() {
  std::vector<LegAnswers> legs = std::exchange(txn_.parked, {});
  for (LegAnswers& other : legs) {
    pool::Backend* backend = server_of(other);
    if (backend == nullptr) continue;    // its leg lost it in a run
    const bool running = in_run(other);  // a run reads it: in the middle of the run's statements
    const bool cancelled = cancelled_by_run(*backend);
    legs_.detach(*backend);
    if (running || cancelled) {
      backend->connection().resume_reading();
      backend->pool().release(backend, false);
      continue;
    }
    bool at_boundary = other.tracker.idle() && other.server_status == 'I';
    if (!other.tracker.idle()) backend->pool().send_cancel(*backend);
    backend->connection().resume_reading();
    if (pools_.session_pooling && at_boundary && phase_ == Phase::Closed) {
      backend->detach();
      backend->pool().release_after_reset(backend, host_.config().pool.server_reset_query);
    } else if (!pools_.session_pooling && other.tracker.idle() && !at_boundary) {
      backend->detach();
      backend->pool().release_after_reset(backend, "ROLLBACK");
    } else {
      backend->pool().release(backend, at_boundary && !pools_.session_pooling);
    }
  }
}

}  // namespace sw::session
