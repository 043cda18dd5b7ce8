// Session: relaying client messages to a pooled server and the server's answers back.
#include <utility>

#include "common/log.h"
#include "config/config.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// Client input buffered beyond this while no server can take it stops further reads.
constexpr size_t kMaxBufferedClientInput = 1024 * 1024;

bool is_extended(char type) {
  return type == 'P' || type == 'B' || type == 'D' || type == 'E' || type == 'C' || type == 'H';
}

}  // namespace

std::string_view Session::client_input() const {
  return replay_input_.empty() ? client_->input() : std::string_view(replay_input_);
}

void Session::consume_client(size_t n) {
  if (replay_input_.empty())
    client_->consume(n);
  else
    replay_input_.erase(0, n);
}

void Session::read_client_messages() {
  while (phase_ == Phase::Ready && !waiting_for_backend_ && !fanout_ && !retry_pending_ && !held_by_pause_ &&
         !queued_for_cutover_) {
    auto result = wire::read_frame(client_input(), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      LOG_INFO("client=c%llu protocol violation: %s", (unsigned long long)id(), result.error.c_str());
      terminate(Status::client("08P01", result.error));
      return;
    }
    const wire::Frame& frame = result.frame;
    if (frame.type == 'X') {
      close("client sent Terminate");
      return;
    }
    if (skip_until_sync_ && frame.type != 'S') {
      consume_client(frame.size);
      continue;
    }
    if (backend_ == nullptr) {
      if (answer_without_server(frame)) {
        consume_client(frame.size);
        continue;
      }
      if (host_.hold_if_paused(this)) {
        held_by_pause_ = true;  // PAUSE: no new transaction until RESUME
        return;
      }
      int shard = -1;
      Start start = start_request(frame, &shard);
      if (start == Start::Answered) continue;
      if (start == Start::Wait) return;
      if (!acquire_backend(shard)) {
        if (client_->input().size() > kMaxBufferedClientInput) client_->pause_reading();
        return;
      }
    }
    if (backend_->connection().over_high_water()) {
      client_->pause_reading();  // resumed by on_backend_drained
      return;
    }
    if (frame.type == 'S') skip_until_sync_ = false;
    if (capturing_) capture_request(whole(frame));
    if (request_started_us_ == 0) note_request_start();
    Status status = forward(frame);
    consume_client(frame.size);
    if (!status) {
      terminate(status);
      return;
    }
  }
}

// Between transactions some messages need no server, and a client that blocks on them (pgbench
// -M prepared prepares synchronously) must not wait for one: a Sync with nothing before it, a
// Flush, closing a statement, and preparing a statement some server has already accepted.
bool Session::answer_without_server(const wire::Frame& frame) {
  std::string out;
  switch (frame.type) {
    case 'H': return true;
    case 'S':
      skip_until_sync_ = false;
      wire::encode_ready_for_query(out, transaction_status_);
      break;
    case 'P': {
      if (session_pooling_) return false;
      auto parse = wire::decode_parse(frame.body);
      if (!parse || parse->statement.empty()) return false;
      auto statement = host_.statements().intern(parse->query, parse->param_types);
      if (!statement->validated) return false;
      const PreparedStatement* existing = statements_.find(parse->statement);
      if (existing != nullptr && !(replaying() && existing->id == statement->id)) {
        wire::encode_error(out, "ERROR", "42P05",
                           "prepared statement \"" + std::string(parse->statement) + "\" already exists");
        skip_until_sync_ = true;
      } else {
        statements_.add(parse->statement, statement);
        wire::encode_parse_complete(out);
      }
      break;
    }
    case 'C': {
      if (session_pooling_) return false;
      auto target = wire::decode_target(frame.body);
      if (!target || target->kind != 'S' || target->name.empty()) return false;
      statements_.remove(target->name);
      wire::encode_close_complete(out);
      break;
    }
    default: return false;
  }
  client_->write(out);
  return true;
}

bool Session::acquire_backend(int shard) {
  Status error;
  pool::Pool* pool = pool_for_shard(shard, &error);
  if (pool == nullptr) {
    first_message_routed_ = false;
    refuse_request(error);
    return false;
  }
  shard_ = shard;
  pool::Backend* backend = pool->acquire(this);
  if (backend == nullptr) {
    waiting_for_backend_ = true;
    waiting_pool_ = pool;
    return false;
  }
  attach(backend);
  return true;
}

void Session::attach(pool::Backend* backend) {
  backend_ = backend;
  backend->attach(this);
  server_check_.reset();
  xact_started_us_ = stats::monotonic_us();
  std::string prologue;
  if (backend->applied_state != state_.signature()) {
    // Bring the server to this client's settings before anything of the client runs there.
    wire::encode_query(prologue, "RESET ALL;" + state_.signature());
    backend->applied_state = state_.signature();
    expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  }
  if (!deferred_begin_.empty() && !outside_transaction_) {
    // The transaction the proxy answered BEGIN for starts here, on the shard it picked.
    wire::encode_query(prologue, deferred_begin_);
    first_request_begin_ = std::move(deferred_begin_);
    deferred_begin_.clear();
    expect(Owed::Query, /*relay=*/false);
  } else {
    first_request_begin_.clear();
  }
  backend->connection().write(prologue);
  // Keep the first request until its answer starts: a fence error may send it elsewhere.
  first_request_.clear();
  capturing_ = !outside_transaction_;
  answer_started_ = false;
}

void Session::on_backend_ready(pool::Backend* backend) {
  waiting_for_backend_ = false;
  if (phase_ == Phase::AwaitingServerParameters) {
    pool_->release(backend, true);
    finish_login();
    return;
  }
  if (phase_ != Phase::Ready) {
    pool_->release(backend, true);
    return;
  }
  attach(backend);
  client_->resume_reading();
  read_client_messages();
}

void Session::on_backend_failed(const Status& why) {
  waiting_for_backend_ = false;
  outside_transaction_ = false;
  first_message_routed_ = false;
  LOG_WARN("client=c%llu user=%s no server: %s", (unsigned long long)id(), user_.c_str(),
           why.message.c_str());
  if (phase_ == Phase::AwaitingServerParameters) {
    fail_login(why);
    return;
  }
  if (phase_ != Phase::Ready) return;
  reject_pending_request(why);
  client_->resume_reading();
  read_client_messages();
}

// No server could take the client's next request: answer it with `why` exactly as a server
// answers a failed request, so the client stays usable.
void Session::reject_pending_request(const Status& why) {
  auto result = wire::read_frame(client_->input(), wire::Sender::Client, limits_);
  bool simple =
      result.status == wire::FrameStatus::Complete && (result.frame.type == 'Q' || result.frame.type == 'F');
  std::string out;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  if (simple) {
    client_->consume(result.frame.size);
    wire::encode_ready_for_query(out, transaction_status_);
  } else {
    skip_until_sync_ = true;
  }
  client_->write(out);
}

void Session::expect(Owed owed, bool relay, uint64_t statement, bool relay_errors) {
  Expectation e;
  e.owed = owed;
  e.relay = relay;
  e.relay_errors = relay_errors;
  e.statement = statement;
  std::string now;
  tracker_.expect(std::move(e), &now);
}

void Session::answer_in_place(std::string bytes) {
  Expectation e;
  e.owed = Owed::Synthetic;
  e.bytes = std::move(bytes);
  std::string now;
  tracker_.expect(std::move(e), &now);
  to_client(now);
}

// An error the proxy gives in place of a server answer, in its exact place in the stream; the
// rest of the client's extended-protocol batch is skipped like a server skips it.
void Session::answer_with_error(const Status& error) {
  std::string bytes;
  wire::encode_error(bytes, "ERROR", error.sqlstate, error.message);
  answer_in_place(std::move(bytes));
  skip_until_sync_ = true;
}

Status Session::forward(const wire::Frame& frame) {
  if (is_extended(frame.type)) extended_open_ = true;
  switch (frame.type) {
    case 'Q': return forward_query(frame);
    case 'P': return forward_parse(frame);
    case 'B': return forward_bind(frame);
    case 'D':
    case 'C': return forward_describe_or_close(frame);
    case 'E': expect(Owed::Execute); break;
    case 'S':
      expect(Owed::Sync);
      extended_open_ = false;
      break;
    case 'F': expect(Owed::Query); break;
    case 'H':
    case 'd':
    case 'c':
    case 'f': break;
    default: return Status::client("08P01", std::string("unexpected message type '") + frame.type + "'");
  }
  backend_->connection().write(whole(frame));
  return Status::ok();
}

Status Session::forward_query(const wire::Frame& frame) {
  auto sql = wire::decode_query(frame.body);
  if (!sql) return sql.status();
  std::shared_ptr<const parser::QueryFacts> known;
  if (auto facts = parser::analyze(*sql)) known = *facts;
  bool routed = std::exchange(first_message_routed_, false);
  if (known && host_.directory() && !routed) {
    router::Route route = router::route_query(*known, nullptr, *host_.directory(), host_.routing_rules());
    Status allowed = check_pinned(*known, route);
    if (!allowed.is_ok()) {
      inject_abort(allowed, false);
      return Status::ok();
    }
  }
  if (known) {
    for (const auto& statement : known->statements) {
      bool sets = statement.kind == parser::StatementKind::Set ||
                  statement.kind == parser::StatementKind::SetLocal ||
                  statement.kind == parser::StatementKind::Reset;
      Status refused;
      if (sets && SessionState::is_protected(statement.set_name))
        refused = Status::client("42501",
                                 "parameter \"" + statement.set_name + "\" cannot be set through shardwire");
      else if (!session_pooling_ && statement.kind == parser::StatementKind::Listen)
        refused = Status::client(
            "0A000", "LISTEN is not supported in transaction pooling mode; use pool.mode: session");
      if (!refused.is_ok()) {
        std::string bytes;
        wire::encode_error(bytes, "ERROR", refused.sqlstate, refused.message);
        wire::encode_ready_for_query(bytes, transaction_status_);
        answer_in_place(std::move(bytes));
        maybe_release_backend();
        return Status::ok();
      }
    }
  }
  queries_in_flight_.push_back(std::move(known));
  expect(Owed::Query);
  backend_->connection().write(whole(frame));
  return Status::ok();
}

}  // namespace sw::session
