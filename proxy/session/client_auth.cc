#include "session/client_auth.h"

#include <map>
#include <mutex>

#include "auth/md5.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Seeds the mock SCRAM salt of unknown users: stable for a user within this process (so
// retries look like a real user's), unpredictable from outside.
const std::string& mock_salt_secret() {
  static const std::string secret = auth::random_nonce(32);
  return secret;
}

// The verifier for a user configured with a cleartext password, derived once per process
// (PBKDF2 is deliberately slow; a login storm should not pay it per connection).
auth::ScramSecret secret_for(const config::User& user) {
  auto parsed = auth::parse_scram_secret(user.password);
  if (parsed) return *parsed;
  static std::mutex mutex;
  static std::map<std::string, auth::ScramSecret> derived;
  std::string key = user.name + '\0' + user.password;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = derived.find(key);
  if (it == derived.end())
    it = derived.emplace(key, auth::make_scram_secret(user.password, auth::random_nonce(16), 4096)).first;
  return it->second;
}

}  // namespace

ClientAuth::ClientAuth(config::AuthMethod method, const config::User* user, std::string user_name,
                       std::string server_nonce)
    : method_(method),
      user_(user ? std::optional<config::User>(*user) : std::nullopt),
      user_name_(std::move(user_name)),
      server_nonce_(std::move(server_nonce)) {}

Status ClientAuth::failure(std::string_view user_name) {
  return Status::client("28P01",
                        "password authentication failed for user \"" + std::string(user_name) + "\"");
}

std::string ClientAuth::begin() {
  std::string out;
  switch (method_) {
    case config::AuthMethod::Trust: break;
    case config::AuthMethod::Md5:
      auth::random_bytes(salt_, sizeof salt_);
      wire::encode_auth_md5(out, salt_);
      break;
    case config::AuthMethod::ScramSha256: wire::encode_auth_sasl(out, {"SCRAM-SHA-256"}); break;
  }
  return out;
}

Result<bool> ClientAuth::on_message(std::string_view body, std::string& out) {
  switch (method_) {
    case config::AuthMethod::Trust: return Status::client("08P01", "unexpected password message");
    case config::AuthMethod::Md5: return on_md5(body);
    case config::AuthMethod::ScramSha256: return on_scram(body, out);
  }
  return failure(user_name_);
}

Result<bool> ClientAuth::on_md5(std::string_view body) {
  auto password = wire::decode_password_message(body);
  if (!password) return password.status();
  // Unknown users are checked against a password nobody has, to take the same path.
  std::string expected = auth::md5_password_response(
      user_name_, user_ ? std::string_view(user_->password) : std::string_view("\x01unknown"), salt_);
  if (user_ && auth::constant_time_equal(*password, expected)) return true;
  return failure(user_name_);
}

Result<bool> ClientAuth::on_scram(std::string_view body, std::string& out) {
  if (scram_step_ == 0) {
    auto initial = wire::decode_sasl_initial_response(body);
    if (!initial) return initial.status();
    if (initial->mechanism != "SCRAM-SHA-256")
      return Status::client("28000", "client selected an invalid SASL authentication mechanism");
    if (user_) secret_ = std::make_unique<auth::ScramSecret>(secret_for(*user_));
    scram_ =
        std::make_unique<auth::ScramServer>(secret_.get(), mock_salt_secret() + user_name_,
                                            server_nonce_.empty() ? auth::random_nonce() : server_nonce_);
    auto server_first = scram_->on_client_first(initial->data);
    if (!server_first) return server_first.status();
    wire::encode_auth_sasl_continue(out, *server_first);
    scram_step_ = 1;
    return false;
  }
  if (scram_step_ == 1) {
    auto server_final = scram_->on_client_final(body);
    if (!server_final) {
      if (server_final.status().sqlstate == "28P01") return failure(user_name_);
      return server_final.status();
    }
    wire::encode_auth_sasl_final(out, *server_final);
    scram_step_ = 2;
    return true;
  }
  return Status::client("08P01", "unexpected SASL message after authentication");
}

}  // namespace sw::session
