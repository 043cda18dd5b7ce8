// ReferenceWrite: a write of a reference table on every shard, or an INSERT ... SELECT between
// co-located sharded tables on some shards, committed together (docs/architecture.md §6.3, §6.4).
#include "session/reference_write.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {
namespace {
// The client's result is held until every shard answered: RETURNING of a write this large is
// refused (54000) rather than held without bound.
constexpr size_t kMaxHeldResult = 64u << 20;

// The row count at the end of an INSERT/UPDATE/DELETE/MERGE tag ("INSERT 0 12" -> 12).
bool row_count(std::string_view tag, uint64_t& count) {
  const size_t space = tag.rfind(' ');
  if (space == std::string_view::npos || space + 1 == tag.size()) return false;
  count = 0;
  for (char c : tag.substr(space + 1)) {
    if (c < '0' || c > '9') return false;
    count = count * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

ReferenceWrite::ReferenceWrite(std::vector<Target> targets, Setup setup, Callbacks callbacks)
    : legs_(targets.size()),
      setup_(described(std::move(setup))),
      servers_(std::move(targets), setup_.session_state, setup_.what, *this),
      callbacks_(std::move(callbacks)) {}

ReferenceWrite::~ReferenceWrite() = default;

// Shared by the constructor's initializers: `what` defaults to the reference write's wording.
ReferenceWrite::Setup ReferenceWrite::described(Setup setup) {
  if (setup.what.empty()) setup.what = "write of reference table " + setup.table;
  return setup;
}

void ReferenceWrite::start() { servers_.start(); }

void ReferenceWrite::cancel() {
  if (phase_ != Phase::Writing) return;
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i].ready_owed > 0) servers_.cancel(i);
  }
}

void ReferenceWrite::on_no_server(const Status& why) { fail(why); }

// The client's settings, BEGIN and the client's statement, in one write.
void ReferenceWrite::on_leg_server(size_t index, std::string prologue, int ready_owed) {
  prologue += setup_.queries.empty() ? setup_.query : setup_.queries[index];
  legs_[index].ready_owed += ready_owed + 1;
  servers_.write(index, prologue);
}

// Before the commit a violation fails the write; during the two-phase commit it drops only that
// leg (the coordinator decides what its loss means).
void ReferenceWrite::on_leg_violation(size_t index, const Status& why) {
  if (phase_ != Phase::TwoPhase) {
    fail(why);
    return;
  }
  servers_.release(index, false);
  two_phase_->on_lost(index, why.message);
}

Status ReferenceWrite::on_leg_message(size_t index, const Message& message) {
  const auto [type, frame, body] = message;
  Leg& leg = legs_[index];
  switch (type) {
    case 'Z': return Status::ok();
    case '1':
      if (setup_.hide_parse_complete) return Status::ok();
      [[fallthrough]];
    case '2':
    case 'n':
    case 's':  // PortalSuspended: the client's Execute had a row limit; no CommandComplete then
    case 'N':
    case 'T':
    case 'D':
      if (phase_ == Phase::Writing && leg.ready_owed == 1) return hold(index, type, frame);
      return Status::ok();
    case 'C':
      if (phase_ == Phase::Writing && leg.ready_owed == 1) {
        if (auto tag = wire::decode_command_complete(body)) leg.tag.assign(*tag);
      }
      return Status::ok();
    case 'E': {
      Status error = EveryShardTransaction::error_of(body);
      if (phase_ == Phase::TwoPhase) {
        two_phase_->on_error(index, error);
        return Status::ok();
      }
      error.message =
          setup_.what + " failed on shard " + servers_.shard(index) + ", " + undone() + ": " + error.message;
      fail(error);
      return Status::ok();
    }
    default: break;
  }
  return Status::server("08P01", "shard " + servers_.shard(index) + " answered a " + setup_.what +
                                     " with an unexpected "
                                     "message ('" +
                                     std::string(1, type) + "')");
}

// A message of the answer to the statement, held for the client until every shard answered:
// EqualTags, the first shard's (the copies are equal, so its rows are the rows); SumRows, every
// shard's rows and notices, and once each the ParseComplete, BindComplete and RowDescription (or
// NoData) that came first.
Status ReferenceWrite::hold(size_t index, char type, std::string_view frame) {
  if (setup_.answer == Answer::EqualTags && index != 0) return Status::ok();
  if (setup_.answer == Answer::SumRows && type != 'D' && type != 'N') {
    if (held_once_.find(type) != std::string::npos) return Status::ok();
    held_once_.push_back(type);  // every shard sends it before its rows: the first one is in place
  }
  if (result_.size() + frame.size() > kMaxHeldResult) {
    fail(Status::client("54000", "the result of a " + setup_.what + " is over " +
                                     std::to_string(kMaxHeldResult >> 20) +
                                     " MiB, which shardwire holds until every shard answered; the "
                                     "write was " +
                                     undone() + " (RETURNING fewer rows)"));
    return Status::ok();
  }
  result_.append(frame);
  return Status::ok();
}

void ReferenceWrite::on_leg_ready(size_t index) {
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
  if (Status error = answer_tag(); !error) {
    fail(error);
    return;
  }
  if (setup_.in_transaction) {
    finish_in_transaction();
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
      setup_.what, callbacks_.two_phase,
      [this](size_t leg, const std::string& sql) { servers_.send_query(leg, sql); },
      [this](TwoPhaseOutcome outcome, const Status& error) { finish(outcome, error); });
  two_phase_->start(servers_.shard_names(), written);
}

// EqualTags: the shards' tags must be equal (else their copies differ). SumRows: the first tag's
// command with the sum of the counts (`INSERT 0 <sum>`, `UPDATE <sum>`, `DELETE <sum>`).
Status ReferenceWrite::answer_tag() {
  std::string answers;
  bool equal = true;
  uint64_t total = 0;
  for (size_t i = 0; i < legs_.size(); ++i) {
    equal = equal && legs_[i].tag == legs_.front().tag;
    answers += (answers.empty() ? "" : ", ") + servers_.shard(i) + ": " + legs_[i].tag;
    uint64_t count = 0;
    if (setup_.answer == Answer::SumRows && !row_count(legs_[i].tag, count)) {
      return Status::server("08P01", "shard " + servers_.shard(i) + " answered the " + setup_.what +
                                         " with the tag '" + legs_[i].tag + "', which has no row count");
    }
    total += count;
  }
  if (setup_.answer == Answer::SumRows) {  // "INSERT 0 ", "UPDATE ", "DELETE " and the total
    const std::string& first = legs_.front().tag;
    tag_ = first.substr(0, first.rfind(' ') + 1) + std::to_string(total);
    return Status::ok();
  }
  if (!equal) {
    return Status::server("55000", setup_.what + " " + undone() + ": the shards answered differently (" +
                                       answers + "), so their copies of it differ; run VERIFY REFERENCE " +
                                       setup_.table + " on the admin console and repair the copies");
  }
  tag_ = legs_.front().tag;
  return Status::ok();
}

// Committed: the client gets the held rows and the tag; else the coordinator's error.
void ReferenceWrite::finish(TwoPhaseOutcome outcome, const Status& error) {
  phase_ = Phase::Done;
  release_servers(true, outcome == TwoPhaseOutcome::Committed ? Status::ok() : error);  // idle now
  std::string out;
  if (outcome == TwoPhaseOutcome::Committed) {
    out = std::move(result_);
    if (!tag_.empty()) wire::encode_command_complete(out, tag_);  // empty: PortalSuspended came
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
  release_servers(false, why);  // closed (or the session's: it rolls them back), so nothing changes
  LOG_INFO("%s failed, %s: %s", setup_.what.c_str(), undone(), why.message.c_str());
  std::string out;
  wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  if (!setup_.in_transaction) wire::encode_ready_for_query(out, 'I');
  callbacks_.write_client(out);
  callbacks_.done();
}

const char* ReferenceWrite::undone() const {
  return setup_.in_transaction ? "the transaction is aborted" : "rolled back on every shard";
}

void ReferenceWrite::on_leg_handed(size_t index, EveryShardTransaction::Handed& handed) const {
  handed.ready_owed = legs_[index].ready_owed;
  handed.wrote = true;
}

// Its end without a result the session could refuse (outside a transaction, or failed).
void ReferenceWrite::release_servers(bool clean, const Status& error) {
  servers_.end_settled(setup_.in_transaction, clean, error, callbacks_.hand_back);
}

// Inside the client's transaction every shard wrote: the servers stay in it, the client gets the
// first shard's rows and the tag; its ReadyForQuery is the session's.
void ReferenceWrite::finish_in_transaction() {
  phase_ = Phase::Done;
  const Status verdict = servers_.end(setup_.in_transaction, true, Status::ok(), callbacks_.hand_back);
  std::string out;
  if (verdict.is_ok()) {
    out = std::move(result_);
    if (!tag_.empty()) wire::encode_command_complete(out, tag_);  // empty: PortalSuspended came
  } else {
    wire::encode_error(out, "ERROR", verdict.sqlstate, verdict.message);
  }
  callbacks_.write_client(out);
  callbacks_.done();
}

void ReferenceWrite::on_leg_lost(size_t index, const Status& why) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index, why.message);
    return;
  }
  fail(Status::server(
      "08006", setup_.what + ": lost shard " + servers_.shard(index) + ", " + undone() + ": " + why.message));
}

}  // namespace sw::session
