#include "session/session.h"

#include "common/log.h"
#include "config/config.h"
#include "net/loop.h"
#include "wire/messages.h"

namespace sw::session {

Session::Session(SessionHost& host, std::unique_ptr<net::Connection> client)
    : host_(host), client_(std::move(client)), login_timer_(host.loop()) {
  const config::Config& config = host_.config();
  limits_.max_message_size = config.max_message_size;
  session_pooling_ = config.pool.mode == config::PoolMode::Session;
  client_->set_handler(this);
  login_timer_.start(static_cast<uint64_t>(config.auth.login_timeout.count()), 0, [this] {
    if (phase_ == Phase::Ready || phase_ == Phase::Closed) return;
    LOG_INFO("client=c%llu login timed out", (unsigned long long)id());
    fail_login(Status::client("57014", "canceling authentication due to timeout"));
  });
  LOG_DEBUG("client=c%llu accepted from %s", (unsigned long long)id(), client_->peer().c_str());
}

Session::~Session() {
  end_cutover_wait();
  if (cancel_registered_) host_.unregister_cancel(cancel_key_);
  if (waiting_for_backend_ && waiting_pool_ != nullptr) waiting_pool_->cancel_wait(this);
  if (backend_ != nullptr) release_backend(false);
}

void Session::on_readable(net::Connection&) {
  switch (phase_) {
    case Phase::Startup: read_startup(); break;
    case Phase::Authenticating: read_auth(); break;
    case Phase::Ready: admin_ ? read_admin_messages() : read_client_messages(); break;
    case Phase::AwaitingServerParameters:
    case Phase::Closed: break;
  }
}

void Session::on_closed(net::Connection&, const Status& why) {
  LOG_DEBUG("client=c%llu disconnected: %s", (unsigned long long)id(), why.message.c_str());
  close("client disconnected");
}

void Session::on_drained(net::Connection&) {
  // The client caught up with what its server sent: let the server talk again.
  if (backend_ != nullptr) {
    backend_->connection().resume_reading();
    read_server_messages();
  }
}

void Session::on_backend_drained(pool::Backend&) {
  if (phase_ == Phase::Ready) {
    client_->resume_reading();
    read_client_messages();
  }
}

void Session::cancel_running_query() {
  if (backend_ == nullptr || tracker_.idle()) {
    LOG_DEBUG("client=c%llu cancel request: nothing running", (unsigned long long)id());
    return;
  }
  LOG_INFO("client=c%llu cancel request forwarded to server=s%llu", (unsigned long long)id(),
           (unsigned long long)backend_->id());
  backend_->pool().send_cancel(*backend_);
}

void Session::resume_after_pause() {
  held_by_pause_ = false;
  if (phase_ == Phase::Ready) read_client_messages();
}

void Session::begin_shutdown() {
  shutdown_pending_ = true;
  bool busy = backend_ != nullptr && (!tracker_.idle() || server_status_ != 'I' || extended_open_);
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
  LOG_INFO("client=c%llu user=%s closed: %s", (unsigned long long)id(), user_.c_str(), reason);
  login_timer_.stop();
  end_cutover_wait();
  if (waiting_for_backend_ && waiting_pool_ != nullptr) waiting_pool_->cancel_wait(this);
  waiting_for_backend_ = false;
  if (backend_ != nullptr) {
    // A server in the middle of something is not reusable: stop its query and close it.
    bool clean = tracker_.idle() && server_status_ == 'I' && !extended_open_ && !session_pooling_;
    if (!tracker_.idle()) backend_->pool().send_cancel(*backend_);
    release_backend(clean);
  }
  client_->close_after_flush();
  host_.session_closed(this);
}

}  // namespace sw::session
