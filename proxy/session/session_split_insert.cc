// Session: a multi-row INSERT whose rows fall on several shards (SplitInsert, docs/architecture.md
// §5.11): each shard's part on a server of its own (or the session's server on that shard),
// outside a transaction block committed together by the runners' two-phase commit, inside one
// left in the transaction's legs (session_run_legs.cc). The session reads no client
// input until it is answered.
#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"
#include "session/split_bind.h"
#include "wire/messages.h"

namespace sw::session {

// Why the split cannot run as one transaction per shard committed together; ok when it can. A
// route still MIGRATING here comes with a server the session holds (else it waited for the
// cutover), which cannot wait.
Status Session::split_insert_refusal_now(const parser::StatementFacts* only,
                                         const router::Route& route) const {
  const std::string what = route.error.message + ": ";
  if (only == nullptr)
    return Status::client("0A000",
                          what + "an INSERT split by shard must be sent alone, not with other statements");
  if (route.migrating) {
    return Status::client("0A000",
                          what +
                              "its rows' buckets wait for a bucket move's cutover, which a transaction "
                              "holding servers cannot; run it outside BEGIN ... COMMIT or retry");
  }
  switch (cross_shard_writes()) {
    case CrossShardWrites::TwoPhase: return Status::ok();
    case CrossShardWrites::Refuse:
      return Status::client(
          "0A000",
          what + "splitting it needs two-phase commit, and sharding.cross_shard_transactions is refuse");
    case CrossShardWrites::RefuseNoCatalog:
      return Status::client(
          "0A000", what + "splitting it needs two-phase commit, which needs catalog.dsn to record decisions");
  }
  return Status::ok();
}

Session::Start Session::start_split_insert(const parser::StatementFacts* only, const router::Route& route,
                                           size_t consumed, const SplitBatch* batch) {
  if (Status refusal = split_insert_refusal_now(only, route); !refusal.is_ok()) {
    refuse_request(refusal);
    return Start::Answered;
  }
  std::vector<int> shards;
  for (const router::InsertSplit::Part& planned : route.split->parts) shards.push_back(planned.shard);
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  std::vector<pool::Pool*> pools;
  if (Status error = write_targets(&shards, in_transaction, &targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  std::vector<SplitInsert::Part> parts;
  for (size_t i = 0; i < targets.size(); ++i) {
    const router::InsertSplit::Part& planned = route.split->parts[i];
    SplitInsert::Part part;
    part.target = std::move(targets[i]);
    part.request = route.split->row_by_row && batch != nullptr
                       ? part_rows_request(planned.row_statements, *batch)
                       : part_request(planned.sql, planned.params, batch);
    parts.push_back(std::move(part));
  }
  LOG_DEBUG("client=c%llu INSERT into %s split over %zu shards%s", (unsigned long long)id(),
            route.table.c_str(), parts.size(), in_transaction ? " in the client's transaction" : "");
  SplitInsert::Setup setup;
  setup.table = route.table;
  setup.row_part = route.split->row_part;
  setup.row_by_row = route.split->row_by_row;
  setup.in_transaction = in_transaction;
  if (batch != nullptr) setup.answered = batch->answered;
  end_cutover_wait();
  return run_split_insert(std::move(parts), std::move(setup), std::move(pools), consumed);
}

// Starts the runner over `parts`; the session reads no client input until it answered.
Session::Start Session::run_split_insert(std::vector<SplitInsert::Part> parts, SplitInsert::Setup setup,
                                         std::vector<pool::Pool*> pools, size_t consumed) {
  setup.session_state = server_state();
  const bool in_transaction = setup.in_transaction;
  SplitInsert::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.hand_back = hand_back_to_legs(in_transaction);
  callbacks.on = &legs_;
  callbacks.done = [this, in_transaction, pools = std::move(pools), started = stats::monotonic_us()] {
    write_session_ready(in_transaction);
    count_fanout(pools, stats::RouteLabel::Shard, started);
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (!alive.lock()) return;
      txn_.runner.reset<SplitInsert>();
      if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
      if (phase_ == Phase::Ready) read_client_messages();
    });
  };
  callbacks.two_phase = two_phase_hooks();
  txn_.runner.emplace<SplitInsert>(std::move(parts), std::move(setup), std::move(callbacks));
  set_request_state(RequestState::Running);
  consume_client(consumed);
  txn_.runner.get<SplitInsert>()->start();
  return Start::Wait;
}

}  // namespace sw::session

namespace sw::session {

// A split INSERT in the extended protocol runs only as the batch [Parse] Bind [Describe portal]
// Execute (all rows) Sync: each part gets the same shape with its own parameters, the client
// the ParseComplete/BindComplete it is owed, then the combined answer and ReadyForQuery.
Session::Start Session::start_extended_split(const ExtendedBatch& bound, const router::Route& route) {
  std::string_view input = client_input();
  size_t offset = 0;
  int parses = 0;
  bool describe = false;
  bool shaped = true;
  for (;;) {
    auto frame = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
    if (frame.status != wire::FrameStatus::Complete) {
      shaped = false;
      break;
    }
    const char type = frame.frame.type;
    const std::string_view body = frame.frame.body;
    offset += frame.frame.size;
    if (offset <= bound.bind_end) {
      if (type == 'P') ++parses;
      shaped = shaped && (type == 'P' || type == 'B');
      continue;
    }
    if (type == 'D' && !describe && wire::describes_portal(body)) {
      describe = true;
      continue;
    }
    if (type == 'E') {
      shaped = shaped && wire::executes_every_row(body);
      frame = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
      if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
      shaped = shaped && frame.status == wire::FrameStatus::Complete && frame.frame.type == 'S';
      offset += frame.frame.size;
      break;
    }
    shaped = false;
    break;
  }
  if (!shaped || parses != (bound.client_parsed ? 1 : 0)) {
    refuse_request(Status::client("0A000", route.error.message +
                                               " (an INSERT whose rows fall on several shards runs split by "
                                               "shard in the extended protocol only as one batch of [Parse], "
                                               "Bind, [Describe portal], Execute (all rows) and Sync)"));
    return Start::Answered;
  }
  remember_parsed(bound.parsed);
  SplitBatch batch;
  batch.types = bound.types();
  batch.bind_rest = bound.bind.rest;
  batch.describe = describe;
  if (bound.client_parsed) wire::encode_parse_complete(batch.answered);
  wire::encode_bind_complete(batch.answered);
  return start_split_insert(&bound.only(), route, offset, &batch);
}

}  // namespace sw::session
