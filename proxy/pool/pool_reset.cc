// Pool: a server whose session-pooled client left is reset (pool.server_reset_query, DISCARD ALL
// by default) and reused rather than closed. The pool reads the reset's answers itself; an error,
// a status other than idle, or anything it cannot read closes the server instead; so does a
// library a client loaded (LOAD), which no reset unloads.
#include "common/log.h"
#include "pool/pool.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::pool {
namespace {

// Whether `query` drops every prepared statement of the server (DISCARD ALL, DEALLOCATE [PREPARE]
// ALL, in any letter case and spacing). Any other reset (a ROLLBACK) leaves them prepared.
bool drops_prepared_statements(const std::string& query) {
  std::string words;
  for (char c : query) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';';
    if (space) {
      if (!words.empty() && words.back() != ' ') words += ' ';
    } else {
      words += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  return words.find("discard all") != std::string::npos ||
         words.find("deallocate all") != std::string::npos ||
         words.find("deallocate prepare all") != std::string::npos;
}

}  // namespace

void Pool::release_after_reset(Backend* backend, const std::string& reset_query) {
  if (backend->library_loaded) {
    release(backend, true);  // closed: no reset would make its session a fresh one
    return;
  }
  if (reset_query.empty() || retired_ || !backend->connection().input().empty()) {
    release(backend, false);
    return;
  }
  backend->attach(this);
  resetting_[backend] = Resetting{false, drops_prepared_statements(reset_query)};
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
      finish_reset(&backend, false, false);
      return;
    }
    const char type = result.frame.type;
    const char status = type == 'Z' ? wire::ready_for_query_status(result.frame.body) : '\0';
    if (type == 'E') it->second.failed = true;
    if (type == 'S') {
      if (auto parameter = wire::decode_parameter_status(result.frame.body))
        backend.set_parameter(parameter->name, parameter->value);
    }
    connection.consume(result.frame.size);
    if (type == 'Z') {
      finish_reset(&backend, !it->second.failed && status == 'I', it->second.drops_statements);
      return;
    }
  }
}

void Pool::on_backend_lost(Backend& backend, const Status&) { resetting_.erase(&backend); }

void Pool::finish_reset(Backend* backend, bool ok, bool drops_statements) {
  resetting_.erase(backend);
  if (ok) {
    // What the last client set is gone (or unknown); the next one brings its own settings. The
    // proxy's statements stay prepared unless the reset dropped them.
    backend->applied_state = kStateAfterReset;
    if (drops_statements) {
      backend->prepared.clear();
      backend->sql_prepared.clear();
    }
  } else {
    LOG_INFO("server=s%llu pool.server_reset_query failed; closing it", (unsigned long long)backend->id());
  }
  release(backend, ok);
}

}  // namespace sw::pool
