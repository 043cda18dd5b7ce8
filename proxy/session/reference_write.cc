// ReferenceWrite: a write of a reference table on every shard, committed together
// (docs/architecture.md §6.4).
#include "session/reference_write.h"

#include <utility>

#include "common/log.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"

namespace sw::session {
namespace {
// The client's result is held until every shard answered: RETURNING of a write this large is
// refused (54000) rather than held without bound.
constexpr size_t kMaxHeldResult = 64u << 20;
}  // namespace

ReferenceWrite::ReferenceWrite(std::vector<Target> targets, Setup setup, Callbacks callbacks)
    : setup_(std::move(setup)), callbacks_(std::move(callbacks)) {
  for (auto& target : targets) legs_.push_back(Leg{std::move(target)});
}

ReferenceWrite::~ReferenceWrite() { release_legs(false); }

void ReferenceWrite::start() {
  for (Leg& leg : legs_) leg.waiting = true;
  for (Leg& leg : legs_) {
    if (phase_ != Phase::Writing) return;
    if (!leg.waiting) continue;
    if (pool::Backend* backend = leg.target.pool->acquire(this)) on_backend_ready(backend);
  }
}

void ReferenceWrite::on_backend_ready(pool::Backend* backend) {
  if (phase_ == Phase::Writing) {
    for (Leg& leg : legs_) {
      if (leg.waiting && leg.backend == nullptr && leg.target.pool == &backend->pool()) {
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

void ReferenceWrite::on_backend_failed(const Status& why) { fail(why); }

// The client's settings, BEGIN and the client's statement, in one write.
void ReferenceWrite::send_start(Leg& leg) {
  std::string out;
  if (leg.backend->applied_state != setup_.session_state) {
    wire::encode_query(out, "RESET ALL;" + setup_.session_state);
    leg.backend->applied_state = setup_.session_state;
    ++leg.ready_owed;
  }
  wire::encode_query(out, "BEGIN");
  out += setup_.query;
  leg.ready_owed += 2;
  leg.backend->connection().write(out);
}

void ReferenceWrite::on_backend_readable(pool::Backend& backend) {
  if (Leg* leg = leg_of(backend)) read_leg(*leg);
}

void ReferenceWrite::read_leg(Leg& leg) {
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
    LOG_WARN("server=s%llu shard=%s protocol violation by server during a reference write, dropping it: %s",
             (unsigned long long)backend->id(), leg.target.shard.c_str(), shape.message.c_str());
    if (phase_ != Phase::TwoPhase) {
      fail(Status::server("08P01",
                          "shard " + leg.target.shard + " sent an invalid message: " + shape.message));
      return;
    }
    leg.backend = nullptr;
    backend->detach();
    leg.target.pool->release(backend, false);
    two_phase_->on_lost(index_of(leg), shape.message);
    return;
  }
}

Status ReferenceWrite::on_message(Leg& leg, char type, std::string_view frame, std::string_view body) {
  const bool first = index_of(leg) == 0;  // its answer to the client's statement is the client's
  switch (type) {
    case 'S':
      if (auto p = wire::decode_parameter_status(body)) leg.backend->set_parameter(p->name, p->value);
      return Status::ok();
    case 'A':
    case 'Z': return Status::ok();
    case 'N':
    case 'T':
    case 'D':
      if (first && phase_ == Phase::Writing && leg.ready_owed == 1) {
        if (result_.size() + frame.size() > kMaxHeldResult) {
          fail(Status::client("54000", "the result of a write of reference table " + setup_.table +
                                           " is over " + std::to_string(kMaxHeldResult >> 20) +
                                           " MiB, which shardwire holds until every shard answered; the "
                                           "write was rolled back on every shard (RETURNING fewer rows)"));
          return Status::ok();
        }
        result_.append(frame);
      }
      return Status::ok();
    case 'C':
      if (phase_ == Phase::Writing && leg.ready_owed == 1) {
        if (auto tag = wire::decode_command_complete(body)) leg.tag.assign(*tag);
      }
      return Status::ok();
    case 'E': {
      auto fields = wire::decode_error_fields(body);
      Status error = fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                            : Status::server("08P01", "a malformed ErrorResponse");
      if (phase_ == Phase::TwoPhase) {
        two_phase_->on_error(index_of(leg), error);
        return Status::ok();
      }
      error.message = "write of reference table " + setup_.table + " failed on shard " + leg.target.shard +
                      ", rolled back on every shard: " + error.message;
      fail(error);
      return Status::ok();
    }
    default: break;
  }
  return Status::server("08P01", "shard " + leg.target.shard +
                                     " answered a reference write with an unexpected "
                                     "message ('" +
                                     std::string(1, type) + "')");
}

void ReferenceWrite::on_ready(Leg& leg) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index_of(leg));
    return;
  }
  if (phase_ == Phase::Done || --leg.ready_owed > 0) return;
  for (const Leg& other : legs_) {
    if (other.backend == nullptr || other.ready_owed > 0) return;
  }
  if (phase_ == Phase::Writing) {
    commit();
  } else {
    finish(TwoPhaseOutcome::Committed, Status::ok());
  }
}

// Every shard ran the statement: equal tags commit, on several shards by two-phase commit.
void ReferenceWrite::commit() {
  std::string answers;
  bool equal = true;
  for (const Leg& leg : legs_) {
    equal = equal && leg.tag == legs_.front().tag;
    answers += (answers.empty() ? "" : ", ") + leg.target.shard + ": " + leg.tag;
  }
  if (!equal) {
    fail(Status::server("55000", "write of reference table " + setup_.table +
                                     " rolled back on every shard: the shards answered differently (" +
                                     answers + "), so their copies of it differ; run VERIFY REFERENCE " +
                                     setup_.table + " on the admin console and repair the copies"));
    return;
  }
  if (legs_.size() == 1) {
    phase_ = Phase::Committing;
    std::string out;
    wire::encode_query(out, "COMMIT");
    legs_.front().ready_owed = 1;
    legs_.front().backend->connection().write(out);
    return;
  }
  phase_ = Phase::TwoPhase;
  std::vector<std::string> shards;
  std::vector<size_t> written;
  for (size_t i = 0; i < legs_.size(); ++i) {
    shards.push_back(legs_[i].target.shard);
    written.push_back(i);
  }
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      "write of reference table " + setup_.table, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) {
        if (legs_[leg].backend == nullptr) return;  // lost: the coordinator knows
        std::string out;
        wire::encode_query(out, sql);
        legs_[leg].backend->connection().write(out);
      },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(shards, written);
}

// Committed: the client gets the first shard's rows and the tag; else the coordinator's error.
void ReferenceWrite::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  release_legs(true);  // idle: committed, rolled back, or prepared for recovery
  std::string out;
  if (outcome == TwoPhaseOutcome::Committed) {
    out = std::move(result_);
    wire::encode_command_complete(out, legs_.front().tag);
  } else {
    wire::encode_error(out, "ERROR", error.sqlstate, error.message);
  }
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

// Before the commit: every server is closed, which rolls its transaction back.
void ReferenceWrite::fail(const Status& why) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  release_legs(false);
  LOG_INFO("write of reference table %s failed, rolled back on every shard: %s", setup_.table.c_str(),
           why.message.c_str());
  std::string out;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

void ReferenceWrite::release_legs(bool clean) {
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    leg.waiting = false;
    if (pool::Backend* backend = std::exchange(leg.backend, nullptr)) {
      backend->detach();
      leg.target.pool->release(backend, clean);
    }
  }
}

void ReferenceWrite::on_backend_lost(pool::Backend& backend, const Status& why) {
  Leg* leg = leg_of(backend);
  if (leg == nullptr) return;
  leg->backend = nullptr;
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index_of(*leg), why.message);
    return;
  }
  fail(Status::server("08006", "write of reference table " + setup_.table + ": lost shard " +
                                   leg->target.shard + ", rolled back on every shard: " + why.message));
}

ReferenceWrite::Leg* ReferenceWrite::leg_of(const pool::Backend& backend) {
  for (Leg& leg : legs_) {
    if (leg.backend == &backend) return &leg;
  }
  return nullptr;
}

}  // namespace sw::session
