// Session: the startup and authentication phases.
#include <strings.h>

#include "common/log.h"
#include "config/config.h"
#include "net/tls.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

void Session::read_startup() {
  while (phase_ == Phase::Startup) {
    auto result = wire::read_startup_packet(client_->input());
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      fail_login(Status::client("08P01", result.error));
      return;
    }
    auto packet = wire::parse_startup_packet(result.frame.body);
    client_->consume(result.frame.size);
    if (!packet) {
      fail_login(packet.status());
      return;
    }
    handle_startup_packet(*packet);
  }
}

void Session::handle_startup_packet(const wire::StartupPacket& packet) {
  switch (packet.kind) {
    case wire::StartupKind::CancelRequest:
      host_.forward_cancel(packet.cancel);
      close("cancel request handled");
      return;
    case wire::StartupKind::GssEncRequest: client_->write("N"); return;
    case wire::StartupKind::SslRequest: {
      if (tls_done_) {
        fail_login(Status::client("08P01", "SSL request after SSL was already negotiated"));
        return;
      }
      // Anything sent along with the request would bypass encryption (CVE-2021-23214).
      if (!client_->input().empty()) {
        fail_login(Status::client("08P01", "received unencrypted data after SSL request"));
        return;
      }
      auto tls = host_.server_tls();
      client_->write(tls ? "S" : "N");
      if (tls) {
        client_->flush();
        Status started = client_->start_tls(tls);
        if (!started) {
          fail_login(started);
          return;
        }
        tls_done_ = true;
      }
      return;
    }
    case wire::StartupKind::Startup: break;
  }

  user_ = std::string(packet.param("user"));
  database_ = std::string(packet.param("database"));
  if (database_.empty()) database_ = user_;
  if (!packet.param("replication").empty() && packet.param("replication") != "false") {
    fail_login(Status::client("0A000", "replication connections are not supported by shardwire"));
    return;
  }
  for (const auto& [name, value] : packet.params) {
    if (SessionState::is_protected(name) ||
        (name == "options" && value.find("session_replication_role") != std::string::npos)) {
      fail_login(Status::client("42501", "parameter \"" + name + "\" cannot be set through shardwire"));
      return;
    }
  }
  state_.set_startup(packet.params);
  for (const auto& [name, value] : packet.params) {
    if (name != "user" && name != "database" && name != "options") client_parameters_[name] = value;
  }

  const config::Config& config = host_.config();
  auth_ = std::make_unique<ClientAuth>(config.auth.method, config.auth.find(user_), user_);
  std::string request = auth_->begin();
  phase_ = Phase::Authenticating;
  if (request.empty() && config.auth.find(user_) == nullptr) {
    fail_login(ClientAuth::failure(user_));  // trust admits configured users only
    return;
  }
  if (request.empty()) {
    after_authentication();
    return;
  }
  client_->write(request);
}

void Session::read_auth() {
  while (phase_ == Phase::Authenticating) {
    auto result = wire::read_frame(client_->input(), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      fail_login(Status::client("08P01", result.error));
      return;
    }
    if (result.frame.type != 'p') {
      fail_login(Status::client(
          "08P01", std::string("expected password response, got message type '") + result.frame.type + "'"));
      return;
    }
    std::string reply;
    auto done = auth_->on_message(result.frame.body, reply);
    client_->consume(result.frame.size);
    if (!done) {
      fail_login(done.status());
      return;
    }
    client_->write(reply);
    if (*done) after_authentication();
  }
}

void Session::after_authentication() {
  auth_.reset();  // the exchange is over; a SCRAM state would otherwise stay with every client
  const config::Config& config = host_.config();
  if (database_ == config.admin.database) {
    start_admin();
    return;
  }
  // An unknown database fails exactly like a wrong password: nothing about what exists leaks.
  if (database_ != config.database) {
    LOG_INFO("client=c%llu user=%s login refused: unknown database", (unsigned long long)id(), user_.c_str());
    fail_login(ClientAuth::failure(user_));
    return;
  }
  Status error;
  pool_ = host_.pool_for(user_, -1, &error);
  if (pool_ == nullptr) {
    fail_login(error);
    return;
  }
  std::string ok;
  wire::encode_auth_ok(ok);
  client_->write(ok);
  if (pool_->has_server_parameters()) {
    finish_login();
    return;
  }
  // New clients are told the server's parameters; the first login to a pool fetches them.
  phase_ = Phase::AwaitingServerParameters;
  waiting_for_backend_ = true;
  waiting_pool_ = pool_;
  if (pool::Backend* backend = pool_->acquire(this)) on_backend_ready(backend);
}

void Session::finish_login() {
  phase_ = Phase::Ready;
  host_.traffic().count_login(stats::LoginResult::Ok);
  login_timer_.stop();
  cancel_key_ = host_.register_cancel(this);
  cancel_registered_ = true;
  std::map<std::string, std::string> told = pool_->server_parameters();
  for (auto& [name, value] : told) {
    for (const auto& [client_name, client_value] : client_parameters_) {
      if (strcasecmp(client_name.c_str(), name.c_str()) == 0) value = client_value;
    }
  }
  client_parameters_ = told;
  std::string out;
  for (const auto& [name, value] : client_parameters_) wire::encode_parameter_status(out, name, value);
  wire::encode_backend_key_data(out, cancel_key_);
  wire::encode_ready_for_query(out, 'I');
  client_->write(out);
  LOG_INFO("client=c%llu user=%s database=%s logged in from %s%s", (unsigned long long)id(), user_.c_str(),
           database_.c_str(), client_->peer().c_str(), tls_done_ ? " (TLS)" : "");
  if (!client_->input().empty()) read_client_messages();
}

void Session::fail_login(const Status& why) {
  if (phase_ == Phase::Closed) return;
  if (phase_ != Phase::Startup) {
    stats::LoginResult result = why.sqlstate == "28P01"   ? stats::LoginResult::BadCredentials
                                : why.sqlstate == "28000" ? stats::LoginResult::NotAllowed
                                                          : stats::LoginResult::Error;
    host_.traffic().count_login(result);
  }
  LOG_INFO("client=c%llu user=%s login failed: %s", (unsigned long long)id(), user_.c_str(),
           why.message.c_str());
  terminate(why);
}

}  // namespace sw::session
