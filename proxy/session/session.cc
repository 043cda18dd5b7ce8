#include "session/session.h"

#include "common/log.h"
#include "config/config.h"
#include "net/loop.h"
#include "wire/messages.h"

namespace sw::session {

Session::Session(SessionHost& host, std::unique_ptr<net::Connection> client)
    : host_(host),
      client_(std::move(client)),
      login_(host.loop()),
      legs_({}, ServerState{}, "the transaction", *this) {
  const config::Config& config = host_.config();
  limits_.max_message_size = config.max_message_size;
  pools_.session_pooling = config.pool.mode == config::PoolMode::Session;
  client_->set_handler(this);
  login_.timer.start(static_cast<uint64_t>(config.auth.login_timeout.count()), 0, [this] {
    if (phase_ == Phase::Ready || phase_ == Phase::Closed) return;
    LOG_INFO("client=c%llu login timed out", (unsigned long long)id());
    fail_login(Status::client("57014", "canceling authentication due to timeout"));
  });
  LOG_DEBUG("client=c%llu accepted from %s", (unsigned long long)id(), client_->peer().c_str());
}

Session::~Session() {
  end_cutover_wait();
  if (login_.cancel_registered) host_.unregister_cancel(login_.cancel_key);
  legs_.stop_waiting();
  if (txn_.leg.attached()) release_backend(false);
  release_parked_legs();
  unpin();
}

void Session::on_readable(net::Connection&) {
  switch (phase_) {
    case Phase::Startup: read_startup(); break;
    case Phase::Authenticating: read_auth(); break;
    case Phase::Ready: mode_.admin ? read_admin_messages() : read_client_messages(); break;
    case Phase::AwaitingServerParameters:
    case Phase::Closed: break;
  }
}

void Session::report_unexpected_transition(RequestState to) const {
  LOG_WARN("client=c%llu request state %s -> %s is not in the transition table (a shardwire defect)",
           (unsigned long long)id(), request_state_name(request_.state), request_state_name(to));
}

void Session::report_unexpected_event(const char* event) const {
  LOG_WARN("client=c%llu %s while the request is %s (a shardwire defect)", (unsigned long long)id(), event,
           request_state_name(request_.state));
}

void Session::on_closed(net::Connection&, const Status& why) {
  LOG_DEBUG("client=c%llu disconnected: %s", (unsigned long long)id(), why.message.c_str());
  close("client disconnected");
}

void Session::on_drained(net::Connection&) {
  // The client caught up with what its server sent: let the server talk again.
  if (MergeFanout* merge = txn_.runner.get<MergeFanout>()) merge->on_client_drained();
  for (size_t leg = 0; leg < legs_.size(); ++leg) legs_.resume(leg);
}

void Session::cancel_running_query(std::function<void()> delivered) {
  // `delivered` runs once every server's cancel was delivered (cancel_join.h).
  pool::Backend* server = server_of(txn_.leg);
  if (txn_.runner.empty() && !txn_.two_phase && server != nullptr && !txn_.leg.tracker.idle()) {
    LOG_INFO("client=c%llu cancel request forwarded to server=s%llu", (unsigned long long)id(),
             (unsigned long long)server->id());
    server->pool().send_cancel(*server, std::move(delivered));
    return;
  }
  CancelJoin join(std::move(delivered));
  cancel_runner(join);
  join.seal();
}

// The cancel of a statement running on several servers (the runner's legs: the engine's one
// cancel path), or of nothing.
void Session::cancel_runner(CancelJoin& join) {
  if (const LegEngine::Runner* runner = txn_.runner.as<LegEngine::Runner>()) {
    if (LegEngine* engine = runner->engine()) {
      const std::string what = engine->what();  // the run may end inside the cancel
      const size_t sent = engine->cancel_client_statement(join);
      LOG_INFO("client=c%llu cancel request forwarded to %zu shard(s) of %s", (unsigned long long)id(), sent,
               what.c_str());
    }
    return;
  }
  if (txn_.two_phase) {
    LOG_INFO("client=c%llu cancel request ignored: its COMMIT is committing on several shards",
             (unsigned long long)id());
    return;
  }
  LOG_DEBUG("client=c%llu cancel request: nothing running", (unsigned long long)id());
}

void Session::resume_after_pause() {
  switch (request_.state) {
    case RequestState::WaitingForServer:
      if (legs_.waiting_pool() == nullptr) set_request_state(RequestState::Routing);  // held by PAUSE
      break;
    case RequestState::Routing:
    case RequestState::WaitingForCutover:
    case RequestState::Running:
    case RequestState::RetryingAfterFence:
    case RequestState::Answered:
    case RequestState::WaitingForLeg:
    case RequestState::LentUntilSync: break;
  }
  if (phase_ == Phase::Ready) read_client_messages();
}

void Session::begin_shutdown() {
  mode_.shutdown_pending = true;
  bool busy = txn_.leg.attached() && !txn_.leg.at_boundary(request_.batch_open);
  if (!busy) terminate(Status::proxy("57P01", "terminating connection due to administrator command"));
}

void Session::terminate(const Status& why) {
  if (phase_ == Phase::Closed) return;
  send_fatal(why);
  close(why.message.c_str());
}

void Session::send_fatal(const Status& why) {
  std::string out;
  wire::encode_error(out, "FATAL", why.sqlstate, why.message);
  client_->write(out);
}

void Session::close(const char* reason) {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Closed;
  LOG_INFO("client=c%llu user=%s closed: %s", (unsigned long long)id(), profile_.user.c_str(), reason);
  login_.timer.stop();
  end_cutover_wait();
  legs_.stop_waiting();
  if (request_.state == RequestState::WaitingForServer) set_request_state(RequestState::Routing);
  if (in_run(txn_.leg)) {
    release_backend(false);  // a run reads it: in the middle of the run's statements
  } else if (txn_.leg.attached()) {
    // A server in the middle of something is not reusable: stop its query and close it. In
    // session pooling, one at a boundary is reset (pool.server_reset_query) and reused; in
    // transaction pooling, one idle in the transaction is rolled back and reused.
    LegAnswers& leg = txn_.leg;
    bool at_boundary = leg.at_boundary(request_.batch_open);
    bool idle_in_transaction = !pools_.session_pooling && leg.tracker.idle() && !request_.batch_open;
    const std::string rollback = "ROLLBACK";
    if (!leg.tracker.idle()) active_server().pool().send_cancel(active_server());
    if (pools_.session_pooling && at_boundary)
      release_backend(true, &host_.config().pool.server_reset_query);
    else if (idle_in_transaction && !at_boundary)
      release_backend(true, &rollback);
    else
      release_backend(at_boundary && !pools_.session_pooling);
  }
  release_parked_legs();
  unpin();
  client_->close_after_flush();
  host_.session_closed(this);
}

}  // namespace sw::session
