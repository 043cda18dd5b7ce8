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
    : legs_(targets.size()),
      setup_(std::move(setup)),
      servers_(std::move(targets), setup_.session_state, *this),
      callbacks_(std::move(callbacks)) {}

ReferenceWrite::~ReferenceWrite() = default;

void ReferenceWrite::start() { servers_.start(); }

void ReferenceWrite::on_no_server(const Status& why) { fail(why); }

// The client's settings, BEGIN and the client's statement, in one write.
void ReferenceWrite::on_leg_server(size_t index, std::string prologue, int ready_owed) {
  prologue += setup_.query;
  legs_[index].ready_owed += ready_owed + 1;
  servers_.write(index, prologue);
}

void ReferenceWrite::on_leg_readable(size_t index) {
  Leg& leg = legs_[index];
  wire::Limits limits;
  while (servers_.backend(index) != nullptr && phase_ != Phase::Done) {
    pool::Backend* backend = servers_.backend(index);
    net::Connection& connection = backend->connection();
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    Status shape = result.status == wire::FrameStatus::Error
                       ? Status::server("08P01", result.error)
                       : leg.check.on_message(result.frame.type, result.frame.body);
    const wire::Frame& frame = result.frame;
    if (shape) {
      std::string_view whole(frame.body.data() + frame.body.size() - frame.size, frame.size);
      shape = on_message(index, frame.type, whole, frame.body);
      if (servers_.backend(index) != backend) return;  // failed: every server was closed
      connection.consume(frame.size);
      if (shape && frame.type == 'Z') on_ready(index);
      if (shape) continue;
    }
    LOG_WARN("server=s%llu shard=%s protocol violation by server during a reference write, dropping it: %s",
             (unsigned long long)backend->id(), servers_.shard(index).c_str(), shape.message.c_str());
    if (phase_ != Phase::TwoPhase) {
      fail(Status::server("08P01",
                          "shard " + servers_.shard(index) + " sent an invalid message: " + shape.message));
      return;
    }
    servers_.release(index, false);
    two_phase_->on_lost(index, shape.message);
    return;
  }
}

Status ReferenceWrite::on_message(size_t index, char type, std::string_view frame, std::string_view body) {
  Leg& leg = legs_[index];
  const bool first = index == 0;  // its answer to the client's statement is the client's
  switch (type) {
    case 'S':
      if (auto p = wire::decode_parameter_status(body))
        servers_.backend(index)->set_parameter(p->name, p->value);
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
        two_phase_->on_error(index, error);
        return Status::ok();
      }
      error.message = "write of reference table " + setup_.table + " failed on shard " +
                      servers_.shard(index) + ", rolled back on every shard: " + error.message;
      fail(error);
      return Status::ok();
    }
    default: break;
  }
  return Status::server("08P01", "shard " + servers_.shard(index) +
                                     " answered a reference write with an unexpected "
                                     "message ('" +
                                     std::string(1, type) + "')");
}

void ReferenceWrite::on_ready(size_t index) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index);
    return;
  }
  if (phase_ == Phase::Done || --legs_[index].ready_owed > 0) return;
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (servers_.backend(i) == nullptr || legs_[i].ready_owed > 0) return;
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
  for (size_t i = 0; i < legs_.size(); ++i) {
    equal = equal && legs_[i].tag == legs_.front().tag;
    answers += (answers.empty() ? "" : ", ") + servers_.shard(i) + ": " + legs_[i].tag;
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
    legs_.front().ready_owed = 1;
    servers_.send_query(0, "COMMIT");
    return;
  }
  phase_ = Phase::TwoPhase;
  std::vector<size_t> written;
  for (size_t i = 0; i < legs_.size(); ++i) written.push_back(i);
  two_phase_ = std::make_unique<TwoPhaseLegs>(
      "write of reference table " + setup_.table, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) { servers_.send_query(leg, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(servers_.shard_names(), written);
}

// Committed: the client gets the first shard's rows and the tag; else the coordinator's error.
void ReferenceWrite::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  servers_.release_all(true);  // idle: committed, rolled back, or prepared for recovery
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
  servers_.release_all(false);  // closed: their transactions roll back
  LOG_INFO("write of reference table %s failed, rolled back on every shard: %s", setup_.table.c_str(),
           why.message.c_str());
  std::string out;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

void ReferenceWrite::on_leg_lost(size_t index, const Status& why) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index, why.message);
    return;
  }
  fail(Status::server("08006", "write of reference table " + setup_.table + ": lost shard " +
                                   servers_.shard(index) + ", rolled back on every shard: " + why.message));
}

}  // namespace sw::session
