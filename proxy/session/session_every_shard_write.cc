// Session: a COPY FROM STDIN (CopyIn) or a write of a reference table (ReferenceWrite) run with
// the session's servers (docs/architecture.md §5.10, §6.4). Inside the client's transaction the
// runner joins its legs: a shard the transaction holds lends its server (idle in the
// transaction), another shard's new server replays what a joining leg replays; at the end every
// server stays in the transaction as a leg, the shards written are recorded (TransactionShards),
// and the client's COMMIT commits them by its CommitPlan (two-phase when several shards wrote).
// On failure the lent legs are failed as PostgreSQL fails a transaction (later statements get
// 25P02 until ROLLBACK) and new servers are closed. In session pooling outside a transaction the
// session's servers are lent to a runner that begins and commits on its own, as with new ones.
// A cursor round, a merged read and a COPY TO run on the transaction's legs instead, with no
// lending (session_run_legs.cc, which holds the ends both share).
#include <algorithm>
#include <utility>

#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

// The one way a runner gets the session's servers (docs/architecture.md §5.10 step 6): a target
// per shard of `shards` (every shard of the directory when null), in that order, with its pool;
// each shard the session holds a leg on lends that leg's server (lend_session_servers).
Status Session::targets_with_session_servers(const std::vector<int>* shards, bool in_transaction,
                                             std::vector<LegEngine::Target>* targets,
                                             std::vector<pool::Pool*>* pools) {
  const router::Directory& directory = *host_.directory();
  const std::vector<int> every = shards == nullptr ? every_shard() : std::vector<int>();
  for (int shard : shards == nullptr ? every : *shards) {
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

// The runner's end: its servers become the session's legs again (new ones too, inside a
// transaction); on failure the lent ones are settled and their transaction failed (or, outside
// one, rolled back) and new ones closed. Returns why a successful run is refused after all.
Status Session::take_back_servers(std::vector<LegEngine::Handed> handed, const Status& error,
                                  bool in_transaction) {
  std::vector<Leg> lent = std::exchange(txn_.lent, {});
  const int active = std::exchange(txn_.lent_active, -1);
  const RunEnd end = begin_run_end(handed, error, in_transaction);
  if (in_transaction && end.failed) fail_legs_not_lent();
  bool lost = false;
  for (LegEngine::Handed& server : handed) {
    const int shard = server.shard;
    auto found = std::find_if(lent.begin(), lent.end(), [shard](const Leg& l) { return l.shard == shard; });
    if (found == lent.end() && server.backend == nullptr) continue;
    if (found == lent.end() && end.failed) {
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
    if (end.failed) {
      if (found != lent.end()) {
        txn_.parked.push_back(std::move(leg));
        settle_run_leg(txn_.parked.back(), server, in_transaction);
      }
      continue;
    }
    note_run_statement(leg, server, in_transaction);
    if (shard == active || (active < 0 && !txn_.leg.attached())) {
      txn_.leg = std::move(leg);
    } else {
      txn_.parked.push_back(std::move(leg));
    }
  }
  return finish_run_end(end, in_transaction, lost);
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

}  // namespace sw::session
