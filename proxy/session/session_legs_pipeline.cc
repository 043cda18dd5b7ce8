// Session: an extended batch outside a transaction block whose Binds reach several shards before
// its Sync, the answers owed at each Flush (psycopg's pipeline executemany). The batch becomes a
// transaction over the legs, as PostgreSQL makes a BEGIN inside its implicit transaction keep the
// work done before it: the leg that ran the first units gets a BEGIN (answers swallowed), each
// other shard joins with BEGIN, and the client's Sync commits them all (two-phase commit when two
// or more wrote) and is answered with one ReadyForQuery 'I'. An error on any leg skips the rest of
// the batch up to the Sync and rolls every leg back. A batch that stays on one shard never gets
// here. docs/architecture.md §5.3.
#include <utility>

#include "common/log.h"
#include "session/session.h"
#include "wire/bind_rest.h"
#include "wire/bind_values.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// The proxy's statement for the BEGIN it injects; closed right after, so no server keeps it.
constexpr std::string_view kBeginStatement = "shardwire_spread_begin";

// BEGIN as Parse/Bind/Execute/Close of the proxy's statement, then a Flush so the server answers.
std::string begin_messages() {
  std::string out;
  wire::encode_parse(out, kBeginStatement, "BEGIN", {});
  std::string no_values;  // no format codes, no parameters, no result formats
  wire::encode_bind_rest(no_values, wire::BindRest{});
  wire::encode_bind(out, "", kBeginStatement, no_values);
  wire::encode_execute(out, "", 0);  // the unnamed portal, every row
  wire::encode_target(out, 'C', 'S', kBeginStatement);
  wire::encode_flush(out);
  return out;
}

std::string flush_message() {
  std::string out;
  wire::encode_flush(out);
  return out;
}

}  // namespace

// Outside a transaction block, in transaction pooling, with two-phase commit available; or the
// batch already spread.
bool Session::may_spread_batch() const {
  if (server_lent() || pools_.session_pooling || txn_.control.moving() || !host_.directory()) return false;
  if (txn_.spread == SpreadBatch::Open) return true;
  const LegAnswers& leg = txn_.leg;
  return txn_.spread == SpreadBatch::None && !leg.outside_transaction && leg.server_status == 'I' &&
         txn_.parked.empty() && !txn_.shards.open() && txn_.control.status() == 'I' &&
         cross_shard_writes() == CrossShardWrites::TwoPhase;
}

// A Bind after a statement ran in the unsynced batch. When it needs another shard, the batch
// spreads: once the active leg answered everything so far (a Flush of the proxy's makes it
// answer), and nothing failed, that shard's leg becomes the active one.
Session::Next Session::spread_batch_to_another_leg() {
  if (!may_spread_batch()) return Next::Forward;
  LegAnswers& leg = txn_.leg;
  ExtendedBatch batch = scan_extended_batch(client_input(), limits_, profile_.unnamed, profile_.statements);
  if (batch.kind == ExtendedBatch::Kind::NeedMore) return Next::Stop;
  if (batch.kind != ExtendedBatch::Kind::Bound) return Next::Forward;
  if (!wire::decode_bind_values(batch.bind.rest, batch.types(), &request_.bind_values).is_ok())
    return Next::Forward;  // forward_bind reports it
  router::Route route =
      router::route(batch.only(), &request_.bind_values, *host_.directory(), host_.routing_rules());
  if (route.reference_write || route.scatter_write()) return Next::Forward;  // refused there
  int target = statement_shard(*batch.facts, route);
  if (target < 0 || target == shard_of(leg)) return Next::Forward;
  if (!leg.tracker.idle()) {
    active_server().connection().write(flush_message());
    return wait_for_active_leg();
  }
  if (request_.batch_failed) {
    request_.skip_until_sync = true;  // the server skips the rest of the batch; so do the others
    return Next::Continue;
  }
  if (txn_.spread == SpreadBatch::None) begin_spread_batch();
  Next next = switch_to_leg(target);
  if (next != Next::Continue) profile_.unnamed_elsewhere = true;  // parsed on the other leg
  return next;
}

// The batch's open implicit transaction on the active leg becomes a transaction block keeping what
// ran (BEGIN in PostgreSQL's TBLOCK_STARTED); that leg counts as written.
void Session::begin_spread_batch() {
  LegAnswers& leg = txn_.leg;
  LOG_DEBUG("client=c%llu an unsynced batch on shard %d needs another shard: it runs as a transaction",
            (unsigned long long)id(), shard_of(leg));
  for (Owed owed : {Owed::Parse, Owed::Bind, Owed::Execute, Owed::Close})
    expect(owed, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(begin_messages());
  leg.server_status = 'T';
  txn_.spread = SpreadBatch::Open;
  txn_.spread_failed = false;
  txn_.shards.set_cross_shard_writes(cross_shard_writes());
  txn_.shards.begin("BEGIN");
  (void)txn_.shards.on_statement(shard_of(leg), /*writes=*/true,
                                 host_.directory()->shard_name(static_cast<uint16_t>(shard_of(leg))));
}

// The client's Sync of a spread batch: every leg gets a Sync (answers swallowed), and once all
// answered, the legs are committed or, when the batch failed, rolled back.
Session::Next Session::end_spread_batch(const wire::Frame& sync) {
  if (txn_.spread == SpreadBatch::Open) {
    txn_.spread = SpreadBatch::Syncing;
    txn_.spread_failed = request_.skip_until_sync || request_.batch_failed;
    std::string out;
    wire::encode_sync(out);
    expect(Owed::Sync, /*relay=*/false, 0, /*relay_errors=*/false);
    active_server().connection().write(out);
    for (LegAnswers& other : txn_.parked) send_unseen(other, out, {Owed::Sync});
  }
  if (!txn_.leg.tracker.idle() || txn_.parked_busy()) {
    return wait_for_active_leg();
  }
  consume_client(sync.size);
  txn_.spread = SpreadBatch::None;
  request_.batch_open = false;
  request_.batch_bound = false;
  request_.skip_until_sync = false;
  request_.batch_failed = false;
  commit_spread_batch();
  return Next::Continue;
}

// Every leg answered its Sync. Two or more written legs commit by two-phase commit (§5.9); else
// the written leg is made the active one and every leg gets COMMIT (ROLLBACK after a failure),
// the active leg's error reaching the client; then one ReadyForQuery 'I'.
void Session::commit_spread_batch() {
  const bool failed =
      std::exchange(txn_.spread_failed, false) || txn_.combined_status(txn_.leg.server_status) == 'E';
  if (!failed) {
    std::vector<int> legs{shard_of(txn_.leg)};
    for (const LegAnswers& other : txn_.parked) legs.push_back(shard_of(other));
    CommitPlan plan = txn_.shards.commit_plan(legs);
    if (plan.kind == CommitPlan::Kind::TwoPhase) {
      start_two_phase(plan, 0, {}, /*extended=*/false);
      txn_.two_phase->ends_batch = true;
      return;
    }
    if (plan.last != shard_of(txn_.leg)) switch_to_leg(plan.last);  // parked: no server is acquired
  }
  txn_.active_committed = !failed;
  const char* end = failed ? "ROLLBACK" : "COMMIT";
  send_to_parked(end);
  std::string out;
  wire::encode_query(out, end);
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/!failed);
  active_server().connection().write(out);
  std::string ready;
  wire::encode_ready_for_query(ready, 'I');
  answer_in_place(ready);
}

}  // namespace sw::session
