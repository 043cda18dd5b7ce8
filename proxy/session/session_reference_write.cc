// Session: a write of a reference table on every shard (ReferenceWrite, docs/architecture.md
// §6.4), outside a transaction block, committed by the runners' two-phase commit. The session
// reads no client input until it is answered.
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
  setup.session_state = profile_.settings.signature();
  ReferenceWrite::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.done = [this, pools = std::move(pools), started = stats::monotonic_us()] {
    count_fanout(pools, stats::RouteLabel::AllShards, started);
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
