// Session: COMMIT of a transaction written on several shards, by the one two-phase-commit driver
// (TwoPhaseLegs, the runners' too). This file parks every leg (the active one too: no leg's
// answers reach the client), sends the driver's statements on them, hands it the legs' answers
// and losses, and answers the client's COMMIT once the driver finished. No client input is read
// meanwhile. docs/architecture.md §5.9.
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "config/config.h"
#include "session/leg_engine.h"
#include "session/prepare_transaction_batch.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

// What a write on a second shard gets under the proxy's config.
CrossShardWrites Session::cross_shard_writes() const {
  const config::Config& config = host_.config();
  if (config.sharding.cross_shard_transactions == config::CrossShardTransactions::Refuse)
    return CrossShardWrites::Refuse;
  return config.catalog.dsn.empty() ? CrossShardWrites::RefuseNoCatalog : CrossShardWrites::TwoPhase;
}

// A COMMIT among other statements of one Query ends the transaction on the active leg only: with
// two written shards that would commit them one by one, so it is refused (the transaction aborts).
Status Session::refuse_commit_among_statements(const parser::QueryFacts& facts) const {
  if (facts.statements.size() < 2 || !txn_.shards.open() || txn_.shards.writers().size() < 2)
    return Status::ok();
  for (const parser::StatementFacts& statement : facts.statements)
    if (statement.kind == parser::StatementKind::Commit)
      return Status::client(
          "0A000",
          "COMMIT of a transaction written on several shards runs two-phase commit and must "
          "be sent as a statement of its own, not among others in one Query; the "
          "transaction is aborted");
  return Status::ok();
}

// The client's COMMIT (its `consumed` bytes; for an extended batch, `answered` is what the proxy
// owes before CommandComplete and the batch's Sync gets the ReadyForQuery) starts a two-phase
// commit over every leg: the one driver on the leg engine (CommitLegs), a run on the
// transaction's legs. The active leg owes nothing; it is parked first, so that no leg's answer
// reaches the client.
Session::Next Session::start_two_phase(const CommitPlan& plan, size_t consumed, std::string answered,
                                       bool extended) {
  // A written shard whose server is gone has rolled its part back: nothing may commit.
  for (int shard : plan.written) {
    const bool live = (shard_of(txn_.leg) == shard && txn_.leg.attached()) ||
                      std::any_of(txn_.parked.begin(), txn_.parked.end(), [this, shard](const LegAnswers& l) {
                        return shard_of(l) == shard && l.attached();
                      });
    if (!live) return lost_written_shard(shard);
  }
  txn_.parked.push_back(std::move(txn_.leg));
  txn_.leg = LegAnswers{};
  std::vector<size_t> written;
  std::vector<LegEngine::Target> targets = commit_targets(plan, &written);
  if (clock_.request_started_us == 0) note_request_start();
  consume_client(consumed);
  auto state = std::make_unique<TwoPhaseState>();
  state->answered = std::move(answered);
  state->extended = extended;
  state->legs =
      std::make_unique<CommitLegs>(legs_, "client=c" + std::to_string(id()) + " COMMIT", std::move(targets),
                                   ServerState{profile_.settings.signature(), id(), nullptr}, commit_calls());
  txn_.two_phase = std::move(state);
  txn_.two_phase->legs->start(written);
  return Next::Stop;
}

// The commit's legs, in the driver's order: a target per written shard of `plan` (its index in
// `written`), then per shard the transaction read there and did not write (session pooling: the
// session's servers on shards the transaction did not touch are out of it). Each is a parked leg
// with its server, as it stands: bare (in the transaction already, with the session's settings).
std::vector<LegEngine::Target> Session::commit_targets(const CommitPlan& plan, std::vector<size_t>* written) {
  std::vector<LegEngine::Target> targets;
  auto add = [this, &targets](const LegAnswers& leg) {
    LegEngine::Target target;
    target.pool = &server_of(leg)->pool();
    target.shard = host_.directory()->shard_name(static_cast<uint16_t>(shard_of(leg)));
    target.index = shard_of(leg);
    target.begin.clear();
    target.bare = true;
    targets.push_back(std::move(target));
  };
  auto is_written = [&plan](int shard) {
    return std::find(plan.written.begin(), plan.written.end(), shard) != plan.written.end();
  };
  for (int shard : plan.written) {
    auto leg = std::find_if(txn_.parked.begin(), txn_.parked.end(), [this, shard](const LegAnswers& l) {
      return shard_of(l) == shard && l.attached();
    });
    if (leg == txn_.parked.end()) continue;
    add(*leg);
    written->push_back(targets.size() - 1);
  }
  for (const LegAnswers& leg : txn_.parked)
    if (leg.attached() && leg.server_status != 'I' && !is_written(shard_of(leg)) &&
        std::find(plan.first.begin(), plan.first.end(), shard_of(leg)) != plan.first.end())
      add(leg);
  return targets;
}

// An extended COMMIT batch ([Parse] Bind [Describe portal] Execute) consumed by the proxy: no
// server runs its Parse, so a statement it names is remembered for later Binds of the name
// (pgjdbc binds its server-prepared COMMIT so), which parse it on the leg that runs them.
Session::Next Session::start_two_phase(const CommitPlan& plan, const ExtendedBatch& batch) {
  remember_parsed(batch.parsed);
  return start_two_phase(plan, batch.control_size, batch.control_answer, true);
}

// What the commit's legs call of the session: the runners' hooks, with the catalog's decision
// delivered only while this session and its two-phase commit live; the driver's outcome; and the
// session's work after each event (the client's answer once finished, idle legs back).
CommitLegs::Calls Session::commit_calls() {
  CommitLegs::Calls calls;
  calls.two_phase = two_phase_hooks();
  calls.two_phase.decide_commit = [this](const std::string& gid, const std::vector<std::string>& shards,
                                         std::function<void(Decision, std::string)> decided) {
    host_.decide_commit(gid, shards,
                        [this, alive = std::weak_ptr<int>(alive_), decided = std::move(decided)](
                            Decision decision, const std::string& detail) {
                          if (alive.expired() || !txn_.two_phase || phase_ == Phase::Closed) return;
                          decided(decision, detail);
                          after_commit_event();
                        });
  };
  calls.finished = [this](TwoPhaseOutcome outcome, const Status& error) {
    txn_.two_phase->finished = true;
    txn_.two_phase->outcome = outcome;
    txn_.two_phase->client_error = error;
  };
  calls.after_event = [this] { after_commit_event(); };
  calls.fatal = [this](size_t leg, std::string_view frame) { return end_session_by_commit_leg(leg, frame); };
  calls.violation = [this](size_t leg) { terminate_by_commit_leg(leg); };
  return calls;
}

// After an event of the commit's driver: once it finished, the client's answer; then the idle
// legs go back, and the client's input is read again.
void Session::after_commit_event() {
  after_two_phase_event();
  if (txn_.two_phase) return;
  release_idle_parked();
  if (!txn_.parked_busy() && phase_ == Phase::Ready) read_client_messages();
}

// A FATAL or PANIC ErrorResponse of a committing leg ends the client's session as any server's
// (ends_session): the client gets it as sent, and the connection closes.
bool Session::end_session_by_commit_leg(size_t leg, std::string_view frame) {
  LOG_WARN("client=c%llu shard %d ended the session during two-phase commit", (unsigned long long)id(),
           txn_.two_phase->legs->shard_index(leg));
  to_client(frame);
  close("its server ended the session");
  return true;
}

// A committing leg broke the protocol: as a parked leg that does (on_parked_frame).
void Session::terminate_by_commit_leg(size_t leg) {
  lost_written_shard(txn_.two_phase->legs->shard_index(leg));
}

// The server of `shard`, written in the transaction, failed or is gone: the session ends, every
// other leg's part of the transaction rolls back with it.
Session::Next Session::lost_written_shard(int shard) {
  terminate(Status::server("08P01", "a server of the transaction (shard " +
                                        host_.directory()->shard_name(static_cast<uint16_t>(shard)) +
                                        ") failed; the transaction was rolled back on every shard"));
  return Next::Stop;
}

// The commit's run ends: each of its legs is a parked leg of the session's as before (a lost one's
// answers go: legs_ may reuse the leg), with the status its last answer to the driver said; what
// it still owes the driver is read and dropped.
void Session::take_back_commit_legs(TwoPhaseState& state) {
  const std::vector<LegEngine::Handed> handed = state.legs->hand_over();
  for (size_t i = 0; i < handed.size(); ++i) {
    if (handed[i].backend == nullptr) {
      drop_leg(handed[i].leg);
      continue;
    }
    LegAnswers* leg = parked_leg(handed[i].leg);
    if (leg == nullptr) continue;
    leg->tracker.reset();
    if (const char status = state.legs->status(i)) leg->server_status = status;
    if (handed[i].ready_owed > 0)
      send_unseen(*leg, {}, std::vector<Owed>(static_cast<size_t>(handed[i].ready_owed), Owed::Query));
  }
}

// The driver finished (its outcome counted): the client gets COMMIT or the error, the
// transaction is over. Done after the driver's event, never inside it.
void Session::after_two_phase_event() {
  if (!txn_.two_phase || !txn_.two_phase->finished) return;
  std::unique_ptr<TwoPhaseState> state = std::exchange(txn_.two_phase, nullptr);
  take_back_commit_legs(*state);
  const bool committed = state->outcome == TwoPhaseOutcome::Committed;
  std::string out = std::move(state->answered);
  if (committed) {
    // A spread batch's Sync is answered by the ReadyForQuery alone.
    if (!state->ends_batch) wire::encode_command_complete(out, "COMMIT");
  } else {
    const Status& error = state->client_error;
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
    if (state->extended) request_.skip_until_sync = true;
  }
  if (!state->extended) wire::encode_ready_for_query(out, 'I');
  to_client(out);
  const int64_t now = stats::monotonic_us();
  if (clock_.request_started_us != 0) {
    host_.traffic().latency[static_cast<size_t>(clock_.route_label)].observe_us(
        static_cast<uint64_t>(now - clock_.request_started_us));
    clock_.request_started_us = 0;
  }
  clock_.xact_started_us = now;
  profile_.settings.end_transaction(committed);
  profile_.schema_changes.end_transaction();
  txn_.control.on_server_status('I');
  txn_.shards.end();
  if (request_.state == RequestState::Running) set_request_state(RequestState::Routing);
}

// The gid and decision of a two-phase commit, its outcome counted by the table of outcomes
// (two_phase_outcome_row): the same for the session's COMMIT and the runners' own.
TwoPhaseHooks Session::two_phase_hooks() {
  TwoPhaseHooks hooks;
  hooks.next_gid = [this] { return host_.next_two_phase_gid(); };
  hooks.decide_commit = [this](const std::string& gid, const std::vector<std::string>& shards,
                               std::function<void(Decision, std::string)> decided) {
    host_.decide_commit(gid, shards, std::move(decided));
  };
  hooks.two_phase_done = [this](TwoPhaseOutcome outcome, int64_t started_us) {
    count_two_phase_outcome(host_.traffic(), outcome, stats::monotonic_us() - started_us);
  };
  return hooks;
}

// A refused PREPARE TRANSACTION (refuse_two_phase: a transaction on several shards, a gid of
// shardwire's) sent alone inside a transaction block fails as PostgreSQL's fails: the
// transaction ends with a rollback (ReadyForQuery 'I'). It runs as a ROLLBACK on every leg, and
// the client gets the refusal in place of the ROLLBACK's CommandComplete (answer_transaction_control
// for a deferred transaction, handle_server_message otherwise). Outside a block it is refused in
// place and nothing changes, as there.
bool Session::prepare_transaction_as_rollback(FrontQuery& front) {
  const auto& statements = front.facts->statements;
  if (statements.size() != 1 || statements.front().kind != parser::StatementKind::PrepareTransaction ||
      txn_.control.status() == 'I')
    return false;
  Status refused = refuse_two_phase(statements.front());
  if (refused.is_ok()) return false;  // it runs on the transaction's one shard
  auto rollback = parser::analyze("ROLLBACK");
  if (!rollback) return false;
  front.expanded = "ROLLBACK";
  front.facts = std::move(*rollback);
  request_.prepare_refused = std::move(refused);
  return true;
}

// The same sent in the extended protocol (postgres.js's sql.begin with prepare): the batch runs
// as its Query form, which replaces its bytes in the input and is read next. The Query's answer,
// the refusal and ReadyForQuery, is what PostgreSQL owes the batch (its other answers are
// skipped after an error). A batch of another shape is refused at its Parse (forward_parse).
Session::Next Session::prepare_transaction_batch_as_query() {
  if (txn_.control.status() == 'I' || request_.batch_open || fence_.replaying()) return Next::Forward;
  PrepareTransactionBatch batch = find_prepare_transaction_batch(client_input(), limits_);
  if (batch.kind == PrepareTransactionBatch::Kind::NeedMore) return Next::Stop;
  if (batch.kind != PrepareTransactionBatch::Kind::Found) return Next::Forward;
  auto facts = parser::analyze(batch.text);
  if (!facts || (*facts)->statements.size() != 1 ||
      (*facts)->statements.front().kind != parser::StatementKind::PrepareTransaction ||
      refuse_two_phase((*facts)->statements.front()).is_ok())
    return Next::Forward;
  std::string query;
  wire::encode_query(query, batch.text);
  client_->replace_input(batch.size, query);
  return Next::Continue;
}

}  // namespace sw::session
