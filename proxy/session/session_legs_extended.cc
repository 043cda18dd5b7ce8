// Session: an extended-protocol batch in a transaction on several shards. The shard is decided at
// the batch's first message, from its Bind (scan_extended_batch), like a Query's: once the active
// leg owes nothing, that shard's leg runs the whole batch up to its Sync. A Bind for another shard
// in the middle of a batch is refused (check_pinned).
#include <utility>

#include "common/log.h"
#include "session/session.h"
#include "wire/bind_values.h"
#include "wire/messages.h"

namespace sw::session {

using parser::StatementKind;

// The first message of an extended batch while a server is attached.
Session::Next Session::route_batch_across_legs() {
  LegAnswers& leg = txn_.leg;
  if (server_lent() || leg.outside_transaction || txn_.control.moving() || !host_.directory())
    return Next::Forward;
  if (txn_.ending != Ending::None) return finish_batch_ending();
  ExtendedBatch batch = scan_extended_batch(client_input(), limits_, profile_.unnamed, profile_.statements);
  if (batch.kind == ExtendedBatch::Kind::NeedMore) return Next::Stop;  // read on when more arrives
  if (batch.kind == ExtendedBatch::Kind::NoBind) return refuse_scatter_portal_execute();
  if (batch.kind != ExtendedBatch::Kind::Bound) return Next::Forward;
  if (batch.bind.portal == txn_.scatter_portal) txn_.scatter_portal_open = false;  // bound anew
  const parser::StatementFacts& only = batch.only();
  if (Next next = finish_prepared_batch_beside_leg(batch); next != Next::Forward) return next;
  if (!txn_.parked.empty()) {
    if (only.kind == StatementKind::Commit || only.kind == StatementKind::Rollback)
      return end_across_legs(only.kind == StatementKind::Commit, 0, &batch);
    send_to_every_leg(only);
  }
  if (!wire::decode_bind_values(batch.bind.rest, batch.types(), &request_.bind_values).is_ok())
    return Next::Forward;  // forward_bind reports it
  router::Route route = router::route(only, &request_.bind_values, *host_.directory(), host_.routing_rules());
  if (route.reference_write || route.scatter_write() || route.kind == router::RouteKind::Split)
    return write_batch_on_every_shard(batch, route);
  if (scatter_read(route)) {
    if (Next next = read_batch_on_every_shard(batch, route); next != Next::Forward) return next;
  }
  int target = statement_shard(*batch.facts, route);
  if (target < 0) target = shard_holding_deallocated(only);
  if (target < 0 || target == shard_of(leg)) return Next::Forward;
  txn_.shards.set_cross_shard_writes(cross_shard_writes());
  if (only.writes && txn_.shards.open() && !txn_.shards.may_write(target))
    return Next::Forward;  // refused there
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (leg.server_status == 'I' && !pools_.session_pooling) return Next::Forward;
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;
  Next next = switch_to_leg(target);
  // The unnamed statement the Bind may name was parsed on the other leg.
  if (next != Next::Continue) profile_.unnamed_elsewhere = true;
  return next;
}

// The first Bind of a batch whose Parse/Describe (ended by a Flush) ran on the active leg needs
// another shard: the active leg's batch is ended by a Sync of the proxy's (answer swallowed; no
// statement ran in it), and once that leg owes nothing the Bind starts a batch of its own, routed
// like any (route_batch_across_legs), its statement parsed again on the leg that runs it.
Session::Next Session::close_batch_for_another_leg() {
  LegAnswers& leg = txn_.leg;
  if (server_lent() || leg.outside_transaction || txn_.control.moving() || !host_.directory() ||
      (txn_.parked.empty() && !pools_.session_pooling && leg.server_status == 'I'))
    return Next::Forward;
  ExtendedBatch batch = scan_extended_batch(client_input(), limits_, profile_.unnamed, profile_.statements);
  if (batch.kind == ExtendedBatch::Kind::NeedMore) return Next::Stop;
  if (batch.kind != ExtendedBatch::Kind::Bound) return Next::Forward;
  if (!wire::decode_bind_values(batch.bind.rest, batch.types(), &request_.bind_values).is_ok())
    return Next::Forward;
  router::Route route =
      router::route(batch.only(), &request_.bind_values, *host_.directory(), host_.routing_rules());
  int target = statement_shard(*batch.facts, route);
  // A reference write (write_batch_on_every_shard) and a scatter read on the session's servers
  // (read_batch_on_every_shard) run on every shard as a batch of their own.
  const bool every_shard = route.reference_write || (scatter_read(route) && reads_on_session_servers() &&
                                                     held_read_refusal(route).is_ok());
  if (!every_shard && (target < 0 || target == shard_of(leg))) return Next::Forward;
  std::string sync;
  wire::encode_sync(sync);
  expect(Owed::Sync, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(sync);
  request_.batch_open = false;
  return wait_for_active_leg();
}

// The parked legs answered an extended COMMIT/ROLLBACK's end: the batch goes to the active leg.
// When a parked leg's COMMIT failed, the active leg's transaction is failed first, so the
// client's COMMIT is answered ROLLBACK there, as PostgreSQL answers a failed transaction's.
Session::Next Session::finish_batch_ending() {
  txn_.ending = Ending::None;
  std::string failure = std::exchange(txn_.end_failure, {});
  release_idle_parked();
  if (failure.empty()) return Next::Forward;
  LOG_INFO("client=c%llu COMMIT failed on a read-only leg; shard %d answers ROLLBACK",
           (unsigned long long)id(), shard_of(txn_.leg));
  std::string abort;
  wire::encode_query(abort,
                     "DO $sw_abort$ BEGIN RAISE EXCEPTION 'commit failed on another shard'; END $sw_abort$");
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(abort);
  return Next::Forward;
}

// Session pooling: a named statement is kept under the client's name on each server that parsed
// it, and remembered (for routing its Binds, and to parse it on another leg's server).
void Session::note_session_parse(std::string_view name, std::string_view query,
                                 const std::vector<uint32_t>& types) {
  if (name.empty()) return;
  profile_.statements.add(name, host_.statements().intern(query, types));
  txn_.leg.client_statements.emplace(name);
}

// Before a Bind or Describe of a named statement on a server that has not parsed it (session
// pooling, another shard's leg): its Parse, answer swallowed, errors to the client in its place.
void Session::ensure_session_statement(std::string_view name) {
  LegAnswers& leg = txn_.leg;
  if (name.empty() || leg.client_statements.count(name) != 0) return;
  const PreparedStatement* statement = profile_.statements.find(name);
  if (statement == nullptr) return;  // the server reports the unknown statement
  std::string parse;
  wire::encode_parse(parse, name, statement->query, statement->param_types);
  active_server().connection().write(parse);
  expect(Owed::Parse, /*relay=*/false, 0, /*relay_errors=*/true);
  leg.client_statements.emplace(name);
}

}  // namespace sw::session
