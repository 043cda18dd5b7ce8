// SplitInsert: a multi-row INSERT split by shard, its parts in one transaction per shard committed
// together, or left in the client's transaction (docs/architecture.md §5.11).
#include "session/split_insert.h"

#include <utility>

#include "common/log.h"
#include "wire/messages.h"

namespace sw::session {

SplitInsert::SplitInsert(std::vector<Part> parts, Setup setup, Callbacks callbacks)
    : JointWrite(targets_of(parts), setup.session_state, what_of(setup), setup.in_transaction,
                 std::move(callbacks)),
      requests_(parts.size()),
      inserted_(parts.size(), false),
      setup_(std::move(setup)),
      answer_(setup_.row_part, setup_.row_by_row) {
  for (size_t i = 0; i < parts.size(); ++i) requests_[i] = std::move(parts[i].request);
  if (!setup_.unit_part.empty()) batch_ = std::make_unique<BatchAnswer>(setup_.unit_part, setup_.unit_parsed);
}

SplitInsert::~SplitInsert() = default;

std::string SplitInsert::what_of(const Setup& setup) {
  return setup.what.empty() ? "INSERT into sharded table " + setup.table : setup.what;
}

std::vector<LegEngine::Target> SplitInsert::targets_of(std::vector<Part>& parts) {
  std::vector<LegEngine::Target> targets;
  targets.reserve(parts.size());
  for (Part& part : parts) targets.push_back(std::move(part.target));
  return targets;
}

Status SplitInsert::error_of(size_t index, std::string_view body) const {
  Status error = LegEngine::error_of(body);
  error.message = what() + " failed on shard " + servers_.shard(index) + ", " +
                  (batch_ ? "the batch was rolled back on every shard" : undone()) + ": " + error.message;
  return error;
}

bool SplitInsert::on_leg_message(size_t index, const Message& message) {
  const char type = message.type;
  const std::string_view frame = message.frame;
  const std::string_view body = message.body;
  if (batch_ && answers_statement(index)) {
    switch (type) {
      case '2':
      case 'T':
      case 'n':
      case 'D':
      case 'C':
      case 'E': return took(index, on_batch_answer(index, type, frame, body));
      default: break;
    }
  }
  switch (type) {
    case 'Z': return true;
    case '1':
    case '2':
      if (phase_ == Phase::Statement) return true;  // owed to the client in Setup::answered
      break;
    case 'N':
      if (phase_ == Phase::Statement) notices_.append(frame);
      return true;
    case 'E': {
      if (two_phase_error(index, body)) return true;
      Status error = error_of(index, body);
      if (phase_ == Phase::Committing) {
        if (commit_error_) commit_error_ = error;
        return true;
      }
      fail(error);
      return true;
    }
    case 'T':
    case 'n':
    case 'D':
    case 'C':
      if (answers_statement(index)) return took(index, on_part_answer(index, type, frame, body));
      // The settings' set_config row, BEGIN, the joining prologue, COMMIT: not the client's.
      if (type == 'C' || phase_ == Phase::Statement) return true;
      break;
    default: break;
  }
  return refuse(index,
                Status::server("08P01", "shard " + servers_.shard(index) + " answered its part of " + what() +
                                            " with an unexpected message ('" + std::string(1, type) + "')"));
}

// The part's own answer: held in the combiner until every part answered.
Status SplitInsert::on_part_answer(size_t index, char type, std::string_view frame, std::string_view body) {
  Status held = Status::ok();
  // RETURNING: every part's rows go under the first part's RowDescription.
  if (type == 'T' && !same_columns(index, body)) return Status::ok();
  if (type == 'T' || type == 'n') held = answer_.on_row_description(index, frame);
  if (type == 'D') held = answer_.on_data_row(index, frame);
  if (type == 'C') {
    auto tag = wire::decode_command_complete(body);
    if (!tag) return tag.status();
    const long long before = answer_.inserted();
    held = answer_.on_command_complete(index, *tag);
    if (answer_.inserted() > before) inserted_[index] = true;
  }
  if (!held && held.fault != Fault::Server) {
    fail(held);
    return Status::ok();
  }
  return held;
}

// A unit's answer in a batch: held in the batch's order; an error is kept until every leg reached
// its Sync (the batch is then rolled back everywhere and answered up to the failed unit).
Status SplitInsert::on_batch_answer(size_t index, char type, std::string_view frame, std::string_view body) {
  if (type != 'E') {
    Status held = batch_->on_message(index, type, frame);
    if (!held && held.fault != Fault::Server) {
      fail(held);
      return Status::ok();
    }
    return held;
  }
  if (batch_error_) batch_error_ = error_of(index, body);
  return Status::ok();
}

void SplitInsert::on_committed() {
  finish(commit_error_ ? TwoPhaseOutcome::Committed : TwoPhaseOutcome::RolledBack, commit_error_);
}

void SplitInsert::commit() {
  if (batch_) {
    if (!batch_error_ || !batch_->complete()) {
      std::string before = batch_->answered();
      notices_.insert(0, before);  // the units before the failed one are answered first, as a server does
      fail(batch_error_ ? Status::server("08P01", what() + ": a shard did not answer every Execute")
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
  if (setup_.in_transaction) {
    finish_in_transaction();
    return;
  }
  std::vector<size_t> written;
  for (size_t i = 0; i < inserted_.size(); ++i)
    if (batch_ ? batch_->wrote(i) : inserted_[i]) written.push_back(i);
  if (written.size() > 1) {
    commit_two_phase(written);
    return;
  }
  commit_every_leg();
}

// The parts' notices, then the ParseComplete/BindComplete the client is owed first.
std::string SplitInsert::take_preface() {
  std::string out = std::move(notices_);
  out += setup_.answered;
  return out;
}

}  // namespace sw::session
