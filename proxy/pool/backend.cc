#include "pool/backend.h"

#include <utility>

#include "auth/md5.h"
#include "auth/scram.h"
#include "common/log.h"
#include "net/loop.h"
#include "net/tls.h"
#include "pool/pool.h"
#include "stats/snapshot.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/server_check.h"

namespace sw::pool {

std::string BackendTarget::key() const {
  return shard + "|" + host + "|" + std::to_string(port) + "|" + dbname + "|" + user + "|" + sslmode;
}

Backend::Backend(Pool& pool, uint64_t id, uint64_t now_ms)
    : created_ms(now_ms), connected_at_us(stats::wall_clock_us()), pool_(pool), id_(id) {}

Backend::~Backend() = default;

const BackendTarget& Backend::target() const { return pool_.target(); }

void Backend::start() {
  const BackendTarget& t = target();
  LOG_DEBUG("server=s%llu shard=%s connecting to %s:%d", (unsigned long long)id_, t.shard.c_str(),
            t.host.c_str(), t.port);
  connection_ = net::Connection::connect(pool_.loop(), t.host, t.port, this, id_);
}

void Backend::on_connected(net::Connection&, const Status& status) {
  if (!status) {
    fail_login(status);
    return;
  }
  if (target().sslmode == "disable" || target().sslmode == "allow") {
    send_startup();
    return;
  }
  state_ = State::Negotiating;
  connection_->write(wire::encode_ssl_request());
}

void Backend::send_startup() {
  state_ = State::LoggingIn;
  const BackendTarget& t = target();
  connection_->write(wire::encode_startup_message(
      {{"user", t.user}, {"database", t.dbname}, {"application_name", pool_.settings().application_name}}));
}

void Backend::on_readable(net::Connection& connection) {
  switch (state_) {
    case State::Negotiating: read_ssl_answer(); break;
    case State::LoggingIn: read_login(); break;
    case State::Active:
      if (user_ != nullptr) user_->on_backend_readable(*this);
      break;
    case State::Idle:
      // An idle server may only say asynchronous things (a notice, a parameter change).
      // Anything else means it is out of sync: close it.
      while (!connection.input().empty()) {
        auto frame = wire::read_frame(connection.input(), wire::Sender::Server, {});
        if (frame.status != wire::FrameStatus::Complete) break;
        char type = frame.frame.type;
        if (type == 'S') {
          if (auto p = wire::decode_parameter_status(frame.frame.body)) set_parameter(p->name, p->value);
        } else if (type != 'N' && type != 'A') {
          LOG_WARN("server=s%llu sent '%c' while idle; closing it", (unsigned long long)id_, type);
          close();
          pool_.on_backend_closed(this);
          return;
        }
        connection.consume(frame.frame.size);
      }
      break;
    case State::Closed:  // after Terminate: what the server still sends is nobody's
      connection.consume(connection.input().size());
      break;
    case State::Connecting: break;
  }
}

void Backend::read_ssl_answer() {
  std::string_view input = connection_->input();
  char answer = input[0];
  if (input.size() > 1) {
    // Bytes after the one-byte answer were not protected by TLS (CVE-2021-23222 class).
    fail_login(Status::server("08P01", "server sent unencrypted data after its SSL response"));
    return;
  }
  connection_->consume(1);
  if (answer == 'S') {
    Status error;
    auto context = pool_.tls_context(&error);
    if (!context) {
      fail_login(error);
      return;
    }
    Status started = connection_->start_tls(context, target().host);
    if (!started) {
      fail_login(started);
      return;
    }
    send_startup();
  } else if (answer == 'N' && target().sslmode == "prefer") {
    send_startup();
  } else if (answer == 'N') {
    fail_login(Status::server("08001", "server does not support SSL, but sslmode=" + target().sslmode));
  } else {
    fail_login(Status::server("08P01", "invalid response to SSL negotiation"));
  }
}

void Backend::read_login() {
  wire::Limits limits;
  limits.max_message_size = pool_.settings().max_message_size;
  while (state_ == State::LoggingIn) {
    auto result = wire::read_frame(connection_->input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      fail_login(Status::server("08P01", result.error));
      return;
    }
    Status status = handle_login_message(result.frame.type, result.frame.body);
    connection_->consume(result.frame.size);
    if (!status) {
      fail_login(status);
      return;
    }
  }
  // Handed over only now that the login's last message is consumed: the next reader of this
  // connection must start at the first answer to its own request.
  if (state_ == State::Idle) pool_.on_login_done(this);
}

Status Backend::handle_login_message(char type, std::string_view body) {
  switch (type) {
    case 'R': return handle_auth(body);
    case 'S': {
      auto p = wire::decode_parameter_status(body);
      if (!p) return p.status();
      set_parameter(p->name, p->value);
      return Status::ok();
    }
    case 'K': {
      auto key = wire::decode_backend_key_data(body);
      if (!key) return key.status();
      server_key_ = *key;
      return Status::ok();
    }
    case 'N': return Status::ok();
    case 'E': {
      auto fields = wire::decode_error_fields(body);
      if (!fields) return fields.status();
      // A refusal without a well-formed SQLSTATE still refuses; the client sees a connection failure.
      if (!wire::is_sqlstate(fields->sqlstate))
        return Status::server(
            "08006", "server refused login without a valid SQLSTATE: " + std::string(fields->message));
      return Status::server(std::string(fields->sqlstate),
                            "server refused login: " + std::string(fields->message));
    }
    case 'Z': {
      auto status = wire::decode_ready_for_query(body);
      if (!status) return status.status();
      scram_.reset();
      state_ = State::Idle;
      return Status::ok();
    }
    default: return Status::server("08P01", std::string("unexpected message '") + type + "' during login");
  }
}

Status Backend::handle_auth(std::string_view body) {
  auto request = wire::decode_authentication(body);
  if (!request) return request.status();
  const BackendTarget& t = target();
  std::string out;
  const auto code = static_cast<wire::AuthRequest>(request->code);
  bool asks_password = code == wire::AuthRequest::CleartextPassword ||
                       code == wire::AuthRequest::Md5Password || code == wire::AuthRequest::Sasl;
  if (asks_password && t.password.empty()) {
    // Only a trust user without a password gets here; an empty password would only be refused.
    return Status::config("the server asks for a password and user \"" + t.user +
                          "\" has none (auth.users, or a user and password in the shard's dsn)");
  }
  switch (code) {
    case wire::AuthRequest::Ok: return Status::ok();
    case wire::AuthRequest::CleartextPassword: wire::encode_password_message(out, t.password); break;
    case wire::AuthRequest::Md5Password:
      wire::encode_password_message(out,
                                    auth::md5_password_response(t.user, t.password, request->data.data()));
      break;
    case wire::AuthRequest::Sasl: {
      if (request->data.find("SCRAM-SHA-256") == std::string_view::npos)
        return Status::server("08P01", "server offers no supported SASL mechanism");
      scram_ = std::make_unique<auth::ScramClient>(t.password, auth::random_nonce());
      wire::encode_sasl_initial_response(out, "SCRAM-SHA-256", scram_->client_first());
      break;
    }
    case wire::AuthRequest::SaslContinue: {
      if (!scram_) return Status::server("08P01", "SASL continue without SASL start");
      auto final_message = scram_->on_server_first(request->data);
      if (!final_message) return final_message.status();
      wire::encode_sasl_response(out, *final_message);
      break;
    }
    case wire::AuthRequest::SaslFinal: {
      if (!scram_) return Status::server("08P01", "SASL final without SASL start");
      return scram_->on_server_final(request->data);
    }
    default:
      return Status::server(
          "08P01", "server requested unsupported authentication method " + std::to_string(request->code));
  }
  connection_->write(out);
  return Status::ok();
}

void Backend::fail_login(const Status& why) {
  if (state_ == State::Closed) return;
  LOG_WARN("server=s%llu shard=%s login failed: %s", (unsigned long long)id_, target().shard.c_str(),
           why.message.c_str());
  close();
  pool_.on_login_failed(this, why);
}

void Backend::set_parameter(std::string_view name, std::string_view value) {
  parameters_[std::string(name)] = std::string(value);
}

void Backend::attach(BackendUser* user, size_t slot) {
  user_ = user;
  user_slot_ = slot;
  attached_at_us = stats::wall_clock_us();
  state_ = State::Active;
}

void Backend::detach() {
  user_ = nullptr;
  if (state_ == State::Active) state_ = State::Idle;
}

void Backend::close() {
  if (state_ == State::Closed) return;
  const bool logged_in = state_ == State::Idle || state_ == State::Active;
  state_ = State::Closed;
  if (!connection_ || !connection_->is_open()) return;
  std::string bye;
  wire::encode_terminate(bye);
  connection_->write(bye);
  if (!logged_in) {
    connection_->close_after_flush();
    return;
  }
  awaiting_hangup_ = true;
  connection_->resume_reading();  // a session may have paused it; the hang-up must be seen
}

void Backend::on_closed(net::Connection&, const Status& why) {
  State was = state_;
  state_ = State::Closed;
  if (std::exchange(awaiting_hangup_, false)) {  // the hang-up close() waited for
    pool_.on_backend_closed(this);
    return;
  }
  if (was == State::Connecting || was == State::Negotiating || was == State::LoggingIn) {
    LOG_WARN("server=s%llu shard=%s closed during login: %s", (unsigned long long)id_, target().shard.c_str(),
             why.message.c_str());
    pool_.on_login_failed(this, Status::server("08006", "server closed the connection during login"));
    return;
  }
  LOG_INFO("server=s%llu shard=%s connection lost: %s", (unsigned long long)id_, target().shard.c_str(),
           why.message.c_str());
  if (was == State::Active && user_ != nullptr) {
    BackendUser* user = user_;
    user_ = nullptr;
    user->on_backend_lost(
        *this, Status::server("08006", "server connection to shard " + target().shard + " was lost"));
  }
  pool_.on_backend_closed(this);
}

void Backend::on_drained(net::Connection&) {
  if (user_ != nullptr) user_->on_backend_drained(*this);
}

}  // namespace sw::pool
