#include "session/merge_fanout.h"

#include "common/log.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

std::string MergeFanout::collation_query() const { return merge::shard_collations_query(plan_.tables); }

MergeFanout::MergeFanout(std::vector<Fanout::Target> targets, merge::MergePlan plan,
                         std::string session_state, const config::Fanout& limits,
                         std::function<void(std::string_view)> write_client,
                         std::function<bool()> client_full, std::function<void(const Counters&)> done)
    : merger_(plan, targets.size(), static_cast<size_t>(limits.max_groups)),
      plan_(std::move(plan)),
      session_state_(std::move(session_state)),
      max_rows_buffered_(static_cast<size_t>(limits.max_rows_buffered)),
      write_client_(std::move(write_client)),
      client_full_(std::move(client_full)),
      done_(std::move(done)) {
  for (auto& target : targets) legs_.push_back(Leg{std::move(target)});
  for (size_t i = 0; i < legs_.size(); ++i)
    wire::encode_query(legs_[i].message, collation_query() + leg_sql(i));
}

const std::string& MergeFanout::leg_sql(size_t index) const {
  static const std::string kNone;
  if (plan_.shard_statements.empty()) return plan_.shard_sql;
  return index < plan_.shard_statements.size() ? plan_.shard_statements[index].sql : kNone;
}

std::vector<Fanout::Target> MergeFanout::plan_targets(std::vector<Fanout::Target> targets,
                                                      const merge::MergePlan& plan) {
  if (plan.shard_statements.empty()) return targets;
  std::vector<Fanout::Target> chosen;
  chosen.reserve(plan.shard_statements.size());
  for (const merge::ShardStatement& statement : plan.shard_statements) {
    if (statement.shard < 0 || static_cast<size_t>(statement.shard) >= targets.size()) continue;
    chosen.push_back(targets[static_cast<size_t>(statement.shard)]);
  }
  return chosen;
}

MergeFanout::~MergeFanout() {
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    if (leg.backend != nullptr) stop_leg(leg, false);
  }
}

void MergeFanout::watch_start(StartingReads& reads, uint64_t version) {
  start_watch_.begin(reads, version, legs_, [this](const Status& why) { fail(why); });
}

void MergeFanout::start() {
  for (size_t i = 0; i < legs_.size() && !finished_; ++i) {
    if (legs_[i].lent != nullptr) {
      send_first(legs_[i], legs_[i].lent);
      read_leg(i);
      continue;
    }
    legs_[i].waiting = true;
    if (pool::Backend* backend = legs_[i].target.pool->acquire(this)) on_backend_ready(backend);
  }
}

void MergeFanout::on_backend_ready(pool::Backend* backend) {
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = legs_[i];
    if (!leg.waiting || leg.target.pool != &backend->pool()) continue;
    leg.waiting = false;
    send_first(leg, backend);
    read_leg(i);
    return;
  }
  backend->pool().release(backend, true);  // nobody waits any more
}

void MergeFanout::on_backend_failed(const Status& why) {
  for (Leg& leg : legs_) leg.waiting = false;
  fail(why);
}

void MergeFanout::on_backend_readable(pool::Backend& backend) {
  const size_t index = index_of(backend);
  if (index < legs_.size()) read_leg(index);
}

void MergeFanout::on_backend_lost(pool::Backend& backend, const Status& why) {
  const size_t index = index_of(backend);
  if (index < legs_.size()) {
    legs_[index].backend = nullptr;
    legs_[index].done = true;
  }
  fail(Status::server("08006", why.message));
}

size_t MergeFanout::index_of(pool::Backend& backend) const {
  for (size_t i = 0; i < legs_.size(); ++i) {
    if (legs_[i].backend == &backend) return i;
  }
  return legs_.size();
}

// Reads the leg's messages while the merger has room for its rows.
void MergeFanout::read_leg(size_t index) {
  const std::weak_ptr<int> alive = alive_;
  wire::Limits limits;
  while (!finished_ && !parked_) {  // a parked merge's legs wait for the portal's next Execute
    Leg& leg = legs_[index];
    if (leg.backend == nullptr || (held_.active() && leg.done)) break;
    net::Connection& connection = leg.backend->connection();
    if (!draining_ && merger_.buffered(index) >= max_rows_buffered_) {
      connection.pause_reading();  // resumed by pump() once the merge took its rows
      leg.paused = true;
      break;
    }
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) break;
    if (result.status == wire::FrameStatus::Error) {
      fail(
          Status::server("08P01", "shard " + leg.target.shard + " sent an invalid message: " + result.error));
      return;
    }
    if (Status shape = leg.check.on_message(result.frame.type, result.frame.body); !shape) {
      fail(Status::server("08P01",
                          "shard " + leg.target.shard + " sent an invalid message: " + shape.message));
      return;
    }
    std::string_view frame(result.frame.body.data() + result.frame.body.size() - result.frame.size,
                           result.frame.size);
    const size_t size = result.frame.size;
    Status handled = handle_message(index, result.frame.type, frame, result.frame.body);
    if (alive.expired()) return;
    if (legs_[index].backend != nullptr) connection.consume(size);
    if (!handled) {
      fail(handled);
      return;
    }
    if (legs_[index].done && legs_[index].backend != nullptr && !held_.active()) {
      pool::Backend* backend = legs_[index].backend;
      legs_[index].backend = nullptr;
      backend->detach();
      legs_[index].target.pool->release(backend, legs_[index].status == 'I');
      break;
    }
  }
  pump();
}

Status MergeFanout::handle_message(size_t index, char type, std::string_view frame, std::string_view body) {
  Leg& leg = legs_[index];
  switch (type) {
    case 'Z':
      if (!body.empty()) leg.status = body[0];
      --leg.ready_owed;
      if (leg.swallow_ready > 0) {
        --leg.swallow_ready;
        return Status::ok();
      }
      leg.done = true;
      if (draining_) return Status::ok();
      if (!leg.complete && !errored_)
        return Status::server("08P01", "shard " + leg.target.shard + " ended the statement without a result");
      return merger_.finish_leg(index);
    case 'E':
      if (leg.swallow_ready > 0) {
        LOG_WARN("shard %s refused session settings", leg.target.shard.c_str());
        return Status::ok();
      }
      // Relayed now; read_leg fails the read once the frame is consumed (a held server goes back
      // to the session then, with nothing of this frame left to read).
      if (!errored_ && !closing_) write_client_(frame);
      errored_ = true;
      return Status::server("XX000", "shard " + leg.target.shard + " reported an error");
    case 'S':
      if (auto p = wire::decode_parameter_status(body)) leg.backend->set_parameter(p->name, p->value);
      return Status::ok();
    case 'N':
      if (leg.swallow_ready == 0) write_client_(frame);
      return Status::ok();
    case 'A': return Status::ok();
    default: break;
  }
  if (leg.swallow_ready > 0) return Status::ok();
  if (leg.preamble) return preamble_message(leg, type, body);
  if (!leg.answered) {
    leg.answered = true;
    start_watch_.end_once_started(legs_);
  }
  switch (type) {
    case 'T':
      if (described_) return Status::ok();
      shard_columns_.described_by = &leg.collations;
      return describe(frame, body);
    case 'D': {
      if (draining_) return Status::ok();  // every row the client needs went out
      auto row = merge::decode_data_row(body);
      if (!row) return Status::server("08P01", "shard " + leg.target.shard + " sent a malformed DataRow");
      return merger_.push(index, std::move(*row));
    }
    case 'C': leg.complete = true; return Status::ok();
    case '1':
    case '2': return Status::ok();  // the extended protocol's: the client's come from describe()
    default:
      return Status::server("0A000", std::string("shard ") + leg.target.shard +
                                         " answered with a message shardwire cannot merge ('" + type + "')");
  }
}

Status MergeFanout::preamble_message(Leg& leg, char type, std::string_view body) {
  switch (type) {
    case 'T': return Status::ok();
    case 'D': {
      auto row = merge::decode_data_row(body);
      std::optional<merge::ShardCollations> collations;
      if (row && row->size() == 3)
        collations = merge::parse_shard_collations((*row)[0], (*row)[1], (*row)[2]);
      if (!collations)
        return Status::server("08P01",
                              "shard " + leg.target.shard + " answered the collation query malformed");
      leg.collations = std::move(*collations);
      return Status::ok();
    }
    case 'C':
      leg.preamble = false;
      if (extended_) ++leg.swallow_ready;  // the collation query's own ReadyForQuery
      return check_collations();
    default:
      return Status::server("08P01", std::string("shard ") + leg.target.shard +
                                         " answered the collation query with an unexpected message ('" +
                                         type + "')");
  }
}

Status MergeFanout::check_collations() const {
  if (!described_) return Status::ok();
  for (const Leg& leg : legs_) {
    if (leg.preamble) continue;
    Status checked =
        merge::check_text_collations(merger_.compared_text(), plan_, shard_columns_, leg.collations);
    if (!checked) return checked;
  }
  return Status::ok();
}

// Moves merged rows to the client while it keeps up, resumes legs the merge has room for, and
// ends the statement when every row went out (stopping legs no longer needed).
void MergeFanout::pump() {
  if (parked_) return;
  if (draining_ && !finished_ && !pumping_) {
    pumping_ = true;
    const bool drained = drain_held_legs();
    pumping_ = false;
    if (drained) finish();
    return;
  }
  if (finished_ || pumping_ || !described_) {
    if (!finished_ && !pumping_) {
      bool all_done = true;
      for (const Leg& leg : legs_) all_done = all_done && leg.done;
      if (all_done) finish();  // no shard described a result: finish() reports it
    }
    return;
  }
  pumping_ = true;
  std::string out;
  while (!client_full_()) {
    auto next = merger_.next();
    if (!next) {
      pumping_ = false;
      if (!out.empty()) write_client_(out);
      fail(next.status());
      return;
    }
    if (!next->has_value()) break;
    if (Status encoded = encode_row(out, **next); !encoded) {
      pumping_ = false;
      fail(encoded);
      return;
    }
    ++rows_out_;
    if (out.size() > size_t{64} * 1024) {
      write_client_(out);
      out.clear();
    }
    if (row_limit_ > 0 && rows_out_ >= row_limit_) {
      suspended_ = true;
      break;
    }
  }
  if (!out.empty()) write_client_(out);
  pumping_ = false;
  if (suspended_ && on_parked_ && !closing_) {
    park();
    return;
  }
  if (suspended_ || merger_.done()) {
    if (held_.active()) {
      pumping_ = true;
      const bool drained = drain_held_legs();
      pumping_ = false;
      if (!drained) return;
    }
    for (Leg& leg : legs_) {
      if (!leg.done) stop_leg(leg, false);
    }
    finish();
    return;
  }
  for (size_t i = 0; i < legs_.size(); ++i) {
    Leg& leg = legs_[i];
    if (leg.paused && leg.backend != nullptr && merger_.buffered(i) < max_rows_buffered_) {
      leg.paused = false;
      leg.backend->connection().resume_reading();
      read_leg(i);
      if (finished_ || parked_) return;  // parked by that leg's rows: park() paused every leg
    }
  }
}

void MergeFanout::on_client_drained() { pump(); }

void MergeFanout::cancel() {
  if (parked_) return;  // nothing runs for the client
  for (Leg& leg : legs_) {
    if (leg.backend != nullptr && !leg.done) leg.target.pool->send_cancel(*leg.backend);
  }
}

// A leg whose answer is not needed (or cannot be trusted): cancelled and closed unless clean.
void MergeFanout::stop_leg(Leg& leg, bool clean) {
  leg.done = true;
  if (leg.backend == nullptr) return;
  pool::Backend* backend = leg.backend;
  leg.backend = nullptr;
  backend->detach();
  if (!clean) leg.target.pool->send_cancel(*backend);
  leg.target.pool->release(backend, clean);
}

// `why` reaches the client unless a shard's own error did already (handle_message).
void MergeFanout::fail(const Status& why) {
  if (finished_) return;
  if (error_.is_ok()) error_ = why;
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    leg.waiting = false;
    if (!held_.active()) stop_leg(leg, false);  // a held server goes back to the session, owing its answers
  }
  if (!errored_) {
    errored_ = true;
    std::string out;
    wire::encode_error(out, "ERROR", why.sqlstate, why.message);
    if (!closing_) write_client_(out);
  }
  finish();
}

void MergeFanout::finish() {
  if (finished_) return;
  finished_ = true;
  start_watch_.end();
  std::string out;
  if (!errored_ && !closing_) {
    if (!described_) {
      wire::encode_error(out, "ERROR", "08P01", "no shard described the merged result");
    } else if (suspended_) {
      wire::MessageWriter(out).begin('s').end();  // PortalSuspended
    } else {
      wire::encode_command_complete(out, "SELECT " + std::to_string(rows_out_ - rows_before_execute_));
    }
  }
  if (!held_.in_transaction()) wire::encode_ready_for_query(out, 'I');
  if (!out.empty()) write_client_(out);
  if (held_.active()) hand_back_held();
  done_(Counters{merger_.rows_in(), rows_out_});
}

}  // namespace sw::session
