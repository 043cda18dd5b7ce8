// Session: a read whose rows the proxy merges (MergeFanout), and a read that needs every shard (a
// keyless scatter read, merged or not) inside the client's transaction block, or in session
// pooling while the session holds servers (docs/architecture.md §5.6). The latter runs as a
// MergeFanout (a COPY ... TO STDOUT as a Fanout) on the transaction's legs, a run on legs_: a shard
// the session holds a leg on reads on that leg's server (nothing sent before the read: RESET ALL
// would undo SET LOCAL, a BEGIN would end nothing but warn), another shard gets a new leg, which
// joins the transaction with what a joining leg replays and stays one of its legs (outside a
// transaction it goes back to its pool). So the read sees the transaction's own writes and its
// snapshot on each shard. A read marks no shard written: a read-only transaction on several shards
// commits with plain COMMITs. A failed read fails the transaction on every leg as PostgreSQL fails
// it (end_run_on_legs).
#include "common/log.h"
#include "merge/value.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

// A scatter read whose rows the proxy merges (route.merge): the shards run the plan's SQL.
Session::Start Session::start_merge(std::vector<Fanout::Target> targets, size_t consumed,
                                    const router::Route& route, MergeFanout::Extended* extended) {
  targets = MergeFanout::plan_targets(std::move(targets), *route.merge);
  LOG_DEBUG("client=c%llu merged read (%s) on %zu shards", (unsigned long long)id(), route.merge->kind_name(),
            targets.size());
  std::vector<pool::Pool*> pools;
  pools.reserve(targets.size());
  for (const auto& target : targets) pools.push_back(target.pool);
  const bool held = reads_on_session_servers();
  const bool in_transaction = held && writes_in_transaction();
  txn_.runner.emplace<MergeFanout>(
      targets, *route.merge, server_state(), host_.config().fanout,
      [this](std::string_view bytes) { client_->write(bytes); },
      [this] { return client_->over_high_water(); },
      [this, in_transaction, pools = std::move(pools), kind = static_cast<size_t>(route.merge->kind),
       started = stats::monotonic_us()](const MergeFanout::Counters& counters) {
        if (txn_.runner.get<MergeFanout>()->answers_sync()) write_session_ready(in_transaction);
        count_fanout(pools, stats::RouteLabel::Scatter, started);
        stats::WorkerTraffic& traffic = host_.traffic();
        ++traffic.merged_reads[kind];
        traffic.merged_rows_in += counters.rows_in;
        traffic.merged_rows_out += counters.rows_out;
        host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
          if (!alive.lock()) return;
          txn_.runner.reset<MergeFanout>();
          if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
          if (phase_ == Phase::Ready) read_client_messages();
        });
      });
  txn_.runner.get<MergeFanout>()->set_dates(date_reading());
  if (extended != nullptr) txn_.runner.get<MergeFanout>()->use_extended(std::move(*extended));
  if (held) {
    if (Status error = hold_merge_servers(*txn_.runner.get<MergeFanout>(), route); !error) {
      txn_.runner.reset<MergeFanout>();
      refuse_request(error);
      return Start::Answered;
    }
  }
  if (in_transaction && extended != nullptr && extended->max_rows > 0) keep_scatter_portal();
  if (host_.routing_rules().owned_rows_only())
    txn_.runner.get<MergeFanout>()->watch_start(host_.starting_reads(), host_.directory()->version());
  set_request_state(RequestState::Running);
  consume_client(consumed);
  txn_.runner.get<MergeFanout>()->start();
  return Start::Wait;
}

// How the client's DateStyle and TimeZone print dates, for the merge (the order DMY also reads
// HAVING's date constants). The TimeZone's zone file is read here, when a merge starts under a
// DateStyle other than ISO (ISO prints numeric offsets): once per zone name per process
// (merge::system_zone caches it), not on every SET TimeZone of sessions that never merge such
// reads, and never row by row while merging.
merge::DateReading Session::date_reading() const {
  merge::DateReading dates;
  const auto style = profile_.parameters.find("DateStyle");
  if (style == profile_.parameters.end()) return dates;
  dates.day_first = merge::day_first(style->second);
  if (style->second.rfind("ISO", 0) == 0) return dates;
  if (const auto zone = profile_.parameters.find("TimeZone"); zone != profile_.parameters.end())
    dates.zone = merge::system_zone(zone->second);
  return dates;
}

// A keyless read of sharded tables (no COPY FROM, no write).
bool Session::scatter_read(const router::Route& route) {
  return route.kind == router::RouteKind::Scatter && !route.writes && !route.copy_in &&
         !route.reference_write && !route.scatter_write();
}

// Inside the client's transaction block, or in session pooling while the session holds servers.
bool Session::reads_on_session_servers() const {
  return writes_in_transaction() || (pools_.session_pooling && (txn_.leg.attached() || !txn_.parked.empty()));
}

// Why a scatter read cannot run on the session's servers; ok when it can.
Status Session::held_read_refusal(const router::Route& route) const {
  const std::string what = "read of sharded table " + route.table + " without a key";
  if (writes_in_transaction()) {
    switch (cross_shard_writes()) {
      case CrossShardWrites::TwoPhase: break;
      case CrossShardWrites::Refuse:
        return Status::client("0A000",
                              what +
                                  " inside a transaction block joins every shard to the transaction, "
                                  "which sharding.cross_shard_transactions: refuse does not allow; run it "
                                  "outside BEGIN ... COMMIT, or set it to two_phase");
      case CrossShardWrites::RefuseNoCatalog:
        return Status::client("0A000",
                              what +
                                  " inside a transaction block joins every shard to the transaction, "
                                  "which needs two-phase commit and so catalog.dsn; run it outside "
                                  "BEGIN ... COMMIT");
    }
  }
  // A COPY ... TO STDOUT runs as a Fanout (hold_copy_servers), which needs no plan.
  if (route.merge == nullptr && !route.copy_out)
    return Status::client("0A000",
                          what +
                              " runs inside a transaction block (or with pool.mode session) only with "
                              "a catalog (owned-rows reads); run it outside BEGIN ... COMMIT");
  if (route.migrating)
    return Status::client("0A000",
                          what +
                              " waits for a bucket move's cutover, which a transaction holding servers "
                              "cannot; run it outside BEGIN ... COMMIT or retry");
  return Status::ok();
}

// A scatter read sent alone in a Query while a server is attached (route_across_legs). A read
// the session's servers cannot run goes on as before: check_pinned refuses it in a transaction.
Session::Next Session::read_on_every_shard(const wire::Frame& query, const router::Route& route) {
  if (!reads_on_session_servers() || !held_read_refusal(route).is_ok()) return Next::Forward;
  LegAnswers& leg = txn_.leg;
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;  // the server answers 25P02
  if (clock_.request_started_us == 0) note_request_start();
  const Start start = start_fanout(std::string(whole(query)), query.size, route, false);
  return start == Start::Wait ? Next::Stop : Next::Continue;
}

// The same for an extended batch's first Bind (route_batch_across_legs).
Session::Next Session::read_batch_on_every_shard(const ExtendedBatch& batch, const router::Route& route) {
  if (!reads_on_session_servers() || !held_read_refusal(route).is_ok()) return Next::Forward;
  LegAnswers& leg = txn_.leg;
  if (!leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (txn_.combined_status(leg.server_status) == 'E') return Next::Forward;
  if (clock_.request_started_us == 0) note_request_start();
  remember_parsed(batch.parsed);  // the legs run it as the unnamed statement: its name reached none
  const Start start = start_extended_scatter(batch, route);
  return start == Start::Wait ? Next::Stop : Next::Continue;
}

// Inside the transaction a merge at its Execute's row limit waits for the portal's next Execute
// (MergeFanout::keep_portal); the client's batch is answered meanwhile.
void Session::keep_scatter_portal() {
  txn_.runner.get<MergeFanout>()->keep_portal([this](bool answers_sync) {
    if (answers_sync) write_session_ready(true);
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (!alive.lock()) return;
      if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
      if (phase_ == Phase::Ready) read_client_messages();
    });
  });
}

// The client's next message while such a merge waits: an Execute of its portal continues it, a
// Sync is answered here (the transaction's status), a Flush needs nothing; anything else ends
// the portal first (its remaining rows read and dropped, every server a leg again), then goes
// its usual way.
Session::Next Session::continue_scatter_portal(const wire::Frame& frame) {
  std::string out;
  switch (frame.type) {
    case 'S':
      wire::encode_ready_for_query(out, txn_.control.status());
      client_->write(out);
      consume_client(frame.size);
      return Next::Continue;
    case 'H': consume_client(frame.size); return Next::Continue;
    default: break;
  }
  set_request_state(RequestState::Running);
  auto execute = wire::decode_execute(frame.body);  // meant only when the type is 'E'
  if (frame.type == 'E' && execute && execute->portal == txn_.scatter_portal) {
    consume_client(frame.size);
    txn_.runner.get<MergeFanout>()->resume(execute->max_rows);
    return Next::Stop;
  }
  txn_.runner.get<MergeFanout>()->close_portal();
  return Next::Stop;
}

// A batch that starts with an Execute of the portal a read on every shard left at its row limit
// inside the transaction, once that read ended otherwise (the client sent something else first):
// no shard holds that portal (each ran the read as the unnamed one), so it is refused, failing
// the transaction as an error there would, rather than answered by a server that does not know
// the portal.
Session::Next Session::refuse_scatter_portal_execute() {
  if (!txn_.scatter_portal_open) return Next::Forward;
  if (!writes_in_transaction()) {
    txn_.scatter_portal_open = false;  // the transaction that held it ended
    return Next::Forward;
  }
  auto frame = wire::read_frame(client_input(), wire::Sender::Client, limits_);
  if (frame.status != wire::FrameStatus::Complete || frame.frame.type != 'E') return Next::Forward;
  const std::string_view body = frame.frame.body;  // the portal's name, then the row limit
  const size_t name_end = body.find('\0');
  if (name_end == std::string_view::npos || body.substr(0, name_end) != txn_.scatter_portal)
    return Next::Forward;
  if (!txn_.leg.tracker.idle()) {
    return wait_for_active_leg();
  }
  if (clock_.request_started_us == 0) note_request_start();
  request_.batch_open = true;  // the client's Sync ends the batch the refusal opens
  inject_abort(Status::client("0A000",
                              "shardwire continues a portal of a read of every shard only with "
                              "Executes of it and nothing else in between (no other statement, "
                              "Describe or Close); read such a query whole, or add a shard key value"),
               true);
  consume_client(frame.frame.size);
  return Next::Continue;
}

// Runs the merge on the transaction's legs (`targets` are the plan's, by leg), as a run on legs_:
// the legs it kept end in place (end_run_on_legs).
Status Session::hold_merge_servers(MergeFanout& merge, const router::Route& route) {
  std::vector<int> shards;
  if (route.merge->shard_statements.empty()) {
    shards = every_shard();
  } else {
    for (const merge::ShardStatement& statement : route.merge->shard_statements) {
      if (statement.shard >= 0 && static_cast<size_t>(statement.shard) < host_.directory()->shards().size())
        shards.push_back(statement.shard);  // as MergeFanout::plan_targets picks them
    }
  }
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  if (Status error = transaction_targets(shards, in_transaction, &targets); !error) return error;
  merge.keep_servers(std::move(targets), in_transaction, hand_back_to_legs(in_transaction), legs_);
  return Status::ok();
}

// Runs a COPY ... TO STDOUT's Fanout on the transaction's legs (every shard, the fanout's targets
// in shard order), as hold_merge_servers does.
Status Session::hold_copy_servers(Fanout& fanout) {
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  if (Status error = transaction_targets(every_shard(), in_transaction, &targets); !error) return error;
  fanout.keep_servers(std::move(targets), in_transaction, hand_back_to_legs(in_transaction), legs_);
  return Status::ok();
}

}  // namespace sw::session
