// Session: a write of a reference table on every shard (ReferenceWrite, docs/architecture.md
// §6.4), run on the transaction's legs (a run on legs_, session_run_legs.cc): outside a transaction
// block committed by the runners' two-phase commit; inside one left in the transaction's legs.
// Scatter writes (§6.3, session_scatter_write.cc) run through the same runner. The session reads
// no client input until it is answered. Also the hook that starts a COPY FROM, a reference, scatter
// or split write while the session holds a server (write_on_every_shard, from route_across_legs).
#include "common/log.h"
#include "net/loop.h"
#include "session/key_move_request.h"
#include "session/session.h"
#include "session/split_bind.h"
#include "wire/messages.h"

namespace sw::session {

namespace {

// Why the write cannot run as one transaction per shard committed together; empty when it can.
std::string reference_write_refusal(const parser::StatementFacts* only, const router::Route& route,
                                    CrossShardWrites writes, size_t shards) {
  const std::string what = "write of reference table " + route.table;
  if (only == nullptr) return what + " must be sent alone, not with other statements in one Query";
  if (shards < 2) return {};
  switch (writes) {
    case CrossShardWrites::TwoPhase: return {};
    case CrossShardWrites::Refuse:
      return what +
             " must commit on every shard at once, which needs two-phase commit, and "
             "sharding.cross_shard_transactions is refuse; write it on every shard directly, "
             "then check it with VERIFY REFERENCE " +
             route.table;
    case CrossShardWrites::RefuseNoCatalog:
      return what +
             " must commit on every shard at once, which needs two-phase commit, and that needs "
             "catalog.dsn to record decisions; write it on every shard directly, then check it "
             "with VERIFY REFERENCE " +
             route.table;
  }
  return {};
}

}  // namespace

// Why a COPY FROM STDIN, reference write or split INSERT sent alone cannot run; ok when it can.
Status Session::every_shard_write_refusal(const parser::StatementFacts& only, const router::Route& route) {
  if (route.kind == router::RouteKind::Split) return split_insert_refusal_now(&only, route);
  if (route.copy_in) {
    if (route.migrating)
      return Status::client("0A000", "COPY FROM STDIN into sharded table " + route.table +
                                         " waits for a bucket move's cutover, which a transaction holding "
                                         "servers cannot; run it outside BEGIN ... COMMIT or retry");
    auto plan = plan_copy_in(only, *route.copy_rule);
    return plan ? Status::ok() : plan.status();
  }
  if (route.scatter_write()) return scatter_write_refusal(route);
  const std::string refusal =
      reference_write_refusal(&only, route, cross_shard_writes(), host_.directory()->shards().size());
  if (!refusal.empty()) return Status::client("0A000", refusal);
  if (only.kind != parser::StatementKind::Copy) return Status::ok();
  auto plan = plan_reference_copy_in(only, route.table);
  return plan ? Status::ok() : plan.status();
}

// The extended batch [Parse] Bind [Describe portal] Execute Sync of a reference write (or a
// scatter write), rebuilt for every shard with `sql` parsed as the unnamed statement (no shard
// needs the client's statement prepared) and, for one shard of a split write, the Bind values
// `replaced` swapped; with the size of the client's batch. Execute's row limit stays the client's (pgjdbc
// sends 1 for a statement whose rows it discards): the write runs whole either way. An INSERT ... SELECT with
// RETURNING takes none: each shard would stop at the limit. An UPDATE that moves rows between shards
// runs its own batch instead (key_move_request.h), and with RETURNING takes one or more Executes,
// each with its row limit.
Result<std::pair<std::string, size_t>> Session::extended_reference_write(const ExtendedBatch& bound,
                                                                         const router::Route& route,
                                                                         std::string_view sql,
                                                                         const ShardParams* replaced) {
  std::string_view input = client_input();
  size_t offset = bound.bind_end;
  std::string batch;
  wire::encode_parse(batch, "", sql, bound.types());
  if (replaced == nullptr || replaced->empty()) {
    wire::encode_bind_renamed(batch, bound.bind, "");
  } else {
    wire::encode_bind(batch, "", "", replaced_bind_rest(bound.bind.rest, *replaced));
  }
  // A move answers each Execute's row limit as PostgreSQL does (KeyMovePlan): its RETURNING may be
  // fetched by several Executes of the portal before the Sync.
  const bool move_returning = route.key_move && bound.only().returning;
  for (char expected : {'D', 'E', 'S'}) {
    auto frame = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    while (expected == 'S' && move_returning && frame.status == wire::FrameStatus::Complete &&
           frame.frame.type == 'E') {
      offset += frame.frame.size;
      frame = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    }
    if (frame.status == wire::FrameStatus::NeedMore) return Status::ok();  // empty: wait for more
    const std::string_view body = frame.frame.body;
    const bool limited = expected == 'E' && !wire::executes_every_row(body);
    const bool fits = frame.status == wire::FrameStatus::Complete && frame.frame.type == expected &&
                      (expected != 'D' || wire::describes_portal(body)) &&
                      !(limited && route.scatter_write() && bound.only().returning && !route.key_move);
    if (!fits && expected == 'D') continue;  // Describe is optional
    if (!fits && route.scatter_write()) {
      return Status::client("0A000", scatter_write_what(route) +
                                         " runs in the extended protocol only as one batch of "
                                         "[Parse] Bind [Describe portal] Execute (with RETURNING: no row "
                                         "limit) Sync");
    }
    if (!fits)
      return Status::client("0A000", "write of reference table " + route.table +
                                         " runs on every shard in the extended protocol only as one batch of "
                                         "[Parse] Bind [Describe portal] Execute Sync");
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
  }
  if (route.key_move) {
    batch = key_move_request(route.key_move->client_sql, sql, bound.types(),
                             text_results_bind_rest(bound.bind.rest));
  }
  return std::make_pair(std::move(batch), offset);
}

Session::Start Session::start_extended_reference_write(const ExtendedBatch& bound,
                                                       const router::Route& route) {
  auto batch = extended_reference_write(bound, route, bound.query());
  if (!batch) {
    refuse_request(batch.status());
    return Start::Answered;
  }
  if (batch.value().first.empty()) return Start::Wait;
  profile_.unnamed_elsewhere = true;  // the shards' unnamed statement is this batch's now
  return start_reference_write(std::move(batch.value().first), batch.value().second, &bound.only(), route,
                               !bound.client_parsed);
}

Session::Start Session::start_reference_write(std::string message, size_t consumed,
                                              const parser::StatementFacts* only, const router::Route& route,
                                              bool hide_parse_complete) {
  const router::Directory& directory = *host_.directory();
  const std::string refusal =
      reference_write_refusal(only, route, cross_shard_writes(), directory.shards().size());
  if (!refusal.empty()) {
    refuse_request(Status::client("0A000", refusal));
    return Start::Answered;
  }
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  std::vector<pool::Pool*> pools;
  if (Status error = write_targets(nullptr, in_transaction, &targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  LOG_DEBUG("client=c%llu write of reference table %s on %zu shards%s", (unsigned long long)id(),
            route.table.c_str(), targets.size(), in_transaction ? " in the client's transaction" : "");
  ReferenceWrite::Setup setup;
  setup.query = std::move(message);
  setup.hide_parse_complete = hide_parse_complete;
  setup.table = route.table;
  return start_write_runner(consumed, std::move(targets), std::move(pools), std::move(setup),
                            stats::RouteLabel::AllShards, in_transaction);
}

// Runs a ReferenceWrite for the client's request of `consumed` bytes (inside the client's
// transaction when `in_transaction`); the session reads no client input until it answered.
Session::Start Session::start_write_runner(size_t consumed, std::vector<LegEngine::Target> targets,
                                           std::vector<pool::Pool*> pools, ReferenceWrite::Setup setup,
                                           stats::RouteLabel label, bool in_transaction) {
  setup.session_state = server_state();
  setup.in_transaction = in_transaction;
  ReferenceWrite::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.hand_back = hand_back_to_legs(in_transaction);
  callbacks.on = &legs_;
  callbacks.done = [this, in_transaction, label, pools = std::move(pools), started = stats::monotonic_us()] {
    key_move_rest_ = txn_.runner.get<ReferenceWrite>()->take_key_move_rest();
    write_session_ready(in_transaction);
    count_fanout(pools, label, started);
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (!alive.lock()) return;
      txn_.runner.reset<ReferenceWrite>();
      if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
      if (phase_ == Phase::Ready) read_client_messages();
    });
  };
  callbacks.two_phase = two_phase_hooks();
  const bool reads_owned_rows = setup.reads_owned_rows;
  txn_.runner.emplace<ReferenceWrite>(std::move(targets), std::move(setup), std::move(callbacks));
  if (reads_owned_rows)
    txn_.runner.get<ReferenceWrite>()->watch_start(host_.starting_reads(), host_.directory()->version());
  set_request_state(RequestState::Running);
  consume_client(consumed);
  txn_.runner.get<ReferenceWrite>()->start();
  return Start::Wait;
}

// Inside the client's transaction the runner's answer ends with the session's ReadyForQuery.
void Session::write_session_ready(bool in_transaction) {
  if (!in_transaction) return;
  std::string out;
  wire::encode_ready_for_query(out, txn_.control.status());
  client_->write(out);
}

// A COPY FROM STDIN, a reference write, a multi-shard INSERT ... SELECT or a split INSERT sent
// alone while the session holds a server (inside a transaction, or in session pooling): a runner on
// the transaction's legs.
Session::Next Session::write_on_every_shard(const wire::Frame& query, const parser::StatementFacts& only,
                                            const router::Route& route) {
  LegAnswers& leg = txn_.leg;
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
  LegAnswers& leg = txn_.leg;
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
