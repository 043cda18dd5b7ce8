// Session: the admin console. After login the client talks to the host's Console instead of a
// server: simple Query only, one command per query, answers end with ReadyForQuery 'I'.
#include <algorithm>

#include "common/log.h"
#include "config/config.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {

void Session::start_admin() {
  const config::Config& config = host_.config();
  const auto& admins = config.admin.users;
  if (std::find(admins.begin(), admins.end(), profile_.user) == admins.end()) {
    LOG_WARN("client=c%llu user=%s refused: not an admin user", (unsigned long long)id(),
             profile_.user.c_str());
    fail_login(Status::client("28000", "user \"" + profile_.user + "\" may not use the admin console \"" +
                                           config.admin.database + "\" (it is not in admin.users)"));
    return;
  }
  mode_.admin = true;
  phase_ = Phase::Ready;
  login_.timer.stop();
  host_.traffic().count_login(stats::LoginResult::Ok);
  std::string out;
  wire::encode_auth_ok(out);
  // What psql needs to know about the "server" it talks to.
  profile_.parameters["server_version"] = "15.0 (shardwire " SHARDWIRE_VERSION " admin console)";
  profile_.parameters["server_encoding"] = "UTF8";
  profile_.parameters["client_encoding"] = "UTF8";
  profile_.parameters["DateStyle"] = "ISO";
  profile_.parameters["integer_datetimes"] = "on";
  profile_.parameters["standard_conforming_strings"] = "on";
  for (const auto& [name, value] : profile_.parameters) wire::encode_parameter_status(out, name, value);
  wire::encode_ready_for_query(out, 'I');
  client_->write(out);
  LOG_INFO("client=c%llu user=%s admin console login from %s", (unsigned long long)id(),
           profile_.user.c_str(), client_->peer().c_str());
  if (!client_->input().empty()) read_admin_messages();
}

void Session::read_admin_messages() {
  while (phase_ == Phase::Ready && !mode_.admin_busy) {
    auto result = wire::read_frame(client_->input(), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      terminate(Status::client("08P01", result.error));
      return;
    }
    const wire::Frame& frame = result.frame;
    std::string out;
    switch (frame.type) {
      case 'X': close("client sent Terminate"); return;
      case 'Q': {
        auto sql = wire::decode_query(frame.body);
        if (!sql) {
          terminate(sql.status());
          return;
        }
        std::string text(*sql);
        client_->consume(frame.size);
        mode_.admin_busy = true;
        LOG_INFO("client=c%llu admin command: %.200s", (unsigned long long)id(), text.c_str());
        host_.admin_command(text, [this, alive = std::weak_ptr<int>(alive_)](std::string answer) {
          if (!alive.lock() || phase_ == Phase::Closed) return;
          wire::encode_ready_for_query(answer, 'I');
          client_->write(answer);
          mode_.admin_busy = false;
          read_admin_messages();
        });
        continue;
      }
      case 'S': wire::encode_ready_for_query(out, 'I'); break;
      case 'H': break;
      default:
        // The extended protocol: one error, then everything up to Sync is dropped.
        if (!request_.skip_until_sync) {
          wire::encode_error(out, "ERROR", "08P01",
                             "the admin console accepts only the simple query protocol", {},
                             "use psql, or PQexec without parameters");
        }
        request_.skip_until_sync = true;
        break;
    }
    if (frame.type == 'S') request_.skip_until_sync = false;
    client_->consume(frame.size);
    client_->write(out);
  }
}

}  // namespace sw::session
