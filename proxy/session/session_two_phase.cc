// Session: COMMIT of a transaction written on several shards, by two-phase commit. The
// coordinator (two_phase_commit.h) decides what each leg runs; this file parks every leg (the
// active one too: no leg's answers reach the client), sends the coordinator's statements, feeds
// it the legs' answers and the catalog's decision (SessionHost::decide_commit), and answers the
// client's COMMIT once the coordinator is done. No client input is read meanwhile.
// docs/architecture.md "Two-phase commit".
#include <algorithm>
#include <utility>

#include "common/failpoint.h"
#include "common/log.h"
#include "config/config.h"
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
// commit over every leg. The active leg owes nothing.
Session::Next Session::start_two_phase(const CommitPlan& plan, size_t consumed, std::string answered,
                                       bool extended) {
  std::vector<Participant> participants;
  auto add = [&](int shard, bool written) {
    participants.push_back({shard, host_.directory()->shard_name(static_cast<uint16_t>(shard)), written});
  };
  txn_.parked.push_back(std::move(txn_.leg));
  txn_.leg = Leg{};
  for (int shard : plan.written) add(shard, true);
  // Session pooling: the session's servers on shards the transaction did not touch are out of it.
  for (const Leg& leg : txn_.parked)
    if (leg.server_status != 'I' &&
        std::find(plan.first.begin(), plan.first.end(), leg.shard) != plan.first.end())
      add(leg.shard, false);
  auto commit = std::make_unique<TwoPhaseCommit>(host_.next_two_phase_gid(), std::move(participants));
  LOG_DEBUG("client=c%llu two-phase commit %s over %zu written shards", (unsigned long long)id(),
            commit->gid().c_str(), plan.written.size());
  if (clock_.request_started_us == 0) note_request_start();
  consume_client(consumed);
  txn_.two_phase = std::make_unique<TwoPhaseState>();
  txn_.two_phase->commit = std::move(commit);
  txn_.two_phase->answered = std::move(answered);
  txn_.two_phase->extended = extended;
  txn_.two_phase->started_us = stats::monotonic_us();
  failpoint::hit("2pc.before_prepare");
  send_two_phase(txn_.two_phase->commit->start());
  return Next::Stop;
}

// An extended COMMIT batch ([Parse] Bind [Describe portal] Execute) consumed by the proxy: no
// server runs its Parse, so a statement it names is remembered for later Binds of the name
// (pgjdbc binds its server-prepared COMMIT so), which parse it on the leg that runs them.
Session::Next Session::start_two_phase(const CommitPlan& plan, const ExtendedBatch& batch) {
  remember_parsed(batch.parsed);
  return start_two_phase(plan, batch.control_size, batch.control_answer, true);
}

void Session::send_two_phase(const std::vector<LegCommand>& commands) {
  for (const LegCommand& command : commands) {
    auto leg = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                            [&](const Leg& l) { return l.shard == command.shard && l.attached(); });
    if (leg == txn_.parked.end()) continue;  // lost: the coordinator knows
    std::string out;
    wire::encode_query(out, command.sql);
    leg->end_error = Status::ok();
    send_unseen(*leg, out, {Owed::Query});
  }
}

// A parked leg's message while a two-phase commit runs: its ReadyForQuery ends the answer to the
// statement the coordinator sent it.
void Session::on_two_phase_message(Leg& leg, const wire::Frame& frame) {
  if (frame.type == 'E' && leg.end_error.is_ok()) {
    auto fields = wire::decode_error_fields(frame.body);
    leg.end_error = fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                           : Status::server("08P01", "a malformed ErrorResponse");
    return;
  }
  if (frame.type != 'Z') return;
  TwoPhaseCommit& commit = *txn_.two_phase->commit;
  const Status error = std::exchange(leg.end_error, Status::ok());
  if (!error.is_ok())
    LOG_WARN("client=c%llu two-phase commit %s: shard %d answered %s", (unsigned long long)id(),
             commit.gid().c_str(), leg.shard, error.sqlstate.c_str());
  const TwoPhaseCommit::Step before = commit.step();
  send_two_phase(commit.on_answer(leg.shard, error));
  if (before == TwoPhaseCommit::Step::Preparing && commit.step() == TwoPhaseCommit::Step::Preparing &&
      commit.prepared_count() == 1)
    failpoint::hit("2pc.between_prepares");
  if (commit.step() == TwoPhaseCommit::Step::Committing && commit.commit_prepared_count() == 1)
    failpoint::hit("2pc.between_commit_prepared");
  advance_two_phase();
}

// A leg's server was lost during the two-phase commit: the coordinator decides what it means.
void Session::on_two_phase_leg_lost(int shard, const Status& why) {
  LOG_WARN("client=c%llu two-phase commit %s lost its server on shard %d: %s", (unsigned long long)id(),
           txn_.two_phase->commit->gid().c_str(), shard, why.message.c_str());
  send_two_phase(txn_.two_phase->commit->on_lost(shard, why.message));
  advance_two_phase();
}

// After each event: the decision is asked for once every leg prepared; the client is answered
// once the coordinator is done.
void Session::advance_two_phase() {
  TwoPhaseState& state = *txn_.two_phase;
  TwoPhaseCommit& commit = *state.commit;
  if (commit.step() == TwoPhaseCommit::Step::Deciding && !state.deciding) {
    state.deciding = true;
    std::weak_ptr<int> alive = alive_;
    host_.decide_commit(commit.gid(), commit.written_names(),
                        [this, alive](Decision decision, const std::string& detail) {
                          if (alive.expired() || !txn_.two_phase || phase_ == Phase::Closed) return;
                          on_commit_decision(decision, detail);
                        });
    return;
  }
  if (commit.step() == TwoPhaseCommit::Step::Done) finish_two_phase();
}

void Session::on_commit_decision(Decision decision, const std::string& detail) {
  TwoPhaseCommit& commit = *txn_.two_phase->commit;
  if (decision == Decision::Commit) failpoint::hit("2pc.after_decision");
  if (decision != Decision::Commit)
    LOG_WARN("client=c%llu two-phase commit %s: decision %s%s%s", (unsigned long long)id(),
             commit.gid().c_str(), decision == Decision::Abort ? "abort (recovery's)" : "unknown",
             detail.empty() ? "" : ": ", detail.c_str());
  send_two_phase(commit.on_decision(decision, detail));
  advance_two_phase();
  release_idle_parked();
  if (!txn_.two_phase && !txn_.parked_busy() && phase_ == Phase::Ready) read_client_messages();
}

// The coordinator is done: the client gets COMMIT or the error, the transaction is over.
void Session::finish_two_phase() {
  std::unique_ptr<TwoPhaseState> state = std::exchange(txn_.two_phase, nullptr);
  const TwoPhaseCommit& commit = *state->commit;
  const bool committed = commit.outcome() == TwoPhaseOutcome::Committed;
  std::string out = std::move(state->answered);
  if (committed) {
    // A spread batch's Sync is answered by the ReadyForQuery alone.
    if (!state->ends_batch) wire::encode_command_complete(out, "COMMIT");
  } else {
    const Status& error = commit.client_error();
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
    if (state->extended) request_.skip_until_sync = true;
  }
  if (!state->extended) wire::encode_ready_for_query(out, 'I');
  to_client(out);
  const int64_t now = stats::monotonic_us();
  stats::WorkerTraffic& traffic = host_.traffic();
  switch (commit.outcome()) {
    case TwoPhaseOutcome::Committed:
      traffic.count_cross_shard_commit(stats::CrossShardOutcome::TwoPhaseCommitted);
      traffic.two_phase_commit_latency.observe_us(static_cast<uint64_t>(now - state->started_us));
      break;
    case TwoPhaseOutcome::RolledBack:
      traffic.count_cross_shard_commit(stats::CrossShardOutcome::RolledBack);
      break;
    case TwoPhaseOutcome::Unknown: traffic.count_cross_shard_commit(stats::CrossShardOutcome::Unknown); break;
  }
  // A commit is routine; a rollback or an outcome left to recovery is what an operator looks for.
  if (committed)
    LOG_DEBUG("client=c%llu two-phase commit %s committed", (unsigned long long)id(), commit.gid().c_str());
  else
    LOG_INFO("client=c%llu two-phase commit %s %s", (unsigned long long)id(), commit.gid().c_str(),
             commit.outcome() == TwoPhaseOutcome::Unknown ? "left to recovery" : "rolled back");
  if (clock_.request_started_us != 0) {
    host_.traffic().latency[static_cast<size_t>(clock_.route_label)].observe_us(
        static_cast<uint64_t>(now - clock_.request_started_us));
    clock_.request_started_us = 0;
  }
  clock_.xact_started_us = now;
  profile_.settings.end_transaction(committed);
  txn_.control.on_server_status('I');
  txn_.shards.end();
  if (request_.state == RequestState::Running) set_request_state(RequestState::Routing);
}

// The hooks of a runner's own two-phase commit (CopyIn, ReferenceWrite): the gid and decision of
// a transaction's COMMIT, its outcome counted the same way.
TwoPhaseHooks Session::two_phase_hooks() {
  TwoPhaseHooks hooks;
  hooks.next_gid = [this] { return host_.next_two_phase_gid(); };
  hooks.decide_commit = [this](const std::string& gid, const std::vector<std::string>& shards,
                               std::function<void(Decision, std::string)> decided) {
    host_.decide_commit(gid, shards, std::move(decided));
  };
  hooks.two_phase_done = [this](TwoPhaseOutcome outcome, int64_t started_us) {
    stats::WorkerTraffic& traffic = host_.traffic();
    switch (outcome) {
      case TwoPhaseOutcome::Committed:
        traffic.count_cross_shard_commit(stats::CrossShardOutcome::TwoPhaseCommitted);
        traffic.two_phase_commit_latency.observe_us(
            static_cast<uint64_t>(stats::monotonic_us() - started_us));
        break;
      case TwoPhaseOutcome::RolledBack:
        traffic.count_cross_shard_commit(stats::CrossShardOutcome::RolledBack);
        break;
      case TwoPhaseOutcome::Unknown:
        traffic.count_cross_shard_commit(stats::CrossShardOutcome::Unknown);
        break;
    }
  };
  return hooks;
}

// Two-phase commit is refused: a prepared transaction lives on one shard, and COMMIT PREPARED
// names only its gid, so it could reach another shard and leave the first one holding its locks.
Status Session::refuse_two_phase(parser::StatementKind kind) {
  using parser::StatementKind;
  if (kind == StatementKind::PrepareTransaction)
    return Status::client("0A000",
                          "PREPARE TRANSACTION is not supported through shardwire; the transaction was "
                          "rolled back (commit it with COMMIT instead)");
  if (kind == StatementKind::CommitPrepared || kind == StatementKind::RollbackPrepared)
    return Status::client("0A000",
                          std::string(kind == StatementKind::CommitPrepared ? "COMMIT" : "ROLLBACK") +
                              " PREPARED is not supported through shardwire; run it on the shard that "
                              "holds the prepared transaction (see its pg_prepared_xacts)");
  return Status::ok();
}

// A PREPARE TRANSACTION sent alone inside a transaction block fails as PostgreSQL's fails: the
// transaction ends with a rollback (ReadyForQuery 'I'). It runs as a ROLLBACK on every leg, and
// the client gets the refusal in place of the ROLLBACK's CommandComplete (answer_transaction_control
// for a deferred transaction, handle_server_message otherwise). Outside a block it is refused in
// place and nothing changes, as there.
bool Session::prepare_transaction_as_rollback(FrontQuery& front) {
  const auto& statements = front.facts->statements;
  if (statements.size() != 1 || statements.front().kind != parser::StatementKind::PrepareTransaction ||
      txn_.control.status() == 'I')
    return false;
  auto rollback = parser::analyze("ROLLBACK");
  if (!rollback) return false;
  front.expanded = "ROLLBACK";
  front.facts = std::move(*rollback);
  request_.prepare_refused = refuse_two_phase(parser::StatementKind::PrepareTransaction);
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
      (*facts)->statements.front().kind != parser::StatementKind::PrepareTransaction)
    return Next::Forward;
  std::string query;
  wire::encode_query(query, batch.text);
  client_->replace_input(batch.size, query);
  return Next::Continue;
}

}  // namespace sw::session
