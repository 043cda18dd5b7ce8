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
    : JointWrite(std::move(targets), setup.session_state, what_of(setup), setup.in_transaction,
                 std::move(callbacks)),
      tags_(leg_count()),
      setup_(std::move(setup)) {
  if (setup_.key_move) {
    std::vector<int> leg_shards;
    for (size_t i = 0; i < leg_count(); ++i) leg_shards.push_back(servers_.target(i).index);
    move_ = std::make_unique<KeyMovePlan>(setup_.key_move, std::move(leg_shards), setup_.key_move_client);
  }
}

ReferenceWrite::~ReferenceWrite() = default;

std::string ReferenceWrite::what_of(const Setup& setup) {
  return setup.what.empty() ? "write of reference table " + setup.table : setup.what;
}

std::string_view ReferenceWrite::statement(size_t index) const {
  return setup_.queries.empty() ? setup_.query : setup_.queries[index];
}

bool ReferenceWrite::on_leg_message(size_t index, const Message& message) {
  const char type = message.type;
  const std::string_view frame = message.frame;
  const std::string_view body = message.body;
  if (move_ && message.type != 'E' && message.type != 'Z' && answers_statement(index))
    return took(index, on_move_message(index, message));
  // SumRows: every shard's rows go under the first RowDescription.
  if (type == 'T' && setup_.answer == Answer::SumRows && answers_statement(index) &&
      !same_columns(index, body))
    return true;
  switch (type) {
    case 'Z': return true;
    case '1':
      if (setup_.hide_parse_complete) return true;
      [[fallthrough]];
    case '2':
    case 'n':
    case 's':  // PortalSuspended: the client's Execute had a row limit; no CommandComplete then
    case 'N':
    case 'T':
    case 'D':
      if (answers_statement(index)) return took(index, hold(index, type, frame));
      return true;
    case 'C':
      if (answers_statement(index)) {
        if (auto tag = wire::decode_command_complete(body)) tags_[index].assign(*tag);
      }
      return true;
    case 'E': {
      if (two_phase_error(index, body)) return true;
      Status error = LegEngine::error_of(body);
      error.message =
          what() + " failed on shard " + servers_.shard(index) + ", " + undone() + ": " + error.message;
      fail(error);
      return true;
    }
    default: break;
  }
  return refuse(index,
                Status::server("08P01", "shard " + servers_.shard(index) + " answered a " + what() +
                                            " with an unexpected message ('" + std::string(1, type) + "')"));
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
    fail(Status::client("54000", "the result of a " + what() + " is over " +
                                     std::to_string(kMaxHeldResult >> 20) +
                                     " MiB, which shardwire holds until every shard answered; the "
                                     "write was " +
                                     undone() + " (RETURNING fewer rows)"));
    return Status::ok();
  }
  result_.append(frame);
  return Status::ok();
}

// The statement's RowDescription and rows go through the plan (the client's items only, held
// as usual); its tag is kept. The moves' answers are not the client's.
Status ReferenceWrite::on_move_message(size_t index, const Message& message) {
  if (moving_) return Status::ok();
  std::string client;
  Status taken = Status::ok();
  switch (message.type) {
    case 'T': taken = move_->on_row_description(index, servers_.shard(index), message.body, client); break;
    case 'D': taken = move_->on_data_row(index, message.body, client); break;
    case 'C':  // "SELECT n": the rows the shard updated
      if (auto tag = wire::decode_command_complete(message.body))
        tags_[index] = "UPDATE " + std::string(tag->substr(tag->rfind(' ') + 1));
      return Status::ok();
    case 'n': move_->on_no_data(); return Status::ok();
    case 'N': return hold(index, message.type, message.frame);
    case '1':  // of the client's UPDATE and of the move's statement: the client's is held once
      if (setup_.hide_parse_complete || !setup_.key_move_client.extended) return Status::ok();
      return hold(index, message.type, message.frame);
    case '2':
      if (!setup_.key_move_client.extended) return Status::ok();
      return hold(index, message.type, message.frame);
    default: return Status::ok();  // ParameterDescription of the client's UPDATE
  }
  if (!taken) {
    taken.message =
        what() + " failed on shard " + servers_.shard(index) + ", " + undone() + ": " + taken.message;
    fail(taken);
    return Status::ok();
  }
  if (!client.empty()) return hold(index, message.type, client);
  return Status::ok();
}

// Each leg inserts the new rows its shard owns; false when there are none.
bool ReferenceWrite::start_moves() {
  if (!move_ || moving_) return false;
  moving_ = true;
  if (!move_->moves_any()) return false;
  for (size_t i = 0; i < leg_count(); ++i) {
    const std::string sql = move_->next_statement(i);
    if (!sql.empty()) run_next(i, sql);
  }
  return true;
}

void ReferenceWrite::commit() {
  if (start_moves()) return;  // commit() runs again once every leg answered its moves
  if (Status error = answer_tag(); !error) {
    fail(error);
    return;
  }
  if (setup_.in_transaction) {
    finish_in_transaction();
    return;
  }
  if (tags_.size() == 1) {
    commit_every_leg();
    return;
  }
  std::vector<size_t> written;
  for (size_t i = 0; i < tags_.size(); ++i) written.push_back(i);
  commit_two_phase(written);
}

// EqualTags: the shards' tags must be equal (else their copies differ). SumRows: the first tag's
// command with the sum of the counts (`INSERT 0 <sum>`, `UPDATE <sum>`, `DELETE <sum>`).
Status ReferenceWrite::answer_tag() {
  std::string answers;
  bool equal = true;
  uint64_t total = 0;
  for (size_t i = 0; i < tags_.size(); ++i) {
    equal = equal && tags_[i] == tags_.front();
    answers += (answers.empty() ? "" : ", ") + servers_.shard(i) + ": " + tags_[i];
    uint64_t count = 0;
    if (setup_.answer == Answer::SumRows && !row_count(tags_[i], count)) {
      return Status::server("08P01", "shard " + servers_.shard(i) + " answered the " + what() +
                                         " with the tag '" + tags_[i] + "', which has no row count");
    }
    total += count;
  }
  if (setup_.answer == Answer::SumRows) {  // "INSERT 0 ", "UPDATE ", "DELETE " and the total
    const std::string& first = tags_.front();
    tag_ = first.substr(0, first.rfind(' ') + 1) + std::to_string(total);
    return Status::ok();
  }
  if (!equal) {
    return Status::server("55000", what() + " " + undone() + ": the shards answered differently (" + answers +
                                       "), so their copies of it differ; run VERIFY REFERENCE " +
                                       setup_.table + " on the admin console and repair the copies");
  }
  tag_ = tags_.front();
  return Status::ok();
}

// The held rows and the tag (none when PortalSuspended came instead).
std::string ReferenceWrite::take_answer() {
  std::string out = std::move(result_);
  if (move_ && move_->fetched_by_executes()) {
    if (setup_.in_transaction) rest_ = move_->take_rest();  // the portal stays open (§6.3)
    return out + move_->portal_end();
  }
  if (!tag_.empty()) wire::encode_command_complete(out, tag_);
  return out;
}

}  // namespace sw::session
