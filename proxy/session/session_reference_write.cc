// Session: a write of a reference table on every shard (ReferenceWrite, docs/architecture.md
// §6.4) and an INSERT ... SELECT between co-located sharded tables on several shards (§6.3),
// outside a transaction block, committed by the runners' two-phase commit. The session reads no
// client input until it is answered.
#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"

namespace sw::session {

namespace {

// Why the write cannot run as one transaction per shard committed together; empty when it can.
std::string reference_write_refusal(const parser::StatementFacts* only, const router::Route& route,
                                    CrossShardWrites writes, size_t shards, bool session_pooling) {
  const std::string what = "write of reference table " + route.table;
  if (session_pooling) return reference_write_in_transaction(route).message;
  if (only == nullptr) return what + " must be sent alone, not with other statements in one Query";
  if (only->kind == parser::StatementKind::Copy) {
    return "COPY FROM into reference table " + route.table +
           " is not supported through shardwire; load it with INSERT, or on every shard directly and "
           "check it with VERIFY REFERENCE " +
           route.table + " on the admin console";
  }
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

Session::Start Session::start_reference_write(const wire::Frame& frame, const parser::StatementFacts* only,
                                              const router::Route& route) {
  const router::Directory& directory = *host_.directory();
  const std::string refusal = reference_write_refusal(only, route, cross_shard_writes(),
                                                      directory.shards().size(), pools_.session_pooling);
  if (!refusal.empty()) {
    refuse_request(Status::client("0A000", refusal));
    return Start::Answered;
  }
  std::vector<EveryShardTransaction::Target> targets;
  std::vector<pool::Pool*> pools;
  if (Status error = targets_on_every_shard(&targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  LOG_DEBUG("client=c%llu write of reference table %s on %zu shards", (unsigned long long)id(),
            route.table.c_str(), targets.size());
  ReferenceWrite::Setup setup;
  setup.query.assign(whole(frame));
  setup.table = route.table;
  return start_write_runner(frame, std::move(targets), std::move(pools), std::move(setup),
                            stats::RouteLabel::AllShards);
}

// INSERT ... SELECT between co-located sharded tables on several shards (docs/architecture.md
// §6.3): each shard runs the route's SQL (its sources read through the owned-rows splice) in a
// transaction; they commit together; the client gets every shard's rows and the summed count.
Session::Start Session::start_insert_select(const wire::Frame& frame, const router::Route& route) {
  const std::string what = "INSERT ... SELECT into sharded table " + route.table + " on several shards";
  std::string refusal;
  if (pools_.session_pooling) {
    refusal = what +
              " needs a server of its own on each shard, which pool.mode session does not give; "
              "add the key to the SELECT";
  } else if (route.shards.size() >= 2 && cross_shard_writes() == CrossShardWrites::Refuse) {
    refusal = what +
              " must commit on every shard at once, which needs two-phase commit, and "
              "sharding.cross_shard_transactions is refuse; add the key to the SELECT";
  } else if (route.shards.size() >= 2 && cross_shard_writes() == CrossShardWrites::RefuseNoCatalog) {
    refusal = what +
              " must commit on every shard at once, which needs two-phase commit, and that needs "
              "catalog.dsn to record decisions; add the key to the SELECT";
  }
  if (!refusal.empty()) {
    refuse_request(Status::client("0A000", refusal));
    return Start::Answered;
  }
  std::vector<EveryShardTransaction::Target> every;
  std::vector<pool::Pool*> every_pool;
  if (Status error = targets_on_every_shard(&every, &every_pool); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  std::vector<EveryShardTransaction::Target> targets;
  std::vector<pool::Pool*> pools;
  for (int shard : route.shards) {
    targets.push_back(std::move(every.at(static_cast<size_t>(shard))));
    pools.push_back(every_pool.at(static_cast<size_t>(shard)));
  }
  LOG_DEBUG("client=c%llu INSERT ... SELECT into %s on %zu shards", (unsigned long long)id(),
            route.table.c_str(), targets.size());
  ReferenceWrite::Setup setup;
  wire::encode_query(setup.query, route.shard_sql);
  setup.table = route.table;
  setup.answer = ReferenceWrite::Answer::SumRows;
  setup.what = "INSERT ... SELECT into sharded table " + route.table;
  return start_write_runner(frame, std::move(targets), std::move(pools), std::move(setup),
                            stats::RouteLabel::Scatter);
}

// Runs a ReferenceWrite for the client's Query `frame`; the session reads no client input until
// it answered.
Session::Start Session::start_write_runner(const wire::Frame& frame,
                                           std::vector<EveryShardTransaction::Target> targets,
                                           std::vector<pool::Pool*> pools, ReferenceWrite::Setup setup,
                                           stats::RouteLabel label) {
  setup.session_state = profile_.settings.signature();
  ReferenceWrite::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.done = [this, pools = std::move(pools), label, started = stats::monotonic_us()] {
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
  consume_client(frame.size);
  txn_.reference_write->start();
  return Start::Wait;
}

}  // namespace sw::session
