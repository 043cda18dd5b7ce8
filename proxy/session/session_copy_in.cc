// Session: COPY FROM STDIN into a sharded table (CopyIn, docs/architecture.md §5.10), or a
// reference table (every shard gets the client's CopyData whole, §6.4). The session
// starts it, hands it the client's messages while it accepts them (a shard's output over its
// high-water mark stops the reading: backpressure), and resumes its own reading when it is done.
#include "common/log.h"
#include "net/loop.h"
#include "session/session.h"

namespace sw::session {

Session::Start Session::start_copy_in(const wire::Frame& frame, const parser::StatementFacts& statement,
                                      const router::Route& route) {
  // A reference table's COPY (no copy_rule) goes whole to every shard: no key to plan for.
  auto plan = route.copy_rule != nullptr ? plan_copy_in(statement, *route.copy_rule)
                                         : Result<CopyInPlan>(CopyInPlan{});
  const Status refused = !plan                        ? plan.status()
                         : route.copy_rule == nullptr ? every_shard_write_refusal(statement, route)
                                                      : Status::ok();
  if (!refused.is_ok()) {
    refuse_request(refused);
    return Start::Answered;
  }
  const bool in_transaction = writes_in_transaction();
  std::vector<LegEngine::Target> targets;
  std::vector<pool::Pool*> pools;
  if (Status error = write_targets(nullptr, in_transaction, &targets, &pools); !error) {
    refuse_request(error);
    return Start::Answered;
  }
  LOG_DEBUG("client=c%llu COPY FROM STDIN into %s split over %zu shards%s", (unsigned long long)id(),
            route.table.c_str(), targets.size(), in_transaction ? " in the client's transaction" : "");
  CopyIn::Setup setup;
  setup.copy_query.assign(whole(frame));
  setup.every_shard = route.copy_rule == nullptr;
  if (route.copy_rule != nullptr) {
    setup.rule = *route.copy_rule;
  } else {
    setup.rule.config_name = route.table;
  }
  setup.plan = std::move(plan.value());
  setup.directory = host_.directory();
  setup.session_state = server_state();
  setup.in_transaction = in_transaction;
  switch (cross_shard_writes()) {
    case CrossShardWrites::TwoPhase: setup.two_phase = true; break;
    case CrossShardWrites::Refuse: setup.no_two_phase = "sharding.cross_shard_transactions is refuse"; break;
    case CrossShardWrites::RefuseNoCatalog:
      setup.no_two_phase = "it needs catalog.dsn to record decisions";
      break;
  }
  CopyIn::Callbacks callbacks;
  callbacks.write_client = [this](std::string_view bytes) { client_->write(bytes); };
  callbacks.resume_client = [this] {
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (!alive.lock() || phase_ != Phase::Ready) return;
      client_->resume_reading();
      read_client_messages();
    });
  };
  callbacks.hand_back = hand_back_to_legs(in_transaction);
  callbacks.on = &legs_;
  callbacks.done = [this, in_transaction, pools = std::move(pools), started = stats::monotonic_us()] {
    write_session_ready(in_transaction);
    count_fanout(pools, stats::RouteLabel::Scatter, started);
    host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
      if (alive.lock()) end_copy_in();
    });
  };
  callbacks.two_phase = two_phase_hooks();
  txn_.runner.emplace<CopyIn>(std::move(targets), std::move(setup), std::move(callbacks));
  set_request_state(RequestState::Running);
  consume_client(frame.size);
  txn_.runner.get<CopyIn>()->start();
  return Start::Wait;
}

// The client's messages while a CopyIn runs: each one whole to it, as long as it accepts them.
void Session::feed_copy_in() {
  while (phase_ == Phase::Ready && txn_.runner.get<CopyIn>() != nullptr &&
         !txn_.runner.get<CopyIn>()->finished()) {
    CopyIn& copy = *txn_.runner.get<CopyIn>();
    if (!copy.accepts_client_input()) {
      copy.flush();
      client_->pause_reading();  // resumed by the CopyIn (streaming starts, a shard drained)
      return;
    }
    auto result = wire::read_frame(client_->input(), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) {
      copy.flush();
      return;
    }
    if (result.status == wire::FrameStatus::Error) {
      LOG_INFO("client=c%llu protocol violation during COPY: %s", (unsigned long long)id(),
               result.error.c_str());
      terminate(Status::client("08P01", result.error));
      return;
    }
    if (result.frame.type == 'X') {
      close("client sent Terminate during COPY");
      return;
    }
    copy.on_client_message(result.frame.type, result.frame.body);
    client_->consume(result.frame.size);
  }
}

void Session::end_copy_in() {
  txn_.runner.reset<CopyIn>();
  if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
  if (phase_ == Phase::Ready) {
    client_->resume_reading();
    read_client_messages();
  }
}

}  // namespace sw::session
