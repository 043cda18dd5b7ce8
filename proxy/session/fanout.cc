#include "session/fanout.h"

#include <charconv>
#include <utility>

#include "common/log.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

Fanout::Fanout(Mode mode, std::vector<Target> targets, std::string query_message, ServerState session_state,
               std::function<void(std::string_view)> write_client, std::function<void()> done)
    : mode_(mode),
      query_message_(std::move(query_message)),
      session_state_(std::move(session_state)),
      write_client_(std::move(write_client)),
      done_(std::move(done)) {
  for (auto& target : targets) {
    LegEngine::Target engine_target;
    engine_target.pool = target.pool;
    engine_target.shard = target.shard;
    engine_target.begin.clear();  // a fan-out opens no transaction of its own
    engine_targets_.push_back(std::move(engine_target));
    targets_.push_back(std::move(target));
  }
}

Fanout::~Fanout() = default;

void Fanout::keep_servers(std::vector<LegEngine::Target> targets, bool in_transaction,
                          LegEngine::HandBack hand_back, LegEngine& legs) {
  held_.keep(engine_targets_, std::move(targets), in_transaction, std::move(hand_back), legs);
}

void Fanout::watch_start(StartingReads& reads, uint64_t version) {
  watch_reads_ = &reads;
  watch_version_ = version;
}

void Fanout::start() {
  const char* what = mode_ == Mode::ConcatenateRows   ? "a scatter read"
                     : mode_ == Mode::OneAfterAnother ? "DDL"
                                                      : "COMMIT/ROLLBACK PREPARED";
  engine_ =
      held_.engine(std::move(engine_targets_), session_state_, what, static_cast<LegEngine::Runner&>(*this));
  if (watch_reads_ != nullptr)
    engine_->watch_start(*watch_reads_, watch_version_,
                         [this](size_t leg) { return engine_->has_answered(leg) || leg < current_; });
  if (mode_ == Mode::ConcatenateRows) {
    engine_->start();
  } else {
    engine_->start_leg(0);
  }
}

// The session's settings when the server lacks them, a held leg's `begin`, then the statement.
void Fanout::on_leg_server(size_t index, std::string prologue) {
  const Target& target = targets_[index];
  prologue += target.query_message.empty() ? query_message_ : target.query_message;
  engine_->expect_ready(index, 1);
  engine_->write(index, prologue);
}

// Only the current leg's answers are taken; another leg waits for its turn (held), and counts as
// started once its server sent anything but its prologue's answers.
bool Fanout::on_leg_message(size_t index, const LegEngine::Message& message) {
  if (index != current_) {
    if (!engine_->injected(index)) engine_->answered(index);
    engine_->hold(index);
    return true;
  }
  return took(index, handle_message(index, message.type, message.frame, message.body));
}

// The current leg's last ReadyForQuery due: its epilogue follows (its answer swallowed), or the
// leg is done.
void Fanout::on_leg_ready(size_t index) {
  if (index != current_ || engine_->ready_owed(index) > 0) return;
  const Target& target = targets_[index];
  if (!epilogue_sent_ && !target.epilogue_sql.empty() && !errored_) {
    epilogue_sent_ = true;
    engine_->expect_ready(index, 1);
    engine_->send_query(index, target.epilogue_sql);
    return;
  }
  finish_leg(index);
}

// The message was consumed: a held server goes back with nothing of it left to read.
bool Fanout::on_leg_refused(size_t /*leg*/, const Status& why) {
  fail(why);
  return true;
}

// A broken or hostile server: fail() closes it rather than return it to the pool.
void Fanout::on_leg_violation(size_t /*leg*/, const Status& why) { fail(why); }

void Fanout::on_leg_lost(size_t /*leg*/, const Status& why) { fail(Status::server("08006", why.message)); }

void Fanout::on_no_server(const Status& why) { fail(why); }

Status Fanout::handle_message(size_t index, char type, std::string_view frame, std::string_view body) {
  const bool injected = engine_->injected(index) || epilogue_sent_;
  if (!injected) engine_->answered(index);
  if (mode_ == Mode::FirstToSucceed && !injected && type != 'Z') {
    try_answer(type, frame, body);
    return Status::ok();
  }
  switch (type) {
    case 'Z': return Status::ok();  // counted by the engine: on_leg_ready goes on
    case 'E': {
      if (engine_->injected(index))
        LOG_WARN("shard %s refused session settings", engine_->shard(index).c_str());
      if (errored_) return Status::ok();
      errored_ = true;
      error_ = Status::server("XX000", "shard " + engine_->shard(index) + " reported an error");
      if (mode_ == Mode::OneAfterAnother) {
        auto fields = wire::decode_error_fields(body);
        std::string out;
        wire::encode_error(out, "ERROR", fields ? fields->sqlstate : "XX000",
                           fields ? fields->message : "statement failed", applied_summary(current_));
        write_client_(out);
      } else {
        write_client_(frame);
      }
      return Status::ok();
    }
    case 'N':
      if (!injected && (mode_ == Mode::ConcatenateRows || current_ == 0)) write_client_(frame);
      return Status::ok();
    default: break;
  }
  if (injected || errored_) return Status::ok();
  return relay_answer(index, type, frame, body);
}

// The answer to the client's statement: merged into the one answer the client gets.
Status Fanout::relay_answer(size_t index, char type, std::string_view frame, std::string_view body) {
  switch (type) {
    case 'T': {
      if (mode_ != Mode::ConcatenateRows) return Status::ok();
      // Every shard's rows go under the first shard's RowDescription: the others must match it.
      if (Status same = shape_.check(index, engine_->shard(index), body); !same) return same;
      if (!row_description_sent_) write_client_(frame);
      row_description_sent_ = true;
      return Status::ok();
    }
    case 'D':
      if (mode_ == Mode::ConcatenateRows) write_client_(frame);
      return Status::ok();
    case 'C': {
      auto tag = wire::decode_command_complete(body);
      std::string_view text = tag ? *tag : std::string_view();
      if (mode_ == Mode::ConcatenateRows) {
        size_t space = text.rfind(' ');
        uint64_t n = 0;
        if (space != std::string_view::npos)
          std::from_chars(text.data() + space + 1, text.data() + text.size(), n);
        rows_ += n;
        command_tag_ = std::string(text.substr(0, space));
      } else if (command_tag_.empty()) {
        command_tag_ = std::string(text);
      }
      return Status::ok();
    }
    case 'I': return Status::ok();
    case 'H':
    case 'd':
    case 'c': {
      if (mode_ != Mode::ConcatenateRows) return Status::ok();
      if (!copy_) {
        std::vector<std::string> shards;
        for (size_t i = 0; i < targets_.size(); ++i) shards.push_back(engine_->shard(i));
        copy_.emplace(targets_.size(), targets_.front().copy_csv_header, std::move(shards));
      }
      std::string out;
      if (Status joined = copy_->on_message(index, type, frame, body, out); !joined) return joined;
      if (!out.empty()) write_client_(out);
      return Status::ok();
    }
    case '1':
    case '2':
    case 'n': {
      bool& sent = type == '1'   ? parse_complete_sent_
                   : type == '2' ? bind_complete_sent_
                                 : row_description_sent_;
      if (mode_ == Mode::ConcatenateRows && !sent) write_client_(frame);
      sent = true;
      return Status::ok();
    }
    default:
      return Status::server("0A000", "shard " + engine_->shard(index) +
                                         " answered with a message shardwire cannot merge ('" + type + "')");
  }
}

// FirstToSucceed: the current leg's answer is kept until its end. A miss (42704, 0A000) drops
// it, the first miss kept for the client; any other error is the client's (the run stops).
void Fanout::try_answer(char type, std::string_view frame, std::string_view body) {
  if (type == '1' && parse_complete_sent_) return;  // the client sent no Parse
  attempt_.append(frame);
  if (type != 'E') return;
  auto fields = wire::decode_error_fields(body);
  // 0A000: "prepared transaction belongs to another database" (PostgreSQL's code for it).
  const bool missed = fields && (fields->sqlstate == "42704" || fields->sqlstate == "0A000");
  if (missed) {
    const bool unknown = fields->sqlstate == "42704";
    if (missed_.empty() || (unknown && !missed_unknown_)) {
      missed_ = std::move(attempt_);
      missed_unknown_ = unknown;
    }
    attempt_.clear();
    return;
  }
  errored_ = true;
  error_ = Status::server("XX000", "shard " + engine_->shard(current_) + " reported an error");
}

// A leg read to its end goes back to its pool, unless it is the session's (borrowed, or any leg
// inside the client's transaction: kept to the end). The next leg's answers, held until now, are
// read.
void Fanout::finish_leg(size_t index) {
  if (!held_.in_transaction) engine_->release(index, engine_->status(index) == 'I');
  ++current_;
  epilogue_sent_ = false;
  if (mode_ == Mode::FirstToSucceed && !attempt_.empty()) {
    write_client_(attempt_);  // this shard finished it, or failed it for another reason
    errored_ = true;          // its answer is written: complete() adds only ReadyForQuery
  }
  if (current_ == targets_.size() || (mode_ != Mode::ConcatenateRows && errored_)) {
    complete();
    return;
  }
  if (mode_ != Mode::ConcatenateRows) {
    engine_->start_leg(current_);
  } else {
    engine_->resume(current_);
  }
}

// A kept leg goes back to the session (complete), owing the answers it did not give yet.
void Fanout::fail(const Status& why) {
  if (finished_) return;
  if (error_.is_ok()) error_ = why;
  if (!held_.kept()) engine_->release_all(false);
  if (!errored_) {
    std::string out;
    wire::encode_error(out, "ERROR", why.sqlstate, why.message,
                       mode_ == Mode::OneAfterAnother ? applied_summary(current_) : std::string());
    write_client_(out);
    errored_ = true;
  }
  complete();
}

void Fanout::complete() {
  if (finished_) return;
  finished_ = true;
  engine_->end_watch();
  std::string out;
  if (mode_ == Mode::FirstToSucceed && !errored_) {
    out = std::move(missed_);  // no shard knew the gid: the first one's answer
    errored_ = true;
  }
  if (!errored_) {
    std::string tag =
        mode_ == Mode::ConcatenateRows ? command_tag_ + " " + std::to_string(rows_) : command_tag_;
    wire::encode_command_complete(out, tag);
  }
  if (!held_.in_transaction) wire::encode_ready_for_query(out, 'I');
  if (!out.empty()) write_client_(out);
  if (held_.kept()) {
    current_ = targets_.size();  // every leg is done
    held_.end(*engine_, errored_ ? error_ : Status::ok());
  }
  done_();
}

std::string Fanout::applied_summary(size_t failed_index) const {
  std::string applied, not_applied;
  for (size_t i = 0; i < targets_.size(); ++i) {
    std::string& list = i < failed_index ? applied : not_applied;
    if (!list.empty()) list += ", ";
    list += targets_[i].shard + (i == failed_index ? " (failed)" : "");
  }
  return "applied on shards: " + (applied.empty() ? std::string("none") : applied) +
         "; not applied on: " + (not_applied.empty() ? std::string("none") : not_applied);
}

}  // namespace sw::session
