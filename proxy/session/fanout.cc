#include "session/fanout.h"

#include <charconv>
#include <utility>

#include "common/log.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {
constexpr size_t kMaxBufferedPerLeg = size_t{1024} * 1024;
}

Fanout::Fanout(Mode mode, std::vector<Target> targets, std::string query_message, std::string session_state,
               std::function<void(std::string_view)> write_client, std::function<void()> done)
    : mode_(mode),
      query_message_(std::move(query_message)),
      session_state_(std::move(session_state)),
      write_client_(std::move(write_client)),
      done_(std::move(done)) {
  for (auto& target : targets) legs_.push_back(Leg{std::move(target)});
}

Fanout::~Fanout() {
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    if (leg.backend != nullptr) leg.target.pool->release(leg.backend, false);
  }
}

void Fanout::watch_start(StartingReads& reads, uint64_t version) {
  start_watch_.begin(reads, version, legs_, [this](const Status& why) { fail(why); });
}

void Fanout::start() {
  if (mode_ == Mode::ConcatenateRows) {
    for (size_t i = 0; i < legs_.size() && !finished_; ++i) {
      if (legs_[i].lent != nullptr) {
        use_server(legs_[i], legs_[i].lent);
      } else {
        acquire(i);
      }
    }
  } else {
    acquire(0);
  }
}

void Fanout::acquire(size_t index) {
  Leg& leg = legs_[index];
  leg.waiting = true;
  if (pool::Backend* backend = leg.target.pool->acquire(this)) on_backend_ready(backend);
}

void Fanout::on_backend_ready(pool::Backend* backend) {
  for (Leg& leg : legs_) {
    if (leg.waiting && leg.target.pool == &backend->pool()) {
      leg.waiting = false;
      use_server(leg, backend);
      return;
    }
  }
  backend->pool().release(backend, true);  // nobody waits any more
}

void Fanout::on_backend_failed(const Status& why) {
  for (Leg& leg : legs_) leg.waiting = false;
  fail(why);
}

void Fanout::use_server(Leg& leg, pool::Backend* backend) {
  leg.backend = backend;
  backend->attach(this);
  send_query(leg);
  if (&leg == &legs_[current_]) drain_current();
}

// The session's settings when the server lacks them, a held leg's `begin`, then the statement.
void Fanout::send_query(Leg& leg) {
  std::string out;
  leg.swallow_ready += held_.prologue(out, *leg.backend, session_state_, leg.begin);
  out += leg.target.query_message.empty() ? query_message_ : leg.target.query_message;
  ++leg.ready_owed;
  leg.backend->connection().write(out);
}

void Fanout::on_backend_readable(pool::Backend& backend) {
  Leg* leg = leg_of(backend);
  if (leg == nullptr) return;
  if (leg == &legs_[current_]) {
    drain_current();
    return;
  }
  // Bytes with no prologue answer due can only be the statement's own (its turn comes later).
  if (!leg->answered && leg->swallow_ready == 0 && !backend.connection().input().empty()) {
    leg->answered = true;
    start_watch_.end_once_started(legs_);
  }
  if (backend.connection().input().size() > kMaxBufferedPerLeg) {
    backend.connection().pause_reading();  // its turn comes; TCP holds the rest meanwhile
  }
}

void Fanout::drain_current() {
  wire::Limits limits;
  while (!finished_ && current_ < legs_.size()) {
    Leg& leg = legs_[current_];
    if (leg.backend == nullptr) return;  // still waiting for a server
    net::Connection& connection = leg.backend->connection();
    connection.resume_reading();
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    if (result.status == wire::FrameStatus::Error) {
      fail(
          Status::server("08P01", "shard " + leg.target.shard + " sent an invalid message: " + result.error));
      return;
    }
    if (Status shape = leg.check.on_message(result.frame.type, result.frame.body); !shape) {
      // A broken or hostile server: fail() closes it rather than return it to the pool.
      LOG_WARN("server=s%llu shard=%s protocol violation by server, dropping it: %s",
               (unsigned long long)leg.backend->id(), leg.target.shard.c_str(), shape.message.c_str());
      fail(Status::server("08P01",
                          "shard " + leg.target.shard + " sent an invalid message: " + shape.message));
      return;
    }
    std::string_view frame(result.frame.body.data() + result.frame.body.size() - result.frame.size,
                           result.frame.size);
    Next next = handle_message(leg, result.frame.type, frame, result.frame.body);
    if (leg.backend != nullptr) connection.consume(result.frame.size);
    if (next == Next::Fail) fail(std::exchange(failure_, Status::ok()));
    if (next == Next::FinishLeg) finish_leg(leg);
    if (next != Next::Continue) return;
  }
}

Fanout::Next Fanout::handle_message(Leg& leg, char type, std::string_view frame, std::string_view body) {
  bool injected = leg.swallow_ready > 0 || leg.epilogue_sent;
  if (!injected && !leg.answered) {
    leg.answered = true;
    start_watch_.end_once_started(legs_);
  }
  switch (type) {
    case 'Z':
      if (!body.empty()) leg.status = body[0];
      if (leg.swallow_ready > 0) {
        --leg.swallow_ready;
        return Next::Continue;
      }
      --leg.ready_owed;
      if (leg.ready_owed == 0 && !leg.epilogue_sent && !leg.target.epilogue_sql.empty() && !errored_) {
        std::string out;
        wire::encode_query(out, leg.target.epilogue_sql);
        leg.backend->connection().write(out);
        leg.epilogue_sent = true;
        ++leg.ready_owed;
        return Next::Continue;
      }
      return leg.ready_owed == 0 ? Next::FinishLeg : Next::Continue;
    case 'E': {
      if (injected && leg.swallow_ready > 0)
        LOG_WARN("shard %s refused session settings", leg.target.shard.c_str());
      if (errored_) return Next::Continue;
      errored_ = true;
      error_ = Status::server("XX000", "shard " + leg.target.shard + " reported an error");
      if (mode_ == Mode::OneAfterAnother) {
        auto fields = wire::decode_error_fields(body);
        std::string out;
        wire::encode_error(out, "ERROR", fields ? fields->sqlstate : "XX000",
                           fields ? fields->message : "statement failed", applied_summary(current_));
        write_client_(out);
      } else {
        write_client_(frame);
      }
      return Next::Continue;
    }
    case 'S':
      if (auto p = wire::decode_parameter_status(body)) leg.backend->set_parameter(p->name, p->value);
      return Next::Continue;
    case 'N':
      if (!injected && (mode_ == Mode::ConcatenateRows || current_ == 0)) write_client_(frame);
      return Next::Continue;
    case 'A': return Next::Continue;
    default: break;
  }
  if (injected || errored_) return Next::Continue;
  return relay_answer(leg, type, frame, body);
}

// The answer to the client's statement: merged into the one answer the client gets.
Fanout::Next Fanout::relay_answer(Leg& leg, char type, std::string_view frame, std::string_view body) {
  switch (type) {
    case 'T':
      if (mode_ == Mode::ConcatenateRows && !row_description_sent_) {
        row_description_sent_ = true;
        write_client_(frame);
      }
      return Next::Continue;
    case 'D':
      if (mode_ == Mode::ConcatenateRows) write_client_(frame);
      return Next::Continue;
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
      return Next::Continue;
    }
    case 'I': return Next::Continue;
    case 'H':
    case 'd':
    case 'c': {
      if (mode_ != Mode::ConcatenateRows) return Next::Continue;
      if (!copy_) copy_.emplace(legs_.size(), legs_.front().target.copy_csv_header);
      std::string out;
      Status joined = copy_->on_message(static_cast<size_t>(&leg - legs_.data()), type, frame, body, out);
      if (!joined)
        return fail_after(
            Status::server(joined.sqlstate, "shard " + leg.target.shard + ": " + joined.message));
      if (!out.empty()) write_client_(out);
      return Next::Continue;
    }
    case '1':
    case '2':
    case 'n': {
      bool& sent = type == '1'   ? parse_complete_sent_
                   : type == '2' ? bind_complete_sent_
                                 : row_description_sent_;
      if (mode_ == Mode::ConcatenateRows && !sent) write_client_(frame);
      sent = true;
      return Next::Continue;
    }
    default:
      return fail_after(Status::server("0A000", std::string("shard ") + leg.target.shard +
                                                    " answered with a message shardwire cannot merge ('" +
                                                    type + "')"));
  }
}

// A held leg keeps its server until the end (hand_back_held).
void Fanout::finish_leg(Leg& leg) {
  leg.done = true;
  if (!held_.active()) {
    pool::Backend* backend = std::exchange(leg.backend, nullptr);
    backend->detach();
    leg.target.pool->release(backend, leg.status == 'I' && !leg.cancelled);
  }
  ++current_;
  if (current_ == legs_.size() || (mode_ == Mode::OneAfterAnother && errored_)) {
    complete();
    return;
  }
  if (mode_ == Mode::OneAfterAnother) acquire(current_);
  drain_current();
}

void Fanout::cancel() {
  for (Leg& leg : legs_) {
    if (leg.backend == nullptr || leg.done) continue;
    leg.target.pool->send_cancel(*leg.backend);
    leg.cancelled = true;
  }
}

Fanout::Next Fanout::fail_after(const Status& why) {
  failure_ = why;
  return Next::Fail;
}

// A held server goes back to the session (complete), owing the answers it did not give yet.
void Fanout::fail(const Status& why) {
  if (finished_) return;
  if (error_.is_ok()) error_ = why;
  for (Leg& leg : legs_) {
    if (leg.waiting) leg.target.pool->cancel_wait(this);
    leg.waiting = false;
    if (leg.backend != nullptr && !held_.active()) {
      pool::Backend* backend = leg.backend;
      leg.backend = nullptr;
      backend->detach();
      leg.target.pool->release(backend, false);
    }
  }
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
  start_watch_.end();
  std::string out;
  if (!errored_) {
    std::string tag =
        mode_ == Mode::ConcatenateRows ? command_tag_ + " " + std::to_string(rows_) : command_tag_;
    wire::encode_command_complete(out, tag);
  }
  if (!held_.in_transaction()) wire::encode_ready_for_query(out, 'I');
  if (!out.empty()) write_client_(out);
  if (held_.active()) hand_back_held();
  done_();
}

Fanout::Leg* Fanout::leg_of(pool::Backend& backend) {
  for (Leg& leg : legs_) {
    if (leg.backend == &backend) return &leg;
  }
  return nullptr;
}

void Fanout::on_backend_lost(pool::Backend& backend, const Status& why) {
  if (Leg* leg = leg_of(backend)) leg->backend = nullptr;
  fail(Status::server("08006", why.message));
}

std::string Fanout::applied_summary(size_t failed_index) const {
  std::string applied, not_applied;
  for (size_t i = 0; i < legs_.size(); ++i) {
    std::string& list = i < failed_index ? applied : not_applied;
    if (!list.empty()) list += ", ";
    list += legs_[i].target.shard + (i == failed_index ? " (failed)" : "");
  }
  return "applied on shards: " + (applied.empty() ? std::string("none") : applied) +
         "; not applied on: " + (not_applied.empty() ? std::string("none") : not_applied);
}

}  // namespace sw::session
