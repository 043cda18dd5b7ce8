// Session: a write on several shards, each running its own SQL, committed together
// (docs/architecture.md §6.3): an INSERT ... SELECT between co-located sharded tables (every shard
// runs the route's SQL, inserting its own buckets' rows) or an UPDATE/DELETE whose key lists fall
// on several shards (each shard runs it with the lists cut to its keys). It runs on the
// ReferenceWrite runner (session_reference_write.cc) with the counts summed: outside a transaction
// block its shards commit together (two-phase commit); inside one they stay its legs.
#include "common/log.h"
#include "session/key_move_request.h"
#include "session/session.h"
#include "session/split_bind.h"
#include "wire/bind_rest.h"

namespace sw::session {

std::string scatter_write_what(const router::Route& route) {
  if (route.insert_select)
    return "INSERT ... SELECT into sharded table " + route.table + " on several shards";
  if (route.key_move) return "UPDATE of sharded table " + route.table + " that moves rows between shards";
  if (route.keyless_write) return "write of sharded table " + route.table + " without its key on every shard";
  return "write of sharded table " + route.table + " with keys on several shards";
}

// Why the scatter write cannot commit on its shards together (or wait for a cutover); ok when it can.
Status Session::scatter_write_refusal(const router::Route& route) const {
  const std::string what = scatter_write_what(route);
  const std::string fix = route.insert_select   ? "add the key to the SELECT"
                          : route.keyless_write ? "add the key to run it on one shard"
                                                : "split the statement by shard";
  if (route.migrating) {  // only on a server the session holds: else it waited
    return Status::client("0A000", what +
                                       " waits for a bucket move's cutover, which a transaction holding "
                                       "servers cannot; run it outside BEGIN ... COMMIT or retry");
  }
  if (route.shards.size() < 2) return Status::ok();
  switch (cross_shard_writes()) {
    case CrossShardWrites::TwoPhase: return Status::ok();
    case CrossShardWrites::Refuse:
      return Status::client("0A000", what +
                                         " must commit on every shard at once, which needs two-phase "
                                         "commit, and sharding.cross_shard_transactions is refuse; " +
                                         fix);
    case CrossShardWrites::RefuseNoCatalog:
      return Status::client("0A000", what +
                                         " must commit on every shard at once, which needs two-phase "
                                         "commit, and that needs catalog.dsn to record decisions; " +
                                         fix);
  }
  return Status::ok();
}

// What each of the route's shards runs, as a Query (a move: its batch, key_move_request.h).
Session::Start Session::start_scatter_write(const wire::Frame& frame, const router::Route& route) {
  std::vector<std::string> messages;
  if (route.split_write) {
    for (const merge::ShardStatement& statement : route.shard_statements) {
      if (route.key_move) {
        messages.push_back(key_move_request(route.key_move->client_sql, statement.sql, {}, {}));
      } else {
        wire::encode_query(messages.emplace_back(), statement.sql);
      }
    }
  } else {
    wire::encode_query(messages.emplace_back(), route.shard_sql);
  }
  if (route.key_move) profile_.unnamed_elsewhere = true;  // a move's batch parses the unnamed statement
  return run_scatter_write(std::move(messages), frame.size, route, false);
}

// The client's extended batch rebuilt for each shard with its SQL (and, for a split write, its own
// Bind values); the client's other Bind values and formats unchanged.
Session::Start Session::start_extended_scatter_write(const ExtendedBatch& bound, const router::Route& route) {
  std::vector<std::string> messages;
  size_t consumed = 0;
  const size_t parts = route.split_write ? route.shard_statements.size() : 1;
  for (size_t i = 0; i < parts; ++i) {
    const merge::ShardStatement* statement = route.split_write ? &route.shard_statements[i] : nullptr;
    auto batch = extended_reference_write(bound, route, statement ? statement->sql : route.shard_sql,
                                          statement ? &statement->params : nullptr);
    if (!batch) {
      refuse_request(batch.status());
      return Start::Answered;
    }
    if (batch.value().first.empty()) return Start::Wait;
    messages.push_back(std::move(batch.value().first));
    consumed = batch.value().second;
  }
  profile_.unnamed_elsewhere = true;  // the shards' unnamed statement is this batch's now
  KeyMoveClient client;
  if (route.key_move) client = key_move_client(bound);
  return run_scatter_write(std::move(messages), consumed, route, !bound.client_parsed, std::move(client));
}

// How the client of an extended batch asked for a move's answer: its result formats, whether it
// described the portal (the message after its Bind, which extended_reference_write checked), each
// Execute's row limit.
KeyMoveClient Session::key_move_client(const ExtendedBatch& bound) const {
  KeyMoveClient client;
  client.extended = true;
  size_t offset = bound.bind_end;
  auto next = wire::read_frame(client_input().substr(offset), wire::Sender::Client, limits_);
  client.describes = next.status == wire::FrameStatus::Complete && next.frame.type == 'D';
  while (next.status == wire::FrameStatus::Complete && next.frame.type != 'S') {
    if (next.frame.type == 'E') {
      auto execute = wire::decode_execute(next.frame.body);
      if (execute) client.row_limits.push_back(execute->max_rows);
    }
    offset += next.frame.size;
    next = wire::read_frame(client_input().substr(offset), wire::Sender::Client, limits_);
  }
  if (auto bind = wire::decode_bind_rest(bound.bind.rest))
    client.result_formats = std::move(bind->result_formats);
  client.dates = date_reading();
  client.portal = std::string(bound.bind.portal);
  return client;
}

// The client's next message while a portal waits at its row limit inside the transaction: a
// merge's (continue_scatter_portal: Continue, or Stop until it answered) or a move's RETURNING
// (continue_key_move_portal); Forward when none waits or the message is not the portal's.
Session::Next Session::continue_held_portal(const wire::Frame& frame) {
  if (txn_.runner.get<MergeFanout>())
    return continue_scatter_portal(frame) == Next::Continue ? Next::Continue : Next::Stop;
  if (key_move_rest_) return continue_key_move_portal(frame);
  return Next::Forward;
}

// The client's next message while a move's RETURNING waits at its Executes' row limits inside the
// transaction (KeyMoveRest): an Execute of its portal is answered from the rows, a Sync with the
// transaction's status, a Flush needs nothing; anything else closes the portal (as PostgreSQL's
// next statement drops the unnamed one) and goes its usual way.
Session::Next Session::continue_key_move_portal(const wire::Frame& frame) {
  std::string out;
  auto execute = wire::decode_execute(frame.body);  // meant only when the type is 'E'
  if (frame.type == 'E' && execute && execute->portal == key_move_rest_->portal() &&
      writes_in_transaction()) {
    out = key_move_rest_->execute(execute->max_rows);
  } else if (frame.type == 'S' && writes_in_transaction()) {
    wire::encode_ready_for_query(out, txn_.control.status());
  } else if (frame.type != 'H') {
    key_move_rest_.reset();
    return Next::Forward;
  }
  client_->write(out);
  consume_client(frame.size);
  return Next::Continue;
}

// `messages`: what the shards run (a Query or an extended batch), one for every shard or one per
// shard of route.shards, in order; `consumed`: the client's bytes.
Session::Start Session::run_scatter_write(std::vector<std::string> messages, size_t consumed,
                                          const router::Route& route, bool hide_parse_complete,
                                          KeyMoveClient key_move_client) {
  if (Status refusal = scatter_write_refusal(route); !refusal) {
    refuse_request(refusal);
    return Start::Answered;
  }
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  std::vector<pool::Pool*> pools;
  // A shard outside route.shards owns none of the rows written.
  if (Status error = write_targets(&route.shards, in_transaction, &targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  LOG_DEBUG("client=c%llu %s on %zu shards%s", (unsigned long long)id(), scatter_write_what(route).c_str(),
            targets.size(), in_transaction ? " in the client's transaction" : "");
  ReferenceWrite::Setup setup;
  if (messages.size() == 1) {
    setup.query = std::move(messages.front());
  } else {
    setup.queries = std::move(messages);
  }
  setup.hide_parse_complete = hide_parse_complete;
  setup.table = route.table;
  setup.answer = ReferenceWrite::Answer::SumRows;
  setup.what = scatter_write_what(route);
  setup.key_move = route.key_move;
  setup.key_move_client = std::move(key_move_client);
  setup.reads_owned_rows =
      (route.insert_select || route.keyless_write) && host_.routing_rules().owned_rows_only();
  return start_write_runner(consumed, std::move(targets), std::move(pools), std::move(setup),
                            stats::RouteLabel::Scatter, in_transaction);
}

}  // namespace sw::session
