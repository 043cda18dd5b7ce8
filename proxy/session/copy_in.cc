// CopyIn: the shards' side (servers, their answers, the commit); the client's rows are in
// copy_in_rows.cc.
#include "session/copy_in.h"

#include <charconv>
#include <utility>

#include "common/log.h"
#include "wire/byte_reader.h"
#include "wire/frame_reader.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

CopyIn::CopyIn(std::vector<Target> targets, Setup setup, Callbacks callbacks)
    : legs_(targets.size()),
      setup_(std::move(setup)),
      servers_(std::move(targets), setup_.session_state, *this),
      callbacks_(std::move(callbacks)),
      splitter_(setup_.plan.options) {
  if (!legs_.empty()) legs_.front().position = !setup_.plan.key_known && !setup_.every_shard;
}

CopyIn::~CopyIn() = default;

// Every shard's COPY is started before the client is told to send: a COPY a shard refuses
// (no such table or column, a bad option) fails before any row is read, and the first row of
// every shard is written without waiting for a server.
void CopyIn::start() { servers_.start(); }

void CopyIn::on_no_server(const Status& why) { fail(why); }

void CopyIn::on_leg_server(size_t index, std::string prologue, int ready_owed) {
  Leg& leg = legs_[index];
  leg.ready_owed += ready_owed;
  if (leg.position) {
    wire::encode_query(prologue, setup_.plan.key_position_sql);
    ++leg.ready_owed;
  }
  leg.copy_sent = true;
  prologue += setup_.copy_query;  // answered by CopyInResponse; its ReadyForQuery comes after CopyDone
  servers_.write(index, prologue);
}

void CopyIn::on_leg_readable(size_t index) {
  Leg& leg = legs_[index];
  wire::Limits limits;
  while (servers_.backend(index) != nullptr) {
    pool::Backend* backend = servers_.backend(index);
    net::Connection& connection = backend->connection();
    auto result = wire::read_frame(connection.input(), wire::Sender::Server, limits);
    if (result.status == wire::FrameStatus::NeedMore) return;
    Status shape = result.status == wire::FrameStatus::Error
                       ? Status::server("08P01", result.error)
                       : leg.check.on_message(result.frame.type, result.frame.body);
    if (!shape) {
      LOG_WARN("server=s%llu shard=%s protocol violation by server during COPY, dropping it: %s",
               (unsigned long long)backend->id(), servers_.shard(index).c_str(), shape.message.c_str());
      end_leg_or_copy(index, Status::server("08P01", "shard " + servers_.shard(index) +
                                                         " sent an invalid message: " + shape.message));
      return;
    }
    const wire::Frame& frame = result.frame;
    std::string_view whole(frame.body.data() + frame.body.size() - frame.size, frame.size);
    if (phase_ == Phase::TwoPhase && (frame.type == 'E' || frame.type == 'Z')) {
      connection.consume(frame.size);
      if (frame.type == 'Z') {
        two_phase_->on_ready(index);
      } else {
        auto fields = wire::decode_error_fields(frame.body);
        two_phase_->on_error(
            index, fields ? Status::client(std::string(fields->sqlstate), std::string(fields->message))
                          : Status::server("08P01", "a malformed ErrorResponse"));
      }
      continue;
    }
    if (frame.type == 'E') {
      auto fields = wire::decode_error_fields(frame.body);
      fail(Status::server(fields ? std::string(fields->sqlstate) : "XX000",
                          fields ? std::string(fields->message) : "COPY failed"),
           whole);
      return;
    }
    Status handled = on_leg_message(index, frame.type, whole, frame.body);
    if (servers_.backend(index) != backend) return;  // released or closed meanwhile
    connection.consume(frame.size);
    if (!handled) {
      end_leg_or_copy(index, handled);
      return;
    }
    if (frame.type == 'Z') {
      if (Status next = on_ready(leg); !next) {
        fail(next);
        return;
      }
    }
  }
}

Status CopyIn::on_leg_message(size_t index, char type, std::string_view frame, std::string_view body) {
  Leg& leg = legs_[index];
  switch (type) {
    case 'S':
      if (auto p = wire::decode_parameter_status(body))
        servers_.backend(index)->set_parameter(p->name, p->value);
      return Status::ok();
    case 'N':
    case 'A':
    case 'T':
    case 'Z': return Status::ok();
    case 'D': return phase_ == Phase::Starting && leg.position ? on_position(body) : Status::ok();
    case 'C': {
      auto tag = wire::decode_command_complete(body);
      if (phase_ == Phase::Ending && tag && tag->rfind("COPY ", 0) == 0) {
        const std::string_view n = tag->substr(5);
        std::from_chars(n.data(), n.data() + n.size(), leg.rows_copied);
      }
      return Status::ok();
    }
    case 'G':
      if (phase_ != Phase::Starting || leg.in_copy) break;
      leg.in_copy = true;
      leg.copy_response.assign(frame);
      if (all_legs([](const Leg& l) { return l.in_copy; })) start_streaming();
      return Status::ok();
    default: break;
  }
  return Status::server("08P01", "shard " + servers_.shard(index) +
                                     " answered COPY with an unexpected message ('" + std::string(1, type) +
                                     "')");
}

// A ReadyForQuery of the phase's statements: BEGIN and the position query, the end of the copy,
// the COMMIT or ROLLBACK.
Status CopyIn::on_ready(Leg& leg) {
  --leg.ready_owed;
  if (leg.ready_owed > 0) return Status::ok();
  if (phase_ == Phase::Ending && all_legs([](const Leg& l) { return l.ready_owed == 0; })) {
    commit_written_legs();
  } else if (phase_ == Phase::Committing && all_legs([](const Leg& l) { return l.ready_owed == 0; })) {
    complete();
  }
  return Status::ok();
}

// The key position query's row: one int8 column.
Status CopyIn::on_position(std::string_view data_row) {
  wire::ByteReader reader(data_row);
  int16_t columns = 0;
  int32_t length = 0;
  std::string_view text;
  size_t position = 0;
  if (!reader.i16(columns) || columns != 1 || !reader.i32(length) || length < 0 ||
      !reader.bytes(static_cast<uint64_t>(length), text) ||
      std::from_chars(text.data(), text.data() + text.size(), position).ec != std::errc()) {
    return Status::server("08P01", "the shard's answer to the key position query is not one number");
  }
  setup_.plan.options.key_field = position;
  setup_.plan.key_known = true;
  return Status::ok();
}

void CopyIn::start_streaming() {
  if (!setup_.plan.key_known && !setup_.every_shard) {
    fail(Status::client("42703",
                        "COPY into sharded table " + setup_.rule.config_name + ": its shard key column " +
                            setup_.rule.key +
                            " is not among the columns COPY reads (no such column, or it is generated)"));
    return;
  }
  for (const Leg& leg : legs_) {
    if (leg.copy_response.size() < 6 || leg.copy_response[5] != legs_.front().copy_response[5]) {
      fail(Status::server("08P01", "the shards answered COPY in different formats"));
      return;
    }
  }
  splitter_ = wire::CopyRowSplitter(setup_.plan.options);
  phase_ = Phase::Streaming;
  callbacks_.write_client(legs_.front().copy_response);
  callbacks_.resume_client();
}

// The client's CopyDone, every row routed: every shard's COPY ends; its `COPY n` and
// ReadyForQuery (inside its transaction) follow.
void CopyIn::end_copies() {
  phase_ = Phase::Ending;
  for (size_t i = 0; i < legs_.size(); ++i) {
    write_pending(i);
    std::string out;
    wire::MessageWriter(out).begin('c').end();
    legs_[i].ready_owed = 1;
    servers_.write(i, out);
  }
}

// Ends the copy with `why` (or a shard's own ErrorResponse, relayed): every server is closed, so
// no shard commits anything. A client still sending its copy gets ReadyForQuery once it ends it.
void CopyIn::fail(const Status& why, std::string_view server_error) {
  if (phase_ == Phase::Failed || phase_ == Phase::Done) return;
  const bool client_copying = phase_ == Phase::Streaming && !client_ended_;
  release_servers(false, why);  // closed (or the session's: it fails their transaction)
  std::string out;
  if (!server_error.empty()) {
    out.assign(server_error);
  } else {
    wire::encode_error(out, "ERROR", why.sqlstate, why.message);
  }
  LOG_INFO("COPY into %s failed, %s: %s", setup_.rule.config_name.c_str(),
           setup_.in_transaction ? "the transaction is aborted" : "rolled back on every shard",
           why.message.c_str());
  if (client_copying) {
    phase_ = Phase::Failed;
    callbacks_.write_client(out);
    return;
  }
  phase_ = Phase::Done;
  ready_for_query(out);
  callbacks_.write_client(out);
  callbacks_.done();
}

// A leg broke the protocol. During a two-phase commit only that leg is dropped (the
// coordinator decides what its loss means: after the decision, recovery finishes it); before,
// the whole copy fails.
void CopyIn::end_leg_or_copy(size_t index, const Status& why) {
  if (phase_ != Phase::TwoPhase) {
    fail(why);
    return;
  }
  servers_.release(index, false);
  two_phase_->on_lost(index, why.message);
}

void CopyIn::on_leg_lost(size_t index, const Status& why) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_lost(index, why.message);
    return;
  }
  fail(Status::server("08006", "lost shard " + servers_.shard(index) + " during COPY: " + why.message));
}

void CopyIn::on_leg_drained(size_t) {
  if (accepts_client_input()) callbacks_.resume_client();
}

bool CopyIn::all_legs(bool (*test)(const Leg&)) const {
  for (const Leg& leg : legs_) {
    if (!test(leg)) return false;
  }
  return true;
}

}  // namespace sw::session
