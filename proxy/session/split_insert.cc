// SplitInsert: a multi-row INSERT split by shard, its parts in one transaction per shard committed
// together (docs/architecture.md §5.11).
#include "session/split_insert.h"

#include <utility>

#include "common/log.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::session {

SplitInsert::SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks)
    : setup_(std::move(setup)), callbacks_(std::move(callbacks)), answer_(setup_.row_part) {
  for (auto& part : parts) legs_.push_back(Leg{std::move(part)});
  if (!setup_.unit_part.empty()) batch_ = std::make_unique<BatchAnswer>(setup_.unit_part, setup_.unit_parsed);
  if (setup_.what.empty()) setup_.what = "INSERT into sharded table " + setup_.table;
}

SplitInsert::~SplitInsert() { release_legs(false); }

void SplitInsert::start() {
  for (Leg& leg : legs_) leg.waiting = true;
  for (Leg& leg : legs_) {
    if (phase_ != Phase::Inserting) return;
    if (!leg.waiting) continue;
    if (pool::Backend* backend = leg.part.pool->acquire(this)) on_backend_ready(backend);
  }
}

void SplitInsert::on_backend_ready(pool::Backend* backend) {
  if (phase_ == Phase::Inserting) {
    for (Leg& leg : legs_) {
      if (leg.waiting && leg.backend == nullptr && leg.part.pool == &backend->pool()) {
        leg.waiting = false;
        leg.backend = backend;
        backend->attach(this);
        send_start(leg);
        return;
      }
    }
  }
  backend->pool().release(backend, true);  // nobody waits for it any more
}

void SplitInsert::on_backend_failed(const Status& why) { fail(why); }

// The client's settings, BEGIN and the part, in one write.
void SplitInsert::send_start(Leg& leg) {
  std::string out;
  if (leg.backend->applied_state != setup_.session_state) {
    wire::encode_query(out, "RESET ALL;" + setup_.session_state);
    leg.backend->applied_state = setup_.session_state;
    ++leg.ready_owed;
  }
  wire::encode_query(out, "BEGIN");
  out += leg.part.request;
  leg.ready_owed += 2;
  leg.backend->connection().write(out);
}

void SplitInsert::on_backend_readable(pool::Backend& backend) {
  if (Leg* leg = leg_of(backend)) read_leg(*leg);
}

void SplitInsert::read_leg(Leg& leg) {
  wire::Limits limits;
  while (leg.backend != nullptr && phase_ != Phase::Done) {
    pool::Backend* backend = leg.backend;
    net::Connection& connection = backend->connection();
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    Status shape = result.status == wire::FrameStatus::Error
                       ? Status::server("08P01", result.error)
                       : leg.check.on_message(result.frame.type, result.frame.body);
    const wire::Frame& frame = result.frame;
    if (shape) {
      std::string_view whole(frame.body.data() + frame.body.size() - frame.size, frame.size);
      shape = on_message(leg, frame.type, whole, frame.body);
      if (leg.backend != backend) return;  // failed: every server was closed
      connection.consume(frame.size);
      if (shape && frame.type == 'Z') on_ready(leg);
      if (shape) continue;
    }
    LOG_WARN("server=s%llu shard=%s protocol violation by server during %s, dropping it: %s",
             (unsigned long long)backend->id(), leg.part.shard.c_str(), setup_.what.c_str(),
             shape.message.c_str());
    if (phase_ != Phase::TwoPhase) {
      fail(Status::server("08P01", "shard " + leg.part.shard + " sent an invalid message: " + shape.message));
      return;
    }
    leg.backend = nullptr;
    backend->detach();
    leg.part.pool->release(backend, false);
    two_phase_->on_lost(index_of(leg), shape.message);
    return;
  }
}

Status SplitInsert::on_message(Leg& leg, char type, std::string_view frame, std::string_view body) {
  if (batch_ && phase_ == Phase::Inserting && leg.ready_owed == 1) {
    switch (type) {
      case '2':
      case 'T':
      case 'n':
      case 'D':
      case 'C':
      case 'E': return on_batch_answer(leg, type, frame, body);
      default: break;
    }
  }
  switch (type) {
    case 'S':
      if (auto p = wire::decode_parameter_status(body)) leg.backend->set_parameter(p->name, p->value);
      return Status::ok();
    case 'A':
    case 'Z': return Status::ok();
    case '1':
    case '2':
      if (phase_ == Phase::Inserting) return Status::ok();  // owed to the client in Setup::answered
      break;
    case 'N':
      if (phase_ == Phase::Inserting) notices_.append(frame);
      return Status::ok();
    case 'E': {
      auto fields = wire::decode_error_fields(body);
      Status error = fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                            : Status::server("08P01", "a malformed ErrorResponse");
      if (phase_ == Phase::TwoPhase) {
        two_phase_->on_error(index_of(leg), error);
        return Status::ok();
      }
      error.message = setup_.what + " failed on shard " + leg.part.shard +
                      ", rolled back on every shard: " + error.message;
      if (phase_ == Phase::Committing) {
        if (commit_error_) commit_error_ = error;
        return Status::ok();
      }
      fail(error);
      return Status::ok();
    }
    case 'T':
    case 'n':
    case 'D':
    case 'C':
      if (phase_ == Phase::Inserting && leg.ready_owed == 1) return on_part_answer(leg, type, frame, body);
      // The settings' set_config row, BEGIN, COMMIT: not the client's.
      if (type == 'C' || phase_ == Phase::Inserting) return Status::ok();
      break;
    default: break;
  }
  return Status::server("08P01", "shard " + leg.part.shard + " answered its part of " + setup_.what +
                                     " with an "
                                     "unexpected message ('" +
                                     std::string(1, type) + "')");
}

// The part's own answer: held in the combiner until every part answered.
Status SplitInsert::on_part_answer(Leg& leg, char type, std::string_view frame, std::string_view body) {
  const size_t part = index_of(leg);
  Status held = Status::ok();
  if (type == 'T' || type == 'n') held = answer_.on_row_description(part, frame);
  if (type == 'D') held = answer_.on_data_row(part, frame);
  if (type == 'C') {
    auto tag = wire::decode_command_complete(body);
    if (!tag) return tag.status();
    const long long before = answer_.inserted();
    held = answer_.on_command_complete(part, *tag);
    leg.inserted = answer_.inserted() > before;
  }
  if (!held && held.fault != Fault::Server) {
    fail(held);
    return Status::ok();
  }
  return held;
}

// A unit's answer in a batch: held in the batch's order; an error is kept until every leg reached
// its Sync (the batch is then rolled back everywhere and answered up to the failed unit).
Status SplitInsert::on_batch_answer(Leg& leg, char type, std::string_view frame, std::string_view body) {
  if (type != 'E') {
    Status held = batch_->on_message(index_of(leg), type, frame);
    if (!held && held.fault != Fault::Server) {
      fail(held);
      return Status::ok();
    }
    return held;
  }
  if (!batch_error_) return Status::ok();
  auto fields = wire::decode_error_fields(body);
  batch_error_ = fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                        : Status::server("08P01", "a malformed ErrorResponse");
  batch_error_.message = setup_.what + " failed on shard " + leg.part.shard +
                         ", the batch was rolled back on every shard: " + batch_error_.message;
  return Status::ok();
}

void SplitInsert::on_ready(Leg& leg) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index_of(leg));
    return;
  }
  if (phase_ == Phase::Done || --leg.ready_owed > 0) return;
  for (const Leg& other : legs_) {
    if (other.backend == nullptr || other.ready_owed > 0) return;
  }
  if (phase_ == Phase::Inserting) {
    commit();
  } else {
    finish(commit_error_ ? TwoPhaseOutcome::Committed : TwoPhaseOutcome::RolledBack, commit_error_);
  }
}

// Every part ran: the answer is combined before anything commits (a refusal still rolls back);
// rows on several shards commit by two-phase commit, else every leg by COMMIT.
void SplitInsert::commit() {
  if (batch_) {
    if (!batch_error_ || !batch_->complete()) {
      std::string before = batch_->answered();
      notices_.insert(0, before);  // the units before the failed one are answered first, as a server does
      fail(batch_error_ ? Status::server("08P01", setup_.what + ": a shard did not answer every Execute")
                        : batch_error_);
      return;
    }
    result_ = batch_->answered();
  } else {
    auto combined = answer_.combine();
    if (!combined) {
      fail(combined.status());
      return;
    }
    result_ = std::move(combined.value());
  }
  std::vector<size_t> written;
  for (size_t i = 0; i < legs_.size(); ++i)
    if (batch_ ? batch_->wrote(i) : legs_[i].inserted) written.push_back(i);
  if (written.size() > 1) {
    commit_two_phase(written);
    return;
  }
  phase_ = Phase::Committing;
  std::string out;
  wire::encode_query(out, "COMMIT");
  for (Leg& leg : legs_) {
    leg.ready_owed = 1;
    leg.backend->connection().write(out);
  }
}

void SplitInsert::commit_two_phase(const std::vector<size_t>& written) {
  phase_ = Phase::TwoPhase;
  std::vector<std::string> shards;
  for (const Leg& leg : legs_) shards.push_back(leg.part.shard);
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      setup_.what, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) {
        if (legs_[leg].backend == nullptr) return;  // lost: the coordinator knows
        std::string out;
        wire::encode_query(out, sql);
        legs_[leg].backend->connection().write(out);
      },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(shards, written);
}

// Committed: the client gets the combined answer; else the coordinator's (or COMMIT's) error.
void SplitInsert::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  release_legs(true);  // idle: committed, rolled back, or prepared for recovery
  std::string out = std::move(notices_);
  out += setup_.answered;
  if (outcome == TwoPhaseOutcome::Committed)
    out += result_;
  else
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

// Before the commit: every server is closed, which rolls its transaction back.
void SplitInsert::fail(const Status& why) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  release_legs(false);
  LOG_INFO("%s over %zu shards failed, rolled back on every shard: %s", setup_.what.c_str(), legs_.size(),
           why.message.c_str());
  std::string out = std::move(notices_);
  out += setup_.answered;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

void SplitInsert::release_legs(bool clean) {
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.part.pool->cancel_wait(this);
    leg.waiting = false;
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      leg.part.pool->release(backend, clean);
    }
  }
}

void SplitInsert::on_backend_lost(pool::Backend& backend, const Status& why) {
  Leg* leg = leg_of(backend);
  if (leg == nullptr) return;
  leg->backend = nullptr;
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index_of(*leg), why.message);
    return;
  }
  fail(Status::server("08006", setup_.what + ": lost shard " + leg->part.shard +
                                   ", rolled back on every shard: " + why.message));
}

SplitInsert::Leg* SplitInsert::leg_of(const pool::Backend& backend) {
  for (Leg& leg : legs_) {
    if (leg.backend == &backend) return &leg;
  }
  return nullptr;
}

}  // namespace sw::session
