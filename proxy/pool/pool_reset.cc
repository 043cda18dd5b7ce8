// Pool: a server whose session-pooled client left is reset (pool.server_reset_query, DISCARD ALL
// by default) and reused rather than closed. The pool reads the reset's answers itself; an error,
// a status other than idle, or anything it cannot read closes the server instead.
#include "common/log.h"
#include "pool/pool.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::pool {

void Pool::release_after_reset(Backend* backend, const std::string& reset_query) {
  if (reset_query.empty() || retired_ || !backend->connection().input().empty()) {
    release(backend, false);
    return;
  }
  backend->attach(this);
  resetting_[backend] = false;
  std::string out;
  wire::encode_query(out, reset_query);
  backend->connection().write(out);
}

void Pool::on_backend_readable(Backend& backend) {
  auto it = resetting_.find(&backend);
  if (it == resetting_.end()) return;
  wire::Limits limits;
  limits.max_message_size = settings_.max_message_size;
  net::Connection& connection = backend.connection();
  while (true) {
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      finish_reset(&backend, false);
      return;
    }
    const char type = result.frame.type;
    const char status = type == 'Z' && !result.frame.body.empty() ? result.frame.body[0] : '\0';
    if (type == 'E') it->second = true;
    if (type == 'S') {
      if (auto parameter = wire::decode_parameter_status(result.frame.body))
        backend.set_parameter(parameter->name, parameter->value);
    }
    connection.consume(result.frame.size);
    if (type == 'Z') {
      finish_reset(&backend, !it->second && status == 'I');
      return;
    }
  }
}

void Pool::on_backend_lost(Backend& backend, const Status&) { resetting_.erase(&backend); }

void Pool::finish_reset(Backend* backend, bool ok) {
  resetting_.erase(backend);
  if (ok) {
    // What the last client set or prepared is gone; the next one brings its own settings.
    backend->applied_state = kStateAfterReset;
    backend->prepared.clear();
  } else {
    LOG_INFO("server=s%llu pool.server_reset_query failed; closing it", (unsigned long long)backend->id());
  }
  release(backend, ok);
}

}  // namespace sw::pool
