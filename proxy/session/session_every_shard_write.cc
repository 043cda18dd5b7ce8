// Session: a COPY FROM STDIN (CopyIn) or a write of a reference table (ReferenceWrite) run with
// the session's servers (docs/architecture.md §5.10, §6.4). Inside the client's transaction the
// runner joins its legs: a shard the transaction holds lends its server (idle in the
// transaction), another shard's new server replays what a joining leg replays; at the end every
// server stays in the transaction as a leg, the shards written are recorded (TransactionShards),
// and the client's COMMIT commits them by its CommitPlan (two-phase when several shards wrote).
// On failure the lent legs are failed as PostgreSQL fails a transaction (later statements get
// 25P02 until ROLLBACK) and new servers are closed. In session pooling outside a transaction the
// session's servers are lent to a runner that begins and commits on its own, as with new ones.
// A cursor round runs on the transaction's legs instead, with no lending: transaction_targets
// and end_run_on_legs (the same start and end, in place).
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Fails a lent leg's transaction, as the statement's error fails it on a server that ran it.
constexpr const char* kFailTransaction =
    "DO $sw_abort$ BEGIN RAISE EXCEPTION USING ERRCODE = '25P02', MESSAGE = 'a statement of this "
    "transaction failed on another shard'; END $sw_abort$";

}  // namespace

// The one way a runner gets the session's servers (docs/architecture.md §5.10 step 6): a target
// per shard of `shards` (every shard of the directory when null), in that order, with its pool;
// each shard the session holds a leg on lends that leg's server (lend_session_servers).
Status Session::targets_with_session_servers(const std::vector<int>* shards, bool in_transaction,
                                             std::vector<LegEngine::Target>* targets,
                                             std::vector<pool::Pool*>* pools) {
  const router::Directory& directory = *host_.directory();
  std::vector<int> every;
  if (shards == nullptr) {
    for (size_t i = 0; i < directory.shards().size(); ++i) every.push_back(static_cast<int>(i));
    shards = &every;
  }
  for (int shard : *shards) {
    LegEngine::Target target;
    Status error;
    target.pool = pool_for_shard(shard, &error);
    if (target.pool == nullptr) return error;
    target.shard = directory.shard_name(static_cast<uint16_t>(shard));
    target.index = shard;
    pools->push_back(target.pool);
    targets->push_back(std::move(target));
  }
  lend_session_servers(targets, in_transaction);
  return Status::ok();
}

// Each target whose shard has a leg of the session gets that leg's server; the leg waits in
// txn_.lent until the runner hands the server back.
void Session::lend_session_servers(std::vector<LegEngine::Target>* targets, bool in_transaction) {
  std::string joining;
  if (in_transaction) joining = txn_.control.deferred() ? txn_.control.deferred_begin() : joining_prologue();
  txn_.lent.clear();
  txn_.lent_active = -1;
  for (LegEngine::Target& target : *targets) {
    const int shard = target.index;
    target.begin = in_transaction ? joining : "BEGIN";
    Leg* leg = nullptr;
    if (txn_.leg.attached() && txn_.leg.shard == shard) {
      leg = &txn_.leg;
      txn_.lent_active = shard;
    } else {
      auto found = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                                [shard](const Leg& other) { return other.shard == shard; });
      if (found != txn_.parked.end()) leg = &*found;
    }
    if (leg == nullptr) continue;
    // In the transaction already: no settings (RESET ALL would undo SET LOCAL), no BEGIN.
    const bool joined = in_transaction && leg->server_status != 'I';
    if (joined) target.begin.clear();
    const bool behind = std::exchange(leg->settings_behind, false);
    leg->backend->applied_state = behind && !joined ? std::string() : profile_.settings.signature();
    target.lent = leg->backend;
    legs_.detach(*leg->backend);
    txn_.lent.push_back(std::move(*leg));
    *leg = Leg{};
  }
  txn_.parked.erase(std::remove_if(txn_.parked.begin(), txn_.parked.end(),
                                   [](const Leg& other) { return !other.attached(); }),
                    txn_.parked.end());
}

// A second written shard with two-phase commit off: the same refusal a statement gets.
Status Session::refuse_writes_in_transaction(const std::vector<LegEngine::Handed>& handed) const {
  std::vector<int> writers = txn_.shards.writers();
  const CrossShardWrites policy = cross_shard_writes();
  const router::Directory& directory = *host_.directory();
  for (const LegEngine::Handed& server : handed) {
    const int shard = server.shard;
    if (!server.wrote || std::find(writers.begin(), writers.end(), shard) != writers.end()) continue;
    writers.push_back(shard);
    if (writers.size() > 1 && policy != CrossShardWrites::TwoPhase) {
      return TransactionShards::cross_shard_write(
          directory.shard_name(static_cast<uint16_t>(writers.front())),
          directory.shard_name(static_cast<uint16_t>(shard)), policy);
    }
  }
  return Status::ok();
}

// The runner's end: its servers become the session's legs again (new ones too, inside a
// transaction); on failure the lent ones are settled and their transaction failed (or, outside
// one, rolled back) and new ones closed. Returns why a successful run is refused after all.
Status Session::take_back_servers(std::vector<LegEngine::Handed> handed, const Status& error,
                                  bool in_transaction) {
  std::vector<Leg> lent = std::exchange(txn_.lent, {});
  const int active = std::exchange(txn_.lent_active, -1);
  Status verdict = error.is_ok() && in_transaction ? refuse_writes_in_transaction(handed) : Status::ok();
  const bool failed = !error.is_ok() || !verdict.is_ok();
  const bool deferred = in_transaction && txn_.control.deferred();
  if (in_transaction && !failed) {
    if (deferred) txn_.shards.begin(txn_.control.take_begin(/*may_move=*/false));
    txn_.control.pin();
    txn_.shards.set_cross_shard_writes(cross_shard_writes());
  }
  if (in_transaction && failed) fail_legs_not_lent();
  bool lost = false;
  for (LegEngine::Handed& server : handed) {
    const int shard = server.shard;
    auto found = std::find_if(lent.begin(), lent.end(), [shard](const Leg& l) { return l.shard == shard; });
    if (found == lent.end() && server.backend == nullptr) continue;
    if (found == lent.end() && failed) {
      server.backend->pool().release(server.backend, false);  // closed: its transaction rolls back
      continue;
    }
    if (server.backend == nullptr) {  // a lent server was lost
      lost = true;
      continue;
    }
    Leg leg = found != lent.end() ? std::move(*found) : Leg{};
    leg.shard = shard;
    leg.backend = server.backend;
    legs_.adopt(*leg.backend, shard);
    if (failed) {
      if (found != lent.end()) settle_lent_leg(std::move(leg), server, in_transaction);
      continue;
    }
    note_run_statement(leg, server, in_transaction);
    if (shard == active || (active < 0 && !txn_.leg.attached())) {
      txn_.leg = std::move(leg);
    } else {
      txn_.parked.push_back(std::move(leg));
    }
  }
  if (in_transaction) {
    if (failed && deferred) txn_.control.abort_if_deferred();
    txn_.control.on_server_status(failed ? 'E' : 'T');
  }
  post_run_end(failed, lost);
  return verdict;
}

// A lent leg after a failed run: parked until it answered what the runner sent it (a COPY still
// open gets CopyFail), then its transaction is failed (inside the client's) or rolled back.
void Session::settle_lent_leg(Leg leg, const LegEngine::Handed& handed, bool in_transaction) {
  std::string out;
  std::vector<Owed> owed(static_cast<size_t>(handed.ready_owed), Owed::Query);
  if (handed.copy_open) {
    wire::MessageWriter(out).begin('f').cstr("a statement of this transaction failed on another shard").end();
    owed.push_back(Owed::Query);
  }
  wire::encode_query(out, in_transaction ? kFailTransaction : "ROLLBACK");
  owed.push_back(Owed::Query);
  leg.server_status = in_transaction ? 'E' : 'I';
  txn_.parked.push_back(std::move(leg));
  send_unseen(txn_.parked.back(), out, owed);
}

// A failed run on some of the shards (a split INSERT's): the transaction's legs on the others
// (the active one parked too) get their transaction failed as well, so its COMMIT commits nowhere.
void Session::fail_legs_not_lent() {
  if (txn_.leg.attached()) {
    txn_.parked.push_back(std::move(txn_.leg));
    txn_.leg = Leg{};
  }
  std::string out;
  wire::encode_query(out, kFailTransaction);
  for (Leg& other : txn_.parked) {
    if (other.server_status != 'T') continue;  // not in the transaction, or failed already
    other.server_status = 'E';
    send_unseen(other, out, {Owed::Query});
  }
}

// Answers a settling leg may hold already (the runner stopped reading mid-way).
void Session::read_settling_legs() {
  std::vector<pool::Backend*> servers;
  for (const Leg& other : txn_.parked) servers.push_back(other.backend);
  for (pool::Backend* backend : servers) {
    if (parked_leg(*backend) != nullptr) legs_.read_pending(legs_.leg_of(*backend));
  }
}

// Inside the client's transaction the runner's answer ends with the session's ReadyForQuery.
void Session::write_session_ready(bool in_transaction) {
  if (!in_transaction) return;
  std::string out;
  wire::encode_ready_for_query(out, txn_.control.status());
  client_->write(out);
}

// A COPY FROM STDIN, a reference write, a multi-shard INSERT ... SELECT or a split INSERT sent
// alone while the session holds a server (inside a transaction, or in session pooling): a runner with the
// session's servers.
Session::Next Session::write_on_every_shard(const wire::Frame& query, const parser::StatementFacts& only,
                                            const router::Route& route) {
  Leg& leg = txn_.leg;
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;  // the server answers 25P02
  if (Status refused = every_shard_write_refusal(only, route); !refused.is_ok()) {
    if (clock_.request_started_us == 0) note_request_start();
    inject_abort(refused, false);  // fails the transaction, as a statement's error does
    consume_client(query.size);
    return Next::Continue;
  }
  if (clock_.request_started_us == 0) note_request_start();
  const Start start = copies_in(route, &only)                  ? start_copy_in(query, only, route)
                      : route.kind == router::RouteKind::Split ? start_split_insert(&only, route, query.size)
                      : route.scatter_write()
                          ? start_scatter_write(query, route)
                          : start_reference_write(std::string(whole(query)), query.size, &only, route);
  return start == Start::Wait ? Next::Stop : Next::Continue;
}

// A reference write's (a multi-shard INSERT ... SELECT's, a split INSERT's) extended batch while
// the session holds a server: the same, with the batch rebuilt for every shard (extended_reference_write).
Session::Next Session::write_batch_on_every_shard(const ExtendedBatch& batch, const router::Route& route) {
  Leg& leg = txn_.leg;
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;  // the server answers 25P02
  if (clock_.request_started_us == 0) note_request_start();
  const bool split = route.kind == router::RouteKind::Split;  // remembers its own Parse
  const Start start = split                   ? start_extended_split(batch, route)
                      : route.scatter_write() ? start_extended_scatter_write(batch, route)
                                              : start_extended_reference_write(batch, route);
  if (start == Start::Wait) return Next::Stop;
  if (!split)
    remember_parsed(batch.parsed);  // the legs ran it as the unnamed statement: its name reached none
  return Next::Continue;
}

// A Query inside an extended batch not yet synced (asyncpg's COPY after its introspection, in
// session pooling): a COPY FROM or reference write still runs on every shard.
Session::Next Session::write_in_open_batch(const wire::Frame& query) {
  if (!request_.batch_open || server_lent() || txn_.leg.outside_transaction || txn_.control.moving() ||
      txn_.ending != Ending::None || !host_.directory())
    return Next::Forward;
  auto facts = facts_of_query(query);
  if (!facts || facts->statements.size() != 1) return Next::Forward;
  router::Route route = router::route_query(*facts, nullptr, *host_.directory(), host_.routing_rules());
  if (!route.copy_in && !route.reference_write) return Next::Forward;
  return write_on_every_shard(query, facts->statements.front(), route);
}

// A run's targets on the transaction's legs (a run on legs_): one per shard of `shards`, in that
// order. A shard with a leg of the transaction starts as its server stands: in the transaction
// already, nothing; else the prologue that joins it (settings only when the leg is behind the
// session's). A shard without one gets a new leg of legs_, which joins the transaction. Outside a
// transaction nothing begins (a read).
Status Session::transaction_targets(const std::vector<int>& shards, bool in_transaction,
                                    std::vector<LegEngine::Target>* targets) {
  const router::Directory& directory = *host_.directory();
  std::string joining;
  if (in_transaction) joining = txn_.control.deferred() ? txn_.control.deferred_begin() : joining_prologue();
  for (int shard : shards) {
    LegEngine::Target target;
    Status error;
    target.pool = pool_for_shard(shard, &error);
    if (target.pool == nullptr) return error;
    target.shard = directory.shard_name(static_cast<uint16_t>(shard));
    target.index = shard;
    target.begin = joining;
    if (Leg* leg = transaction_leg(shard)) {
      const bool joined = in_transaction && leg->server_status != 'I';
      if (joined) target.begin.clear();
      const bool behind = std::exchange(leg->settings_behind, false);
      leg->backend->applied_state = behind && !joined ? std::string() : profile_.settings.signature();
    }
    targets->push_back(std::move(target));
  }
  return Status::ok();
}

Leg* Session::transaction_leg(int shard) {
  if (txn_.leg.attached() && txn_.leg.shard == shard) return &txn_.leg;
  auto found = std::find_if(txn_.parked.begin(), txn_.parked.end(),
                            [shard](const Leg& other) { return other.shard == shard; });
  return found != txn_.parked.end() ? &*found : nullptr;
}

// The end of a run on the transaction's legs, in place: a borrowed leg's record stays where it is
// (settled on failure); a new leg becomes one of the transaction's (the active one when there is
// none), or is closed on failure; a borrowed leg left without a server was lost (its record went
// with on_run_leg_lost) and ends the session. Returns why a successful run is refused after all.
Status Session::end_run_on_legs(const std::vector<LegEngine::Handed>& handed, const Status& error,
                                bool in_transaction) {
  Status verdict = error.is_ok() && in_transaction ? refuse_writes_in_transaction(handed) : Status::ok();
  const bool failed = !error.is_ok() || !verdict.is_ok();
  const bool deferred = in_transaction && txn_.control.deferred();
  if (in_transaction && !failed) {
    if (deferred) txn_.shards.begin(txn_.control.take_begin(/*may_move=*/false));
    txn_.control.pin();
    txn_.shards.set_cross_shard_writes(cross_shard_writes());
  }
  bool lost = false;
  for (const LegEngine::Handed& server : handed) {
    if (server.lent || server.backend == nullptr) {
      lost = lost || (server.lent && server.backend == nullptr);
      if (server.backend != nullptr) end_borrowed_leg(server, failed, in_transaction);
      continue;
    }
    if (failed) {
      legs_.detach(*server.backend);
      server.backend->pool().release(server.backend, false);  // closed: its transaction rolls back
      continue;
    }
    Leg leg;
    leg.shard = server.shard;
    leg.backend = server.backend;
    note_run_statement(leg, server, in_transaction);
    if (txn_.leg.attached()) {
      txn_.parked.push_back(std::move(leg));
    } else {
      txn_.leg = std::move(leg);
    }
  }
  if (in_transaction && failed) fail_legs_not_lent();  // the borrowed ones are settled already
  if (in_transaction) {
    if (failed && deferred) txn_.control.abort_if_deferred();
    txn_.control.on_server_status(failed ? 'E' : 'T');
  }
  post_run_end(failed, lost);
  return verdict;
}

// A borrowed leg after the run: in the transaction now (on success), or parked until it answered
// what the run sent it, then its transaction failed (inside the client's) or rolled back.
void Session::end_borrowed_leg(const LegEngine::Handed& server, bool failed, bool in_transaction) {
  Leg* leg = txn_.leg.backend == server.backend ? &txn_.leg : parked_leg(*server.backend);
  if (leg == nullptr) return;
  if (!failed) {
    note_run_statement(*leg, server, in_transaction);
    return;
  }
  if (leg == &txn_.leg) {
    txn_.parked.push_back(std::exchange(txn_.leg, Leg{}));
    leg = &txn_.parked.back();
  }
  std::string out;
  std::vector<Owed> owed(static_cast<size_t>(server.ready_owed), Owed::Query);
  wire::encode_query(out, in_transaction ? kFailTransaction : "ROLLBACK");
  owed.push_back(Owed::Query);
  leg->server_status = in_transaction ? 'E' : 'I';
  send_unseen(*leg, out, owed);
}

void Session::note_run_statement(Leg& leg, const LegEngine::Handed& server, bool in_transaction) {
  if (!in_transaction) return;
  leg.server_status = 'T';
  const std::string name = host_.directory()->shard_name(static_cast<uint16_t>(server.shard));
  if (Status noted = txn_.shards.on_statement(server.shard, server.wrote, name); !noted.is_ok())
    LOG_WARN("client=c%llu %s", (unsigned long long)id(), noted.message.c_str());  // checked before
}

// After a failed run the settling legs are read (answers may be there already); a lost server of
// the transaction ends the session.
void Session::post_run_end(bool failed, bool lost) {
  if (failed) {
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (alive.lock()) read_settling_legs();
    });
  }
  if (lost) {
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (alive.lock())
        terminate(
            Status::server("08006", "lost a server of the transaction; it was rolled back on every shard"));
    });
  }
}

}  // namespace sw::session
