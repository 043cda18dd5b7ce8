// LegEngine: one server per target shard, read in one loop (docs/architecture.md §5.6).
#include "session/leg_engine.h"

#include <utility>

#include "common/log.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::session {

inline wire::FrameResult LegEngine::read_checked(pool::Backend& backend, wire::ServerMessageCheck& check) {
  wire::Limits limits;
  limits.max_message_size = backend.pool().settings().max_message_size;
  wire::FrameResult result = wire::read_frame(backend.connection().input(), wire::Sender::Server, limits);
  if (result.status != wire::FrameStatus::Complete) return result;
  if (!check.passes(result.frame.type, result.frame.body)) {
    result.status = wire::FrameStatus::Error;
    result.error = check.failure(result.frame.type, result.frame.body).message;
  }
  return result;
}

LegEngine::LegEngine(std::vector<Target> targets, ServerState session_state, std::string what, Runner& runner)
    : LegEngine(nullptr, std::move(targets), std::move(session_state), std::move(what), runner) {}

LegEngine::LegEngine(LegEngine* on, std::vector<Target> targets, ServerState session_state, std::string what,
                     Runner& runner)
    : owner_(on != nullptr ? on : this),
      view_(on != nullptr ? this : nullptr),
      session_state_(std::move(session_state)),
      what_(std::move(what)),
      runner_(runner) {
  runner_.engine_ = this;
  if (on != nullptr) {
    join_legs(std::move(targets));
    return;
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    owned_.push_back(std::make_unique<Leg>(
        std::move(targets[i]), [this, i](pool::Backend* backend) { on_server(i, backend); },
        [this](const Status& why) { runner_.on_no_server(why); }));
    owned_.back()->slot = i;
    legs_.push_back(owned_.back().get());
  }
}

// Destroyed while holding servers (the session closes mid-run): they are closed, as their
// transactions are in an unknown state. A run on an owner's legs closes its new legs'
// servers and leaves the borrowed ones to the owner.
LegEngine::~LegEngine() {
  for (Reading* reading = reading_; reading != nullptr; reading = reading->outer) reading->ended = true;
  if (runner_.engine_ == this) runner_.engine_ = nullptr;
  release_all(false);
  for (Leg* each : legs_) {
    Leg& leg = *each;
    if (view_ != nullptr) {
      if (leg.run == this) end_run(leg);
      continue;
    }
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      backend->pool().release(backend, false);
    }
  }
}

std::vector<std::string> LegEngine::shard_names() const {
  std::vector<std::string> names;
  names.reserve(legs_.size());
  for (size_t i = 0; i < legs_.size(); ++i) names.push_back(target(i).shard);
  return names;
}

bool LegEngine::any_waiting() const {
  for (const Leg* leg : legs_) {
    if (leg->waiting && in_view(*leg)) return true;
  }
  return false;
}

// Expiring while a leg still waits for a server fails the run: that leg must not start after the
// acknowledgement. Otherwise every leg was sent its statement a while ago and counts as started.
void LegEngine::watch_start(StartingReads& reads, uint64_t version, std::function<bool(size_t)> started) {
  started_ = std::move(started);
  start_watch_.begin(reads, version, [this](const Status& why) {
    if (any_waiting()) {
      runner_.on_no_server(why);
    } else {
      start_watch_.end();
    }
  });
}

void LegEngine::end_watch_once_started() {
  if (!start_watch_.active()) return;
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i]->waiting || (started_ && !started_(i))) return;
  }
  start_watch_.end();
}

// A borrowed leg has its server already: it starts at once, before any leg waits.
void LegEngine::start() {
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = *legs_[i];
    leg.waiting = leg.backend == nullptr;
  }
  for (size_t i = 0; i < legs_.size() && !stopped_; ++i) {
    if (!legs_[i]->waiting && legs_[i]->backend != nullptr) arrived(i, legs_[i]->backend);
  }
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (stopped_) return;
    Leg& leg = *legs_[i];
    if (!leg.waiting) continue;
    if (pool::Backend* backend = leg.wait.acquire(*target(i).pool, session_state_.client))
      on_server(i, backend);
  }
  end_watch_once_started();
}

void LegEngine::start_leg(size_t index) {
  Leg& leg = *legs_[index];
  if (leg.backend != nullptr) {
    arrived(index, leg.backend);
    return;
  }
  leg.waiting = true;
  if (pool::Backend* backend = leg.wait.acquire(*target(index).pool, session_state_.client))
    on_server(index, backend);
}

// The owner forwards the answer of a run's leg's wait to the run.
void LegEngine::on_server(size_t index, pool::Backend* backend) {
  Leg& leg = *legs_[index];
  if (!in_view(leg) && leg.run != nullptr) {
    leg.run->on_server(leg.run_index, backend);
    return;
  }
  if (stopped_ || !leg.waiting || leg.backend != nullptr) {
    backend->pool().release(backend, true);  // nobody waits for it any more
    return;
  }
  leg.waiting = false;
  arrived(index, backend);
  end_watch_once_started();
}

// The server attaches to the leg's owner with the owner's index (a run's leg too).
void LegEngine::arrived(size_t index, pool::Backend* backend) {
  Leg& leg = *legs_[index];
  if (leg.backend != backend || backend->user() != owner_) {
    leg.backend = backend;
    backend->attach(owner_, leg.slot);
  }
  const Target& to = target(index);
  if (to.bare) {
    runner_.on_leg_server(index, {});
    return;
  }
  std::string prologue;
  int owed = bring_server_to(*backend, session_state_, prologue);
  if (!to.begin.empty()) {
    wire::encode_query(prologue, to.begin);
    ++owed;
  }
  leg.ready_owed += owed;
  leg.injected += owed;
  runner_.on_leg_server(index, std::move(prologue));
}

// A leg in a run is the run's to read.
void LegEngine::on_backend_readable(pool::Backend& backend) {
  const size_t index = leg_of(backend);
  if (index == legs_.size()) return;
  const Leg& leg = *legs_[index];
  if (leg.run != nullptr) {
    leg.run->read(leg.run_index);
  } else {
    read(index);
  }
}

// ParameterStatus is the server's own (the pool keeps it for the session settings); a
// notification belongs to no client of this run. Called for those two types only (read tests the
// type first: it runs for every message).
bool LegEngine::kept_from_runner(pool::Backend& backend, const wire::Frame& frame) {
  if (runner_.takes_async_messages()) return false;
  if (frame.type == 'S') {
    if (auto p = wire::decode_parameter_status(frame.body)) backend.set_parameter(p->name, p->value);
  }
  return true;
}

// A message is consumed only after the runner saw it (its views point into the input), and only
// while the leg still holds the server and is not held: a runner that released or handed it over
// ended the leg, and a run's leg no longer once the run ended. The limits are the pool's, as for a
// server of the session's own. Only a leg in view: the owner's legs in a run are the run's to
// read, and a run's legs given back the owner's.
void LegEngine::read(size_t index) {
  Reading reading(reading_, index);  // ended: a runner destroyed the engine
  Leg& leg = *legs_[index];
  if (!in_view(leg)) return;
  while (pool::Backend* backend = leg.backend) {
    if (leg.held) {
      backend->connection().pause_reading();
      return;
    }
    const wire::FrameResult read = read_checked(*backend, leg.check);
    if (read.status == wire::FrameStatus::NeedMore) {
      runner_.on_leg_caught_up(index);
      return;
    }
    if (read.status == wire::FrameStatus::Error) {
      violation(index, *backend, Status::server("08P01", read.error));
      return;
    }
    const wire::Frame& frame = read.frame;
    if ((frame.type == 'S' || frame.type == 'A') && kept_from_runner(*backend, frame)) {
      backend->connection().consume(frame.size);
      continue;
    }
    const std::string_view whole(frame.body.data() + frame.body.size() - frame.size, frame.size);
    const Message message{frame.type, whole, frame.body, frame};
    reading.presented = &message;
    const bool took = runner_.on_leg_message(index, message);
    // The runner ended the leg (released or handed over its server) or, in a run, the run: the
    // message stays unread, for whoever reads the server next.
    if (reading.ended || leg.backend != backend || (view_ != nullptr && leg.run != view_)) return;
    if (reading.presented == nullptr) continue;  // the runner consumed it
    if (leg.held) {
      runner_.on_leg_caught_up(index);
      return;
    }
    consume_presented(leg, reading);
    if (!took) {
      const Status why = std::exchange(leg.refusal, Status::ok());
      if (runner_.on_leg_refused(index, why) || reading.ended) return;
      violation(index, *backend, why);
      return;
    }
    if (frame.type == 'Z') {
      runner_.on_leg_ready(index);
      if (reading.ended || !in_view(leg)) return;  // the run ended there: the leg is its owner's
    }
  }
}

void LegEngine::mark_answered(size_t leg) {
  legs_[leg]->answered = true;
  end_watch_once_started();
}

void LegEngine::violation(size_t leg, const pool::Backend& backend, const Status& why) {
  legs_[leg]->violated = true;
  LOG_WARN("server=s%llu shard=%s protocol violation by server, dropping it: %s (during %s)",
           (unsigned long long)backend.id(), shard(leg).c_str(), why.message.c_str(), what_.c_str());
  runner_.on_leg_violation(
      leg, Status::server("08P01", "shard " + shard(leg) + " sent an invalid message: " + why.message));
}

void LegEngine::hold(size_t index) {
  Leg& leg = *legs_[index];
  leg.held = true;
  if (leg.backend != nullptr) leg.backend->connection().pause_reading();
}

void LegEngine::resume(size_t index) {
  Leg& leg = *legs_[index];
  if (!leg.held || !in_view(leg)) return;  // a run resumes its own holds
  leg.held = false;
  if (leg.backend == nullptr) return;
  leg.backend->connection().resume_reading();
  read(index);
}

Status LegEngine::end(bool in_transaction, bool clean, const Status& error, const HandBack& hand_back) {
  if (!in_transaction) release_all(clean);
  std::vector<Handed> handed = hand_over();
  for (size_t i = 0; i < handed.size(); ++i) runner_.on_leg_handed(i, handed[i]);
  return hand_back ? hand_back(std::move(handed), error) : Status::ok();
}

void LegEngine::end_settled(bool in_transaction, bool clean, const Status& error, const HandBack& hand_back) {
  const Status verdict = end(in_transaction, clean, error, hand_back);
  if (!verdict.is_ok())
    LOG_WARN("unexpected refusal of a finished %s: %s", what_.c_str(), verdict.message.c_str());
}

Status LegEngine::error_of(std::string_view body) {
  auto fields = wire::decode_error_fields(body);
  return fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                : Status::server("08P01", "a malformed ErrorResponse");
}

void LegEngine::write(size_t leg, std::string_view bytes) {
  if (legs_[leg]->backend != nullptr) legs_[leg]->backend->connection().write(bytes);
}

void LegEngine::send_query(size_t leg, const std::string& sql) {
  std::string out;
  wire::encode_query(out, sql);
  write(leg, out);
}

void LegEngine::cancel(size_t leg, CancelJoin* join) {
  Leg& each = *legs_[leg];
  if (each.backend == nullptr) return;
  each.backend->pool().send_cancel(*each.backend, join != nullptr ? join->add() : std::function<void()>());
  each.cancelled = true;
}

// A leg still waiting for its pool's server would run the statement once the server came, after
// the client cancelled it: its wait ends, and the run fails with 57014 as a cancelled server's
// statement does (last: the runner may end the run, and this engine with it).
size_t LegEngine::cancel_client_statement(CancelJoin& join) {
  size_t sent = 0;
  bool stopped_waiting = false;
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = *legs_[i];
    if (!runner_.cancellable(i)) continue;
    if (leg.backend != nullptr) {
      cancel(i, &join);
      ++sent;
    } else if (leg.waiting) {
      leg.wait.cancel();
      leg.waiting = false;
      stopped_waiting = true;
    }
  }
  if (stopped_waiting) {
    LOG_INFO("cancel request: a leg of %s still waited for a server, which it will not run on",
             what_.c_str());
    runner_.on_no_server(Status::client("57014", "canceling statement due to user request"));
  }
  return sent;
}

void LegEngine::release(size_t leg, bool clean) {
  Leg& each = *legs_[leg];
  if (!in_view(each)) return;  // a run's leg it gave back already
  each.wait.cancel();
  each.waiting = false;
  end_watch_once_started();
  if (each.violated) {
    close_violating(each);
    return;
  }
  if (each.borrowed) return;  // the session's: hand_over gives it back
  if (pool::Backend* backend = std::exchange(each.backend, nullptr)) {
    backend->detach();
    if (each.held) backend->connection().resume_reading();
    backend->pool().release(backend, clean && !each.cancelled);
  }
}

void LegEngine::release_all(bool clean) {
  stopped_ = true;
  for (size_t i = 0; i < legs_.size(); ++i) release(i, clean);
}

}  // namespace sw::session
