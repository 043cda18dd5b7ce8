// Session: the startup and authentication phases.
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "common/log.h"
#include "config/config.h"
#include "net/tls.h"
#include "session/session.h"
#include "wire/messages.h"
#include "wire/startup.h"

namespace sw::session {
namespace {

// The protected setting a startup `options` string mentions, in any letter case (GUC names are
// case-insensitive, so "-c Session_Replication_Role=replica" sets it too), or "".
std::string protected_setting_in_options(std::string_view options) {
  std::string lowered(options);
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* name : {"session_replication_role", "shardwire."}) {
    if (lowered.find(name) != std::string::npos) return name;
  }
  return {};
}

// A Terminate message ('X', length 4). Sent before any startup packet (a client ending a
// connection it never used), PostgreSQL reads its first four bytes as an invalid length and closes
// without a word (COMMERROR): so does the proxy.
constexpr std::string_view kTerminate("X\0\0\0\4", 5);

}  // namespace

void Session::read_startup() {
  while (phase_ == Phase::Startup) {
    const std::string_view input = client_->input();
    if (!input.empty() && kTerminate.substr(0, input.size()) == input.substr(0, 5)) {
      if (input.size() < kTerminate.size()) return;  // the rest of it is on its way
      close("client sent Terminate before its startup packet");
      return;
    }
    auto result = wire::read_startup_packet(input);
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
      // Closed once the cancel reached the server: a client (libpq, pgjdbc's statement timeout)
      // that waits for the close knows its next statement cannot be hit by it.
      client_->pause_reading();
      host_.forward_cancel(packet.cancel, [this, alive = std::weak_ptr<int>(alive_)] {
        if (!alive.expired()) close("cancel request handled");
      });
      return;
    case wire::StartupKind::GssEncRequest: client_->write("N"); return;
    case wire::StartupKind::SslRequest: negotiate_tls(); return;
    case wire::StartupKind::Startup: accept_startup(packet); return;
  }
}

void Session::negotiate_tls() {
  if (login_.tls_done) {
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
  if (!tls) return;
  client_->flush();
  Status started = client_->start_tls(tls);
  if (!started) {
    fail_login(started);
    return;
  }
  login_.tls_done = true;
}

void Session::accept_startup(const wire::StartupPacket& packet) {
  // As PostgreSQL: the answer goes first, then the login continues at protocol 3.0.
  if (packet.needs_protocol_negotiation()) {
    client_->write(wire::encode_negotiate_protocol_version(packet.protocol_options));
  }
  profile_.user = std::string(packet.param("user"));
  profile_.database = std::string(packet.param("database"));
  if (profile_.database.empty()) profile_.database = profile_.user;
  if (!packet.param("replication").empty() && packet.param("replication") != "false") {
    fail_login(Status::client("0A000", "replication connections are not supported by shardwire"));
    return;
  }
  for (const auto& [name, value] : packet.params) {
    if (SessionState::is_protected(name)) {
      fail_login(Status::client("42501", "parameter \"" + name + "\" cannot be set through shardwire"));
      return;
    }
    if (std::string setting = name == "options" ? protected_setting_in_options(value) : "";
        !setting.empty()) {
      fail_login(
          Status::client("42501", "parameter \"options\" cannot set \"" + setting + "\" through shardwire"));
      return;
    }
  }
  profile_.settings.set_startup(packet.params);
  for (const auto& [name, value] : packet.params) {
    if (name != "user" && name != "database" && name != "options") profile_.parameters[name] = value;
  }

  const config::Config& config = host_.config();
  login_.auth =
      std::make_unique<ClientAuth>(config.auth.method, config.auth.find(profile_.user), profile_.user);
  std::string request = login_.auth->begin();
  phase_ = Phase::Authenticating;
  if (request.empty() && config.auth.find(profile_.user) == nullptr) {
    fail_login(ClientAuth::failure(profile_.user));  // trust admits configured users only
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
    auto done = login_.auth->on_message(result.frame.body, reply);
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
  login_.auth.reset();  // the exchange is over; a SCRAM state would otherwise stay with every client
  const config::Config& config = host_.config();
  if (profile_.database == config.admin.database) {
    start_admin();
    return;
  }
  // As PostgreSQL, the database is checked after authentication: only a client that proved who
  // it is learns that a name is not served, and it learns it with PostgreSQL's 3D000.
  if (profile_.database != config.database) {
    fail_login(Status::client("3D000", "database \"" + profile_.database + "\" does not exist"));
    return;
  }
  Status error;
  pools_.login = host_.pool_for(profile_.user, -1, &error);
  if (pools_.login == nullptr) {
    fail_login(error);
    return;
  }
  std::string ok;
  wire::encode_auth_ok(ok);
  client_->write(ok);
  if (pools_.login->has_server_parameters()) {
    if (!startup_needs_probe()) {
      finish_login();
      return;
    }
    // A client with these startup settings was probed already: no server is needed (a login
    // must not wait while every server is busy or pinned).
    if (const auto* probed = pools_.login->probed_parameters(startup_key())) {
      finish_login(probed);
      return;
    }
  }
  // New clients are told the server's parameters; the first login to a pool fetches them. A
  // client with startup settings is told what a server reports once they are applied
  // (probe_startup_settings): PostgreSQL's spelling of each value (client_encoding UTF8 for utf-8).
  phase_ = Phase::AwaitingServerParameters;
  set_request_state(RequestState::WaitingForServer);
  if (pool::Backend* backend = legs_.wait_for(*pools_.login, -1, 0)) on_backend_ready(backend);
}

// Does the client set a reported parameter whose value PostgreSQL spells its own way, to a value
// other than the one a server reports by default? (application_name and the like are reported as
// sent: no server is needed to know them.)
bool Session::startup_needs_probe() const {
  static constexpr const char* kRespelled[] = {"client_encoding", "datestyle", "intervalstyle", "timezone"};
  const auto& reported = pools_.login->server_parameters();
  for (const auto& setting : profile_.settings.startup_values()) {
    for (const char* respelled : kRespelled) {
      if (setting.first != respelled) continue;
      auto same = std::find_if(reported.begin(), reported.end(), [&](const auto& parameter) {
        return strcasecmp(parameter.first.c_str(), respelled) == 0 && parameter.second == setting.second;
      });
      if (same == reported.end()) return true;
    }
  }
  return false;
}

// A server of the login pool runs the client's startup settings (attach's prologue); what it
// reports then is what the client is told.
void Session::probe_startup_settings(pool::Backend* backend) {
  attach(backend);
  if (txn_.leg.tracker.idle()) end_startup_probe();  // it had them applied already
}

// The client's startup settings as one key (names and values cannot hold a NUL).
std::string Session::startup_key() const {
  std::string key;
  for (const auto& [name, value] : profile_.settings.startup_values()) {
    key.append(name).push_back('\0');
    key.append(value).push_back('\0');
  }
  return key;
}

void Session::end_startup_probe() {
  std::map<std::string, std::string> reported = active_server().parameters();
  pools_.login->remember_probed_parameters(startup_key(), reported);
  active_server().applied_state = profile_.settings.signature();
  release_backend(true);
  finish_login(&reported);
}

void Session::finish_login(const std::map<std::string, std::string>* reported) {
  phase_ = Phase::Ready;
  host_.traffic().count_login(stats::LoginResult::Ok);
  login_.timer.stop();
  login_.cancel_key = host_.register_cancel(this);
  login_.cancel_registered = true;
  std::map<std::string, std::string> told = reported ? *reported : pools_.login->server_parameters();
  if (reported == nullptr) {
    for (auto& [name, value] : told) {
      for (const auto& [client_name, client_value] : profile_.parameters) {
        if (strcasecmp(client_name.c_str(), name.c_str()) == 0) value = client_value;
      }
    }
  }
  profile_.parameters = told;
  std::string out;
  for (const auto& [name, value] : profile_.parameters) wire::encode_parameter_status(out, name, value);
  wire::encode_backend_key_data(out, login_.cancel_key);
  wire::encode_ready_for_query(out, 'I');
  client_->write(out);
  LOG_INFO("client=c%llu user=%s database=%s logged in from %s%s", (unsigned long long)id(),
           profile_.user.c_str(), profile_.database.c_str(), client_->peer().c_str(),
           login_.tls_done ? " (TLS)" : "");
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
  LOG_INFO("client=c%llu user=%s login failed: %s", (unsigned long long)id(), profile_.user.c_str(),
           why.message.c_str());
  terminate(why);
}

}  // namespace sw::session
