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
// commit over every leg, run by the one driver (TwoPhaseLegs). The active leg owes nothing.
Session::Next Session::start_two_phase(const CommitPlan& plan, size_t consumed, std::string answered,
                                       bool extended) {
  auto state = std::make_unique<TwoPhaseState>();
  std::vector<std::string> names;
  std::vector<size_t> written;
  auto add = [&](int shard) {
    state->shards.push_back(shard);
    names.push_back(host_.directory()->shard_name(static_cast<uint16_t>(shard)));
  };
  txn_.parked.push_back(std::move(txn_.leg));
  txn_.leg = Leg{};
  for (int shard : plan.written) {
    written.push_back(state->shards.size());
    add(shard);
  }
  // Session pooling: the session's servers on shards the transaction did not touch are out of it.
  for (const Leg& leg : txn_.parked)
    if (leg.server_status != 'I' &&
        std::find(plan.first.begin(), plan.first.end(), leg.shard) != plan.first.end())
      add(leg.shard);
  if (clock_.request_started_us == 0) note_request_start();
  consume_client(consumed);
  state->answered = std::move(answered);
  state->extended = extended;
  state->legs = std::make_unique<TwoPhaseLegs>(
      "client=c" + std::to_string(id()) + " COMMIT", commit_hooks(),
      [this](size_t index, const std::string& sql) { send_two_phase(index, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) {
        txn_.two_phase->finished = true;
        txn_.two_phase->outcome = outcome;
        txn_.two_phase->client_error = error;
      });
  txn_.two_phase = std::move(state);
  txn_.two_phase->legs->start(names, written);
  return Next::Stop;
}

// An extended COMMIT batch ([Parse] Bind [Describe portal] Execute) consumed by the proxy: no
// server runs its Parse, so a statement it names is remembered for later Binds of the name
// (pgjdbc binds its server-prepared COMMIT so), which parse it on the leg that runs them.
Session::Next Session::start_two_phase(const CommitPlan& plan, const ExtendedBatch& batch) {
  remember_parsed(batch.parsed);
  return start_two_phase(plan, batch.control_size, batch.control_answer, true);
}

// The runners' hooks, with the catalog's decision delivered only while this session and its
// two-phase commit live, and the session's work after it (the client's answer, idle legs back).
TwoPhaseHooks Session::commit_hooks() {
  TwoPhaseHooks hooks = two_phase_hooks();
  hooks.decide_commit = [this](const std::string& gid, const std::vector<std::string>& shards,
                               std::function<void(Decision, std::string)> decided) {
    host_.decide_commit(gid, shards,
                        [this, alive = std::weak_ptr<int>(alive_), decided = std::move(decided)](
                            Decision decision, const std::string& detail) {
                          if (alive.expired() || !txn_.two_phase || phase_ == Phase::Closed) return;
                          decided(decision, detail);
                          after_two_phase_event();
                          release_idle_parked();
                          if (!txn_.two_phase && !txn_.parked_busy() && phase_ == Phase::Ready)
                            read_client_messages();
                        });
  };
  return hooks;
}

// The driver's statement for its leg `index`: a simple Query on that shard's parked leg.
void Session::send_two_phase(size_t index, const std::string& sql) {
  const int shard = txn_.two_phase->shards[index];
  auto leg = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                          [&](const Leg& l) { return l.shard == shard && l.attached(); });
  if (leg == txn_.parked.end()) return;  // lost: the driver knows
  std::string out;
  wire::encode_query(out, sql);
  leg->end_error = Status::ok();
  send_unseen(*leg, out, {Owed::Query});
}

size_t Session::two_phase_index(int shard) const {
  const std::vector<int>& shards = txn_.two_phase->shards;
  return static_cast<size_t>(std::find(shards.begin(), shards.end(), shard) - shards.begin());
}

// A parked leg's message while a two-phase commit runs: its first ErrorResponse and its
// ReadyForQuery, which ends the answer to the statement the driver sent it.
void Session::on_two_phase_message(Leg& leg, const wire::Frame& frame) {
  TwoPhaseLegs& legs = *txn_.two_phase->legs;
  if (frame.type == 'E') legs.on_error(two_phase_index(leg.shard), LegEngine::error_of(frame.body));
  if (frame.type != 'Z') return;
  legs.on_ready(two_phase_index(leg.shard));
  after_two_phase_event();
}

// A leg's server was lost during the two-phase commit: the driver decides what it means.
void Session::on_two_phase_leg_lost(int shard, const Status& why) {
  txn_.two_phase->legs->on_lost(two_phase_index(shard), why.message);
  after_two_phase_event();
}

// The driver finished (its outcome counted): the client gets COMMIT or the error, the
// transaction is over. Done after the driver's event, never inside it.
void Session::after_two_phase_event() {
  if (!txn_.two_phase || !txn_.two_phase->finished) return;
  std::unique_ptr<TwoPhaseState> state = std::exchange(txn_.two_phase, nullptr);
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
