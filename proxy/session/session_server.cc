// Session: what the server sends back, and when the server goes back to the pool.
#include "common/bytes.h"
#include "common/log.h"
#include "session/session.h"
#include "wire/messages.h"
#include "wire/server_check.h"

namespace sw::session {

void Session::on_backend_readable(pool::Backend&) { read_server_messages(); }

void Session::read_server_messages() {
  while (backend_ != nullptr) {
    if (client_->over_high_water()) {
      backend_->connection().pause_reading();  // resumed by on_drained
      return;
    }
    auto result = wire::read_frame(backend_->connection().input(), wire::Sender::Server, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return;
    std::string violation = result.status == wire::FrameStatus::Error ? result.error : std::string();
    if (violation.empty()) {
      // Checked before anything of the message reaches the client.
      if (Status shape = server_check_.on_message(result.frame.type, result.frame.body); !shape)
        violation = shape.message;
    }
    if (!violation.empty()) {
      // A broken or hostile server: never reused, and the client is not left to parse its bytes.
      std::string shard = backend_->target().shard;
      LOG_WARN("client=c%llu server=s%llu shard=%s protocol violation by server, dropping it: %s",
               (unsigned long long)id(), (unsigned long long)backend_->id(), shard.c_str(),
               violation.c_str());
      release_backend(false);
      terminate(Status::server("08P01", "shard " + shard + " sent an invalid message: " + violation +
                                            "; the server connection was closed"));
      return;
    }
    pool::Backend* backend = backend_;
    if (!handle_server_message(result.frame)) return;
    backend->connection().consume(result.frame.size);
    if (retry_now_) {
      retry_now_ = false;
      retry_after_fence();
      return;
    }
    maybe_release_backend();
    if (backend_ == nullptr && phase_ == Phase::Ready && !client_->input().empty()) {
      read_client_messages();  // the client pipelined its next transaction already
    }
  }
}

// Returns false when the session dropped the server (and must stop reading it).
bool Session::handle_server_message(const wire::Frame& frame) {
  std::string due;
  auto outcome = tracker_.on_server_message(frame.type, &due);
  if (outcome.verdict == ResponseTracker::Verdict::Desync) {
    LOG_WARN("client=c%llu server=s%llu sent unexpected message '%c'; closing it", (unsigned long long)id(),
             (unsigned long long)backend_->id(), frame.type);
    release_backend(false);
    terminate(Status::server("08P01", "server sent an unexpected message; connection closed"));
    return false;
  }
  bool relay = outcome.verdict == ResponseTracker::Verdict::Relay;
  switch (frame.type) {
    case 'S':
      relay_parameter_status(frame.body, relay);
      relay = false;
      break;
    case 'E':
      if (auto fields = wire::decode_error_fields(frame.body)) {
        LOG_DEBUG("client=c%llu server error %.*s", (unsigned long long)id(),
                  static_cast<int>(fields->sqlstate.size()), fields->sqlstate.data());
        host_.traffic().count_backend_error(fields->sqlstate);
        if (fields->sqlstate == "SW001" && relay && on_fence_error(frame.body)) relay = false;
      }
      if (!queries_in_flight_.empty() && !outcome.completed) query_failed_ = true;
      break;
    case 'C':
      if (auto tag = wire::decode_command_complete(frame.body); tag && *tag == "ROLLBACK")
        state_.end_transaction(false);
      break;
    case 'Z':
      if (!frame.body.empty()) server_status_ = frame.body[0];
      if (outside_transaction_) {
        // This server ran a Parse/Describe batch outside the client's not-yet-started
        // transaction: the client is told its own transaction status.
        if (relay) {
          std::string ready;
          wire::encode_ready_for_query(ready, transaction_status_);
          to_client(ready);
          relay = false;
        }
      } else {
        transaction_status_ = server_status_;
      }
      if (outcome.finished.relay) {
        count_request_done();
        capturing_ = false;  // the first request got its answer: no retry from here on
        if (retry_pending_) {
          relay = false;
        } else {
          retried_ = false;
          // Nothing will replay the first request now; an idle client keeps no copy of it.
          first_request_.clear();
          release_if_large(first_request_, net::Connection::kIdleBufferKeep);
          release_if_large(held_, net::Connection::kIdleBufferKeep);
        }
      }
      break;
    default: break;
  }
  if (relay) to_client(whole(frame));
  if (!due.empty()) to_client(due);
  for (uint64_t failed : tracker_.failed_statements()) backend_->prepared.erase(failed);
  if (outcome.completed && outcome.finished.owed == Owed::Parse && frame.type == '1' &&
      outcome.finished.statement != 0)
    host_.statements().mark_validated(outcome.finished.statement);
  if (outcome.dropped_parse_failed && outcome.finished.relay)
    statements_.remove_id(outcome.finished.statement);
  tracker_.clear_failed_statements();
  if (outcome.completed && outcome.finished.owed == Owed::Query && outcome.finished.relay)
    on_query_finished(query_failed_);
  if (frame.type == 'Z') {
    if (server_status_ == 'I' && !outside_transaction_) state_.end_transaction(true);
    if (retry_pending_ && outcome.finished.relay) retry_now_ = true;
  }
  return true;
}

void Session::relay_parameter_status(std::string_view body, bool relay) {
  auto status = wire::decode_parameter_status(body);
  if (!status) return;
  backend_->set_parameter(status->name, status->value);
  if (!relay) return;
  auto it = client_parameters_.find(std::string(status->name));
  if (it != client_parameters_.end() && it->second == status->value) return;
  client_parameters_[std::string(status->name)] = std::string(status->value);
  std::string out;
  wire::encode_parameter_status(out, status->name, status->value);
  client_->write(out);
}

void Session::on_query_finished(bool failed) {
  query_failed_ = false;
  if (queries_in_flight_.empty()) return;
  auto facts = std::move(queries_in_flight_.front());
  queries_in_flight_.pop_front();
  if (failed || !facts) return;
  for (const auto& statement : facts->statements) {
    state_.on_statement(statement);
    if (statement.kind == parser::StatementKind::DiscardAll ||
        (statement.kind == parser::StatementKind::Deallocate &&
         statement.text.find("ALL") != std::string::npos)) {
      // The server dropped its prepared statements, shared ones included.
      backend_->prepared.clear();
      if (statement.kind == parser::StatementKind::DiscardAll) statements_.clear();
    }
  }
}

void Session::maybe_release_backend() {
  if (backend_ == nullptr) return;
  bool at_boundary = tracker_.idle() && server_status_ == 'I' && !extended_open_;
  if (!at_boundary) return;
  if (session_pooling_) {
    if (shutdown_pending_)
      terminate(Status::proxy("57P01", "terminating connection due to administrator command"));
    return;
  }
  backend_->applied_state = state_.signature();
  release_backend(true);
  if (shutdown_pending_)
    terminate(Status::proxy("57P01", "terminating connection due to administrator command"));
}

void Session::release_backend(bool clean) {
  pool::Backend* backend = backend_;
  backend_ = nullptr;
  outside_transaction_ = false;
  if (!clean) {
    tracker_.reset();
    queries_in_flight_.clear();
    extended_open_ = false;
    server_status_ = 'I';
    if (deferred_begin_.empty()) transaction_status_ = 'I';
  }
  backend->connection().resume_reading();
  backend->pool().release(backend, clean);
}

void Session::on_backend_lost(pool::Backend&, const Status& why) {
  backend_ = nullptr;
  tracker_.reset();
  queries_in_flight_.clear();
  LOG_WARN("client=c%llu user=%s lost its server: %s", (unsigned long long)id(), user_.c_str(),
           why.message.c_str());
  // The transaction died with the server; the client must not carry on as if it had not.
  terminate(Status::server("08006", why.message + "; the transaction in progress was lost"));
}

}  // namespace sw::session
