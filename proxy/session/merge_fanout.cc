#include "session/merge_fanout.h"

#include "common/log.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

std::string MergeFanout::collation_query() const { return merge::shard_collations_query(plan_.tables); }

MergeFanout::MergeFanout(const std::vector<Fanout::Target>& targets, merge::MergePlan plan,
                         ServerState session_state, const config::Fanout& limits,
                         std::function<void(std::string_view)> write_client,
                         std::function<bool()> client_full, std::function<void(const Counters&)> done)
    : merger_(plan, targets.size(), static_cast<size_t>(limits.max_groups)),
      plan_(std::move(plan)),
      session_state_(std::move(session_state)),
      max_rows_buffered_(static_cast<size_t>(limits.max_rows_buffered)),
      write_client_(std::move(write_client)),
      client_full_(std::move(client_full)),
      done_(std::move(done)) {
  merger_.set_max_distinct_values(static_cast<size_t>(limits.max_distinct_values));
  for (const auto& target : targets) {
    LegEngine::Target engine_target;
    engine_target.pool = target.pool;
    engine_target.shard = target.shard;
    engine_target.begin.clear();  // a read opens no transaction of its own
    engine_targets_.push_back(std::move(engine_target));
  }
  messages_.resize(engine_targets_.size());
  answers_.assign(engine_targets_.size(), Answer::Collations);
  collations_.resize(engine_targets_.size());
  for (size_t i = 0; i < messages_.size(); ++i)
    wire::encode_query(messages_[i], collation_query() + leg_sql(i));
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

// A leg still running when the merge goes away (the session closes) is cancelled; the engine
// closes its server.
MergeFanout::~MergeFanout() {
  if (!engine_) return;
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (!done(i)) engine_->cancel(i);
  }
}

void MergeFanout::watch_start(StartingReads& reads, uint64_t version) {
  watch_reads_ = &reads;
  watch_version_ = version;
}

void MergeFanout::start() {
  engine_ = held_.engine(std::move(engine_targets_), session_state_, "a merged read",
                         static_cast<LegEngine::Runner&>(*this));
  if (watch_reads_ != nullptr)
    engine_->watch_start(*watch_reads_, watch_version_,
                         [this](size_t leg) { return engine_->has_answered(leg) || done(leg); });
  engine_->start();
}

void MergeFanout::on_no_server(const Status& why) { fail(why); }

void MergeFanout::on_leg_lost(size_t index, const Status& why) {
  answers_[index] = Answer::Done;
  fail(Status::server("08006", why.message));
}

void MergeFanout::on_leg_violation(size_t /*leg*/, const Status& why) { fail(why); }

// The message was consumed: a held server goes back to the session with nothing of it left to
// read.
bool MergeFanout::on_leg_refused(size_t /*leg*/, const Status& why) {
  fail(why);
  return true;
}

bool MergeFanout::waits(size_t index) const {
  if (parked_) return true;  // a parked merge's legs wait for the portal's next Execute
  if (held_.kept() && done(index)) return true;
  return !draining_ && merger_.buffered(index) >= max_rows_buffered_;
}

// Reads the leg's messages while the merger has room for its rows; pump() resumes it.
bool MergeFanout::on_leg_message(size_t index, const LegEngine::Message& message) {
  if (waits(index)) {
    engine_->hold(index);
    return true;
  }
  return took(index, handle_message(index, message.type, message.frame, message.body));
}

// A leg that ended its statement goes back to its pool, unless it is the session's (borrowed, or
// any leg inside the client's transaction: it stays for the hand-back).
void MergeFanout::on_leg_ready(size_t index) {
  if (!done(index) || held_.in_transaction || engine_->backend(index) == nullptr) return;
  engine_->release(index, engine_->status(index) == 'I');
  pump();
}

void MergeFanout::on_leg_caught_up(size_t /*leg*/) { pump(); }

Status MergeFanout::handle_message(size_t index, char type, std::string_view frame, std::string_view body) {
  const std::string& shard = engine_->shard(index);
  const bool injected = engine_->injected(index);  // the prologue's, or the collation query's
  switch (type) {
    case 'Z': {
      if (injected) return Status::ok();  // the engine counts it
      const bool completed = answers_[index] == Answer::Completed;
      answers_[index] = Answer::Done;
      if (draining_) return Status::ok();
      if (!completed && !errored_)
        return Status::server("08P01", "shard " + shard + " ended the statement without a result");
      return merger_.finish_leg(index);
    }
    case 'E':
      if (injected) {
        LOG_WARN("shard %s refused session settings", shard.c_str());
        return Status::ok();
      }
      // Relayed now; the read fails once the frame is consumed (on_leg_refused).
      if (!errored_ && !closing_) write_client_(frame);
      errored_ = true;
      return Status::server("XX000", "shard " + shard + " reported an error");
    case 'N':
      if (!injected) write_client_(frame);
      return Status::ok();
    default: break;
  }
  if (injected) return Status::ok();
  if (answers_[index] == Answer::Collations) return collations_message(index, type, body);
  engine_->answered(index);
  switch (type) {
    case 'T':
      // The first RowDescription describes every shard's rows: the others must match it.
      if (Status same = shape_.check(index, shard, body); !same) return same;
      if (described_) return Status::ok();
      shard_columns_.described_by = &collations_[index];
      return describe(frame, body);
    case 'D': {
      if (draining_) return Status::ok();  // every row the client needs went out
      auto row = merge::decode_data_row(body);
      if (!row) return Status::server("08P01", "shard " + shard + " sent a malformed DataRow");
      return merger_.push(index, std::move(*row));
    }
    case 'C': answers_[index] = Answer::Completed; return Status::ok();
    case '1':
    case '2': return Status::ok();  // the extended protocol's: the client's come from describe()
    default:
      return Status::server(
          "0A000", "shard " + shard + " answered with a message shardwire cannot merge ('" + type + "')");
  }
}

Status MergeFanout::collations_message(size_t index, char type, std::string_view body) {
  const std::string& shard = engine_->shard(index);
  switch (type) {
    case 'T': return Status::ok();
    case 'D': {
      auto row = merge::decode_data_row(body);
      std::optional<merge::ShardCollations> collations;
      if (row && row->size() == 3)
        collations = merge::parse_shard_collations((*row)[0], (*row)[1], (*row)[2]);
      if (!collations)
        return Status::server("08P01", "shard " + shard + " answered the collation query malformed");
      collations_[index] = std::move(*collations);
      return Status::ok();
    }
    case 'C':
      answers_[index] = Answer::Rows;
      if (extended_) engine_->inject_ready(index, 1);  // the collation query's own ReadyForQuery
      return check_collations();
    default:
      return Status::server(
          "08P01",
          "shard " + shard + " answered the collation query with an unexpected message ('" + type + "')");
  }
}

Status MergeFanout::check_collations() const {
  if (!described_) return Status::ok();
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (answers_[i] == Answer::Collations) continue;
    Status checked =
        merge::check_text_collations(merger_.compared_text(), plan_, shard_columns_, collations_[i]);
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
      for (size_t i = 0; i < answers_.size(); ++i) all_done = all_done && done(i);
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
    if (held_.kept()) {
      pumping_ = true;
      const bool drained = drain_held_legs();
      pumping_ = false;
      if (!drained) return;
    }
    for (size_t i = 0; i < answers_.size(); ++i) {
      if (!done(i)) stop_leg(i, false);
    }
    finish();
    return;
  }
  for (size_t i = 0; i < answers_.size(); ++i) {
    if (!done(i) && engine_->held(i) && !waits(i)) {
      engine_->resume(i);
      if (finished_ || parked_) return;  // parked by that leg's rows: park() held every leg
    }
  }
}

void MergeFanout::on_client_drained() { pump(); }

// A leg whose answer is not needed (or cannot be trusted): cancelled and closed unless clean.
void MergeFanout::stop_leg(size_t index, bool clean) {
  answers_[index] = Answer::Done;
  if (!clean) engine_->cancel(index);
  engine_->release(index, clean);
}

// `why` reaches the client unless a shard's own error did already (handle_message).
void MergeFanout::fail(const Status& why) {
  if (finished_) return;
  if (error_.is_ok()) error_ = why;
  if (!held_.kept()) {  // a kept leg goes back to the session, owing its answers
    for (size_t i = 0; i < answers_.size(); ++i) stop_leg(i, false);
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
  engine_->end_watch();
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
  if (!held_.in_transaction) wire::encode_ready_for_query(out, 'I');
  if (!out.empty()) write_client_(out);
  if (held_.kept()) hand_back_held();
  done_(Counters{merger_.rows_in(), rows_out_});
}

}  // namespace sw::session
