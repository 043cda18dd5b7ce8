// The proxy authenticating a client (trust, md5, scram-sha-256) against auth.users. Pure: the
// session feeds it PasswordMessage/SASL bodies and sends what it returns. An unknown user runs
// the same exchange as a known one and fails the same way, so neither the outcome nor the
// message reveals which users exist.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/scram.h"
#include "common/status.h"
#include "config/config.h"

namespace sw::session {

class ClientAuth {
 public:
  // `server_nonce`: the SCRAM server nonce; empty (always, outside tests and fuzzing) draws a
  // random one per login.
  ClientAuth(config::AuthMethod method, const config::User* user, std::string user_name,
             std::string server_nonce = {});

  // The first authentication request to send; empty when no exchange is needed (trust).
  std::string begin();
  // One 'p' message body. Returns true when authenticated, false when more messages are needed
  // (the reply is appended to `out`); a failure is 28P01 with the same message for every cause.
  Result<bool> on_message(std::string_view body, std::string& out);

  // The message every failed login gets.
  static Status failure(std::string_view user_name);

 private:
  Result<bool> on_md5(std::string_view body);
  Result<bool> on_scram(std::string_view body, std::string& out);

  config::AuthMethod method_;
  // A copy: a reload may replace the config (and free its users) while a login is under way.
  std::optional<config::User> user_;
  std::string user_name_;
  std::string server_nonce_;
  char salt_[4] = {0, 0, 0, 0};
  std::unique_ptr<auth::ScramSecret> secret_;
  std::unique_ptr<auth::ScramServer> scram_;
  int scram_step_ = 0;
};

}  // namespace sw::session
