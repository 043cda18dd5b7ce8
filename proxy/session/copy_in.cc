// CopyIn: the shards' side (servers, their answers, the commit); the client's rows are in
// copy_in_rows.cc.
#include "session/copy_in.h"

#include <charconv>
#include <utility>

#include "common/log.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {

CopyIn::CopyIn(std::vector<Target> targets, Setup setup, Callbacks callbacks)
    : copy_sent_(targets.size()),
      copy_responses_(targets.size()),
      batches_(targets.size()),
      rows_sent_(targets.size()),
      rows_copied_(targets.size()),
      lines_(targets.size()),
      setup_(std::move(setup)),
      position_query_(!setup_.plan.key_known && !setup_.every_shard),
      servers_(callbacks.on, std::move(targets), setup_.session_state, "COPY into " + setup_.rule.config_name,
               *this),
      callbacks_(std::move(callbacks)),
      splitter_(setup_.plan.options) {}

CopyIn::~CopyIn() = default;

// Every shard's COPY is started before the client is told to send: a COPY a shard refuses
// (no such table or column, a bad option) fails before any row is read, and the first row of
// every shard is written without waiting for a server.
void CopyIn::start() { servers_.start(); }

bool CopyIn::cancellable(size_t /*leg*/) const {
  return phase_ == Phase::Starting || phase_ == Phase::Streaming || phase_ == Phase::Ending;
}

void CopyIn::on_no_server(const Status& why) { fail(why); }

void CopyIn::on_leg_server(size_t index, std::string prologue) {
  if (index == 0 && position_query_) {
    wire::encode_query(prologue, setup_.plan.key_position_sql);
    servers_.expect_ready(index, 1);
  }
  copy_sent_[index] = true;
  prologue += setup_.copy_query;  // answered by CopyInResponse; its ReadyForQuery comes after CopyDone
  servers_.write(index, prologue);
}

// A shard's ErrorResponse: during the two-phase commit the coordinator's; before, it ends the
// copy (relayed to the client as the shard sent it).
bool CopyIn::on_leg_message(size_t index, const Message& message) {
  if (message.type == 'E') {
    if (phase_ == Phase::TwoPhase) {
      two_phase_->on_error(index, LegEngine::error_of(message.body));
      return true;
    }
    auto fields = wire::decode_error_fields(message.body);
    fail(Status::server(fields ? std::string(fields->sqlstate) : "XX000",
                        fields ? std::string(fields->message) : "COPY failed"),
         with_client_line(index, message));
    return true;
  }
  return took(index, on_answer(index, message));
}

Status CopyIn::on_answer(size_t index, const Message& message) {
  switch (message.type) {
    case 'N':
    case 'T':
    case 'Z': return Status::ok();
    case 'D':
      return phase_ == Phase::Starting && index == 0 && position_query_ ? on_position(message.body)
                                                                        : Status::ok();
    case 'C': {
      auto tag = wire::decode_command_complete(message.body);
      if (phase_ == Phase::Ending && tag && tag->rfind("COPY ", 0) == 0) {
        const std::string_view n = tag->substr(5);
        std::from_chars(n.data(), n.data() + n.size(), rows_copied_[index]);
      }
      return Status::ok();
    }
    case 'G':
      if (phase_ != Phase::Starting || !copy_responses_[index].empty()) break;
      copy_responses_[index].assign(message.frame);
      for (const std::string& response : copy_responses_) {
        if (response.empty()) return Status::ok();
      }
      start_streaming();
      return Status::ok();
    default: break;
  }
  return Status::server("08P01", "shard " + servers_.shard(index) +
                                     " answered COPY with an unexpected message ('" +
                                     std::string(1, message.type) + "')");
}

// A ReadyForQuery of the phase's statements: BEGIN and the position query, the end of the copy,
// the COMMIT or ROLLBACK, or the two-phase commit's (the engine counts the ones still due).
void CopyIn::on_leg_ready(size_t index) {
  if (phase_ == Phase::TwoPhase) {
    two_phase_->on_ready(index);
    return;
  }
  if (servers_.ready_owed(index) > 0) return;
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (servers_.ready_owed(i) > 0) return;
  }
  if (phase_ == Phase::Ending) {
    commit_written_legs();
  } else if (phase_ == Phase::Committing) {
    complete();
  }
}

// The key position query's row: one int8 column.
Status CopyIn::on_position(std::string_view data_row) {
  auto row = wire::decode_data_row(data_row);
  const std::string_view text = row && row->size() == 1 && (*row)[0] ? *(*row)[0] : std::string_view();
  size_t position = 0;
  if (text.empty() || std::from_chars(text.data(), text.data() + text.size(), position).ec != std::errc()) {
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
  for (const std::string& response : copy_responses_) {
    if (response.size() < 6 || response[5] != copy_responses_.front()[5]) {
      fail(Status::server("08P01", "the shards answered COPY in different formats"));
      return;
    }
  }
  splitter_ = wire::CopyRowSplitter(setup_.plan.options);
  phase_ = Phase::Streaming;
  callbacks_.write_client(copy_responses_.front());
  callbacks_.resume_client();
}

// The client's CopyDone, every row routed: every shard's COPY ends; its `COPY n` and
// ReadyForQuery (inside its transaction) follow.
void CopyIn::end_copies() {
  phase_ = Phase::Ending;
  for (size_t i = 0; i < servers_.size(); ++i) {
    write_pending(i);
    std::string out;
    wire::MessageWriter(out).begin('c').end();
    servers_.expect_ready(i, 1);  // the COPY's
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
void CopyIn::on_leg_violation(size_t index, const Status& why) {
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

}  // namespace sw::session
