// Session: a write of a reference table on every shard (ReferenceWrite, docs/architecture.md
// §6.4): outside a transaction block committed by the runners' two-phase commit; inside one left
// in the transaction's legs (session_every_shard_write.cc). An INSERT ... SELECT between co-located
// sharded tables on several shards (§6.3) runs through the same runner. The session reads no
// client input until it is answered.
#include "common/bytes.h"
#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"

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

// Why an INSERT ... SELECT on several shards cannot commit on them together; empty when it can.
std::string insert_select_refusal(const router::Route& route, CrossShardWrites writes) {
  const std::string what = "INSERT ... SELECT into sharded table " + route.table + " on several shards";
  if (route.shards.size() < 2) return {};
  switch (writes) {
    case CrossShardWrites::TwoPhase: return {};
    case CrossShardWrites::Refuse:
      return what +
             " must commit on every shard at once, which needs two-phase commit, and "
             "sharding.cross_shard_transactions is refuse; add the key to the SELECT";
    case CrossShardWrites::RefuseNoCatalog:
      return what +
             " must commit on every shard at once, which needs two-phase commit, and that needs "
             "catalog.dsn to record decisions; add the key to the SELECT";
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
  if (route.insert_select) {
    if (route.migrating)
      return Status::client("0A000", "INSERT ... SELECT into sharded table " + route.table +
                                         " waits for a bucket move's cutover, which a transaction holding "
                                         "servers cannot; run it outside BEGIN ... COMMIT or retry");
    const std::string refusal = insert_select_refusal(route, cross_shard_writes());
    return refusal.empty() ? Status::ok() : Status::client("0A000", refusal);
  }
  const std::string refusal =
      reference_write_refusal(&only, route, cross_shard_writes(), host_.directory()->shards().size());
  if (!refusal.empty()) return Status::client("0A000", refusal);
  if (only.kind != parser::StatementKind::Copy) return Status::ok();
  auto plan = plan_reference_copy_in(only, route.table);
  return plan ? Status::ok() : plan.status();
}

// The extended batch [Parse] Bind [Describe portal] Execute Sync of a reference write (or a
// multi-shard INSERT ... SELECT), rebuilt for every shard with `sql` parsed as the unnamed
// statement (no shard needs the client's statement prepared); with the size of the client's
// batch. Execute's row limit stays the client's (pgjdbc sends 1 for a statement whose rows it
// discards): the write runs whole either way. An INSERT ... SELECT with RETURNING takes none: each
// shard would stop at the limit.
Result<std::pair<std::string, size_t>> Session::extended_reference_write(const ExtendedBatch& bound,
                                                                         const router::Route& route,
                                                                         std::string_view sql) {
  std::string_view input = client_input();
  size_t offset = bound.bind_end;
  std::string batch;
  wire::encode_parse(batch, "", sql, bound.types());
  wire::encode_bind_renamed(batch, bound.bind, "");
  for (char expected : {'D', 'E', 'S'}) {
    auto frame = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    if (frame.status == wire::FrameStatus::NeedMore) return Status::ok();  // empty: wait for more
    const std::string_view body = frame.frame.body;
    const bool limited =
        expected == 'E' && (body.size() < 4 || load_be32(body.data() + body.size() - 4) != 0);
    const bool fits = frame.status == wire::FrameStatus::Complete && frame.frame.type == expected &&
                      (expected != 'D' || (!body.empty() && body[0] == 'P')) &&
                      !(limited && route.insert_select && bound.only().returning);
    if (!fits && expected == 'D') continue;  // Describe is optional
    if (!fits && route.insert_select) {
      return Status::client("0A000",
                            "INSERT ... SELECT into sharded table " + route.table +
                                " on several shards runs in the extended protocol only as one batch of "
                                "[Parse] Bind [Describe portal] Execute (with RETURNING: no row limit) "
                                "Sync");
    }
    if (!fits)
      return Status::client("0A000", "write of reference table " + route.table +
                                         " runs on every shard in the extended protocol only as one batch of "
                                         "[Parse] Bind [Describe portal] Execute Sync");
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
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
  std::vector<EveryShardTransaction::Target> targets;
  std::vector<pool::Pool*> pools;
  if (Status error = targets_with_session_servers(nullptr, in_transaction, &targets, &pools); !error) {
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

// INSERT ... SELECT between co-located sharded tables on several shards (docs/architecture.md
// §6.3): each shard runs the route's SQL (the sources read through the owned-rows splice) in a
// transaction; outside the client's they commit together, inside it they stay its legs; the
// client gets every shard's rows and the summed count.
Session::Start Session::start_insert_select(const wire::Frame& frame, const router::Route& route) {
  std::string query;
  wire::encode_query(query, route.shard_sql);
  return run_insert_select(std::move(query), frame.size, route, false);
}

// The extended batch rebuilt with the route's SQL for every shard; the client's Bind values.
Session::Start Session::start_extended_insert_select(const ExtendedBatch& bound, const router::Route& route) {
  auto batch = extended_reference_write(bound, route, route.shard_sql);
  if (!batch) {
    refuse_request(batch.status());
    return Start::Answered;
  }
  if (batch.value().first.empty()) return Start::Wait;
  profile_.unnamed_elsewhere = true;  // the shards' unnamed statement is this batch's now
  return run_insert_select(std::move(batch.value().first), batch.value().second, route, !bound.client_parsed);
}

// `message`: what every shard runs (a Query, or an extended batch); `consumed`: the client's bytes.
Session::Start Session::run_insert_select(std::string message, size_t consumed, const router::Route& route,
                                          bool hide_parse_complete) {
  std::string refusal = insert_select_refusal(route, cross_shard_writes());
  if (refusal.empty() && route.migrating) {  // only on a server the session holds: else it waited
    refusal = "INSERT ... SELECT into sharded table " + route.table +
              " waits for a bucket move's cutover, which a transaction holding servers cannot; run it "
              "outside BEGIN ... COMMIT or retry";
  }
  if (!refusal.empty()) {
    refuse_request(Status::client("0A000", refusal));
    return Start::Answered;
  }
  const bool in_transaction = writes_in_transaction();
  std::vector<EveryShardTransaction::Target> targets;
  std::vector<pool::Pool*> pools;
  // A shard outside route.shards owns none of the rows read.
  if (Status error = targets_with_session_servers(&route.shards, in_transaction, &targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  LOG_DEBUG("client=c%llu INSERT ... SELECT into %s on %zu shards%s", (unsigned long long)id(),
            route.table.c_str(), targets.size(), in_transaction ? " in the client's transaction" : "");
  ReferenceWrite::Setup setup;
  setup.query = std::move(message);
  setup.hide_parse_complete = hide_parse_complete;
  setup.table = route.table;
  setup.answer = ReferenceWrite::Answer::SumRows;
  setup.what = "INSERT ... SELECT into sharded table " + route.table;
  return start_write_runner(consumed, std::move(targets), std::move(pools), std::move(setup),
                            stats::RouteLabel::Scatter, in_transaction);
}

// Runs a ReferenceWrite for the client's request of `consumed` bytes (inside the client's
// transaction when `in_transaction`); the session reads no client input until it answered.
Session::Start Session::start_write_runner(size_t consumed,
                                           std::vector<EveryShardTransaction::Target> targets,
                                           std::vector<pool::Pool*> pools, ReferenceWrite::Setup setup,
                                           stats::RouteLabel label, bool in_transaction) {
  setup.session_state = profile_.settings.signature();
  setup.in_transaction = in_transaction;
  ReferenceWrite::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.hand_back = [this, in_transaction](std::vector<EveryShardTransaction::Handed> handed,
                                               const Status& error) {
    return take_back_servers(std::move(handed), error, in_transaction);
  };
  callbacks.done = [this, in_transaction, label, pools = std::move(pools), started = stats::monotonic_us()] {
    write_session_ready(in_transaction);
    count_fanout(pools, label, started);
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (!alive.lock()) return;
      txn_.reference_write.reset();
      if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
      if (phase_ == Phase::Ready) read_client_messages();
    });
  };
  callbacks.two_phase = two_phase_hooks();
  txn_.reference_write =
      std::make_unique<ReferenceWrite>(std::move(targets), std::move(setup), std::move(callbacks));
  set_request_state(RequestState::Running);
  consume_client(consumed);
  txn_.reference_write->start();
  return Start::Wait;
}

}  // namespace sw::session
