// Session: routing an extended-protocol batch. The shard is decided at its first Bind, from the
// parameter values (scan_extended_batch finds it); a batch with no Bind before its Sync or Flush
// (Parse/Describe only) may run anywhere.
#include <utility>

#include "session/session.h"
#include "wire/bind_rest.h"
#include "wire/bind_values.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Routes the batch's first Bind when converted: optional::emplace builds it in place.
struct BoundRouteOf {
  const ExtendedBatch& batch;
  const wire::BindValues& values;
  const router::Directory& directory;
  const router::RoutingRules& rules;
  operator BoundRoute() const {  // NOLINT(google-explicit-constructor)
    return BoundRoute{batch.facts, batch.bind.rest, router::route(batch.only(), &values, directory, rules),
                      batch.parse_text};
  }
};

}  // namespace

// The proxy answered a batch itself (a transaction-control batch, the COMMIT of a two-phase
// commit, a fan-out or a reference write): its Parses reached none of the session's servers but
// still define statements for later Binds. In either pool mode the statement is remembered with
// no server holding it, so the leg that binds it parses it first (ensure_prepared in transaction
// pooling, ensure_session_statement in session pooling).
void Session::remember_parsed(const ParsedStatements& parsed) {
  for (const ParsedStatements::Entry& entry : parsed) {
    if (entry.name.empty()) {
      profile_.unnamed = entry.statement;
      profile_.unnamed_elsewhere = true;  // no server parsed it
    } else {
      profile_.statements.add(entry.name,
                              host_.statements().intern(entry.statement.query, entry.statement.types,
                                                        profile_.settings.current("search_path")));
    }
  }
}

Session::Start Session::start_extended(int* shard) {
  ExtendedBatch batch = scan_extended_batch(client_input(), limits_, profile_.unnamed, profile_.statements);
  if (Status refused = expand_batch_execute(batch); !refused.is_ok()) {
    refuse_request(refused);
    return Start::Answered;
  }
  switch (batch.kind) {
    case ExtendedBatch::Kind::NeedMore: return Start::Wait;
    case ExtendedBatch::Kind::Unroutable:
      *shard = default_shard();  // its server (or read_client_messages) reports what is wrong
      return Start::Forward;
    case ExtendedBatch::Kind::NoBind:
      // Parse/Describe without Bind: schemas are the same everywhere. Ended by a Sync inside a
      // transaction that has no shard yet, it runs outside it and the server goes back at its
      // ReadyForQuery. Ended by a Flush in transaction pooling, the server is lent for it only
      // (Request::lend_at_flush): the proxy adds a Sync, and the Bind that follows picks the
      // shard, where its statement is parsed again (ensure_prepared, ensure_unnamed_parsed) and
      // the deferred BEGIN starts. In session pooling the server stays attached for the Bind:
      // the deferred BEGIN starts there with the batch, as it would had the server been attached
      // at the BEGIN (run outside it, the statements after it ran outside the transaction too).
      *shard = default_shard();
      request_.lend_at_flush = batch.flushed && !pools_.session_pooling;
      txn_.leg.outside_transaction =
          txn_.control.deferred() && !pools_.session_pooling && (!batch.flushed || request_.lend_at_flush);
      return Start::Forward;
    case ExtendedBatch::Kind::Bound: break;
  }
  return start_bound_batch(batch, shard);
}

Session::Start Session::start_bound_batch(const ExtendedBatch& batch, int* shard) {
  const parser::StatementFacts& only = batch.only();
  if (batch.control_size != 0) {
    // A BEGIN/COMMIT/ROLLBACK batch (Parse? Bind Describe? Execute) answered by the proxy.
    auto answer = txn_.control.on_statement(only.kind, only.text, only.set_name);
    if (answer == TransactionControl::Answer::NoSuchSavepoint) {
      refuse_request(txn_.control.no_such_savepoint());
      return Start::Answered;
    }
    if (answer != TransactionControl::Answer::Forward) {
      answer_transaction_control(answer, batch.control_size, batch.control_answer);
      remember_parsed(batch.parsed);
      return Start::Answered;
    }
  }
  if (txn_.control.aborted()) {
    refuse_request(Status::client(
        "25P02", "current transaction is aborted, commands ignored until end of transaction block"));
    return Start::Answered;
  }
  if (finishes_prepared_on_shards(only)) return start_extended_finish_prepared(batch);
  if (Status decoded = wire::decode_bind_values(batch.bind.rest, batch.types(), &request_.bind_values);
      !decoded.is_ok()) {
    refuse_request(decoded);
    return Start::Answered;
  }
  // Routed in place into the slot forward_bind checks this Bind from (no move of the Route).
  const router::Route& routed =
      request_.bound
          .emplace(BoundRouteOf{batch, request_.bind_values, *host_.directory(), host_.routing_rules()})
          .route;
  if (routed.kind == router::RouteKind::Shard) {
    if (std::optional<Start> across = start_batch_across_shards(batch)) return *across;
  }
  Placement placement = place(routed, Protocol::Extended, txn_.control.deferred(),
                              needs_default_shard(routed) ? default_shard() : -1,
                              !needs_read_lease(routed) || read_lease_valid());
  if (placement.kind == Placement::Kind::Run) {
    if (!placement.routed) request_.forget_bound();  // checked again at its Bind
    return run_on(placement, shard);
  }
  router::Route route = std::move(request_.bound->route);  // not forwarded as routed
  request_.bound.reset();
  switch (placement.kind) {
    case Placement::Kind::Run: return run_on(placement, shard);
    case Placement::Kind::WaitForCutover: return wait_for_cutover(route);
    case Placement::Kind::FanOut:
      if (route.kind == router::RouteKind::Split) return start_extended_split(batch, route);
      remember_parsed(batch.parsed);
      if (route.reference_write) return start_extended_reference_write(batch, route);
      if (route.scatter_write()) return start_extended_scatter_write(batch, route);
      return start_extended_scatter(batch, route);
    case Placement::Kind::Refuse: refuse_request(placement.error); return Start::Answered;
  }
  return Start::Answered;
}

// A keyless read in the extended protocol, sent to every shard: the batch must be
// [Parse] Bind [Describe portal] Execute Sync (a row limit only where a plan merges the rows). Each shard
// gets it with the statement parsed as the unnamed one, so no shard needs the client's statement prepared
// beforehand. A read whose rows are merged (route.merge) runs the plan's SQL instead, with results in text.
Session::Start Session::start_extended_scatter(const ExtendedBatch& bound, const router::Route& route) {
  const bool held = reads_on_session_servers();  // every read runs as a merge (session_scatter_read.cc)
  if (Status refused = held ? held_read_refusal(route) : Status::ok(); !refused.is_ok()) {
    refuse_request(refused);
    return Start::Answered;
  }
  std::string_view input = client_input();
  size_t offset = bound.bind_end;
  auto next = [&]() { return wire::read_frame(input.substr(offset), wire::Sender::Client, limits_); };
  auto frame = next();
  if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  // A plain concatenation (a relaying plan) is the plain fan-out with the plan's SQL, which reads
  // only each shard's own rows.
  const bool relay = route.merge && route.merge->relays_rows();
  std::string batch;
  wire::encode_parse(batch, "", relay ? route.merge->shard_sql : bound.query(), bound.types());
  wire::encode_bind_renamed(batch, bound.bind, "");
  bool describe_portal = false;
  bool describe_other = false;  // Describe of a statement: a merged read answers only the portal's
  if (frame.status == wire::FrameStatus::Complete && frame.frame.type == 'D') {
    describe_portal = wire::describes_portal(frame.frame.body);
    describe_other = !describe_portal;
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
    frame = next();
    if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  }
  bool execute = false;
  uint32_t max_rows = 0;
  if (frame.status == wire::FrameStatus::Complete && frame.frame.type == 'E') {
    auto executed = wire::decode_execute(frame.frame.body);
    execute = executed.is_ok();
    max_rows = execute ? executed->max_rows : 0;
  }
  // A row limit (asyncpg's fetchrow: Execute(1), Sync) is kept by the merge, also for a plain
  // concatenation: that many rows, then PortalSuspended; the portal ends at the Sync, as it would
  // on PostgreSQL outside a transaction.
  const bool merged = route.merge && (!relay || max_rows > 0 || held);
  const bool execute_all = execute && (max_rows == 0 || merged);
  if (execute_all) {
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
    frame = next();
    if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  }
  if (!execute_all || frame.status != wire::FrameStatus::Complete || frame.frame.type != 'S' ||
      (describe_other && merged)) {
    refuse_request(Status::client("0A000", "a read of sharded table " + route.table +
                                               " without a key runs on every shard only as one batch of "
                                               "Bind, Describe, Execute and Sync"));
    return Start::Answered;
  }
  batch.append(whole(frame.frame));
  offset += frame.frame.size;
  if (held) profile_.unnamed_elsewhere = true;  // the legs' unnamed statement is the plan's now
  if (merged) return start_extended_merge(bound, route, offset, describe_portal, max_rows);
  return start_fanout(std::move(batch), offset, route, !bound.client_parsed);
}

// A merged read (a scatter plan) in the extended protocol: the shards run the plan's SQL with
// the client's parameters and return text; MergeFanout merges and converts the columns the client
// asks in binary.
Session::Start Session::start_extended_merge(const ExtendedBatch& bound, const router::Route& route,
                                             size_t consumed, bool describe_portal, uint32_t max_rows) {
  auto bind = wire::decode_bind_rest(bound.bind.rest);  // decode_bind checked it
  Status error;
  std::vector<Fanout::Target> targets;
  if (!fanout_targets(route, &targets, &error)) {
    refuse_request(error);
    return Start::Answered;
  }
  if (max_rows > 0 && writes_in_transaction()) {
    txn_.scatter_portal.assign(bound.bind.portal);
    txn_.scatter_portal_open = true;
  }
  MergeFanout::Extended extended;
  extended.types = bound.types();
  if (bind) {
    extended.parameters = std::string(bind->parameters);
    extended.result_formats.assign(bind->result_formats.begin(), bind->result_formats.end());
  }
  extended.parse_complete = bound.client_parsed;
  extended.describe = describe_portal;
  extended.max_rows = max_rows;
  return start_merge(std::move(targets), consumed, route, &extended);
}

}  // namespace sw::session
