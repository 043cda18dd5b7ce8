// Session: SQL cursors over several shards in the extended protocol (docs/architecture.md §5.6,
// "Cursors merged across shards"): psycopg 3 sends its named cursor's DECLARE (with the query's
// parameters), the Describe of the cursor's portal, and FETCH and CLOSE each as an extended batch
// ending in Sync; such a batch is read whole and answered as its Query would be
// (session_merged_cursor.cc), in the extended protocol's messages. A COMMIT sent so (pgjdbc,
// asyncpg) is refused as its Query would be while a held cursor forbids it.
#include <algorithm>

#include "parser/analyze.h"
#include "session/cursor_statement.h"
#include "session/session.h"
#include "wire/bind_rest.h"
#include "wire/bind_values.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
// An extended batch at the front of the input: psycopg's named cursors send their DECLARE as
// Parse, Bind, Describe portal, Execute, Sync (with the query's parameters), then Describe of the
// cursor's portal and Sync. Either, for a cursor over several shards, is answered here.
Session::Next Session::merged_cursor_batch(const wire::Frame& first) {
  if (request_.batch_open || !host_.directory() || server_lent() || txn_.control.moving() ||
      txn_.ending != Ending::None || (txn_.leg.attached() && txn_.leg.outside_transaction))
    return Next::Forward;
  CursorStatement statement;
  Status commit_refused = Status::ok();  // a COMMIT the batch runs (held_cursor_commit_refusal)
  if (first.type == 'P') {
    auto parse = wire::decode_parse(first.body);
    if (!parse) return Next::Forward;
    statement = read_cursor_statement(parse->query);
    if (statement.kind == CursorStatement::Kind::None) {
      commit_refused = held_cursor_commit_refusal(parse->query);
      if (commit_refused.is_ok()) {
        if (parse->statement.empty()) forget_cursors_at_end(parse->query);
        return Next::Forward;
      }
    } else if (!parse->statement.empty() ||
               (statement.kind != CursorStatement::Kind::Declare && txn_.cursors.empty())) {
      return Next::Forward;
    }
  } else if (first.type == 'B') {
    commit_refused = bound_commit_refusal(first);
    if (commit_refused.is_ok()) return Next::Forward;
  } else if (txn_.cursors.empty() || !wire::describes_portal(first.body) ||
             txn_.cursors.find(first.body.substr(1, first.body.size() - 2)) == txn_.cursors.end()) {
    return Next::Forward;
  }
  std::vector<wire::Frame> frames;
  const std::string_view input = client_input();
  size_t offset = 0;
  while (frames.empty() || frames.back().type != 'S') {
    auto read = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    if (read.status == wire::FrameStatus::NeedMore) return Next::Stop;  // the rest of the batch first
    if (read.status != wire::FrameStatus::Complete || frames.size() == 5 || read.frame.type == 'H')
      return Next::Forward;
    frames.push_back(read.frame);
    offset += read.frame.size;
  }
  if (!writes_in_transaction()) end_cursors(txn_.cursors, CursorsEnd::Commit);  // the transaction ended
  if (txn_.leg.attached() && !txn_.leg.tracker.idle()) return wait_for_active_leg();
  if (txn_.control.aborted() || (txn_.leg.attached() && txn_.combined_status(txn_.leg.server_status) == 'E'))
    return Next::Forward;
  if (!commit_refused.is_ok()) {  // refused when the batch runs it, not when it only parses it
    const bool runs =
        std::any_of(frames.begin(), frames.end(), [](const wire::Frame& f) { return f.type == 'E'; });
    return runs ? refuse_cursor_statement(offset, commit_refused) : Next::Forward;
  }
  if (first.type == 'D') {
    if (frames.size() != 2) return Next::Forward;
    auto found = txn_.cursors.find(first.body.substr(1, first.body.size() - 2));
    if (found == txn_.cursors.end()) return Next::Forward;
    std::string out = found->second->row_description();
    wire::encode_ready_for_query(out, txn_.control.status());
    client_->write(out);
    consume_client(offset);
    set_request_state(RequestState::Answered);
    return Next::Continue;
  }
  if (statement.kind == CursorStatement::Kind::Declare)
    return declare_merged_cursor_batch(frames, offset, statement);
  // Parse Bind [Describe portal] Execute Sync of a FETCH, MOVE or CLOSE, its results in text.
  const bool described = frames.size() == 5;
  auto bind = frames.size() >= 4 && frames[1].type == 'B'
                  ? wire::decode_bind(frames[1].body)
                  : Result<wire::BindMessage>(Status::client("08P01", ""));
  auto rest = bind ? wire::decode_bind_rest(bind->rest) : Result<wire::BindRest>(Status::client("08P01", ""));
  if (!rest || frames[frames.size() - 2].type != 'E' ||
      (described && (frames[2].type != 'D' || !wire::describes_portal(frames[2].body))))
    return Next::Forward;
  for (uint16_t format : rest->result_formats) {
    if (format != 0 && statement.kind == CursorStatement::Kind::Fetch &&
        txn_.cursors.count(statement.name) > 0)
      return refuse_cursor_statement(
          offset,
          Status::client("0A000", "cursor \"" + statement.name +
                                      "\" reads several shards and returns its rows in text only; ask "
                                      "for text results"));
  }
  return run_cursor_statement(statement, offset, &described);
}

// A Bind of a named statement that is a COMMIT (pgjdbc prepares its COMMIT once it ran it often):
// the refusal a COMMIT gets while a held cursor is open (held_cursor_commit_refusal), or OK.
Status Session::bound_commit_refusal(const wire::Frame& bind_frame) const {
  if (txn_.cursors.empty()) return Status::ok();
  auto bind = wire::decode_bind(bind_frame.body);
  if (!bind || bind->statement.empty()) return Status::ok();
  const PreparedStatement* statement = profile_.statements.find(bind->statement);
  return statement == nullptr ? Status::ok() : held_cursor_commit_refusal(statement->query);
}

// [Parse] Bind [Describe portal] Execute Sync of a DECLARE: the read routed with the Bind's values.
Session::Next Session::declare_merged_cursor_batch(const std::vector<wire::Frame>& frames, size_t consumed,
                                                   const CursorStatement& statement) {
  const bool described = frames.size() == 5;
  if (frames.size() < 4 || frames[1].type != 'B' || frames[frames.size() - 2].type != 'E' ||
      (described && (frames[2].type != 'D' || !wire::describes_portal(frames[2].body))))
    return Next::Forward;
  auto parse = wire::decode_parse(frames[0].body);
  auto bind = wire::decode_bind(frames[1].body);
  if (!parse || !bind || !bind->statement.empty()) return Next::Forward;
  auto facts = parser::analyze(statement.query);
  if (!facts || (*facts)->statements.size() != 1) return Next::Forward;
  router::BindValues values;
  if (!wire::decode_bind_values(bind->rest, parse->param_types, &values).is_ok()) return Next::Forward;
  router::Route route = router::route_query(**facts, &values, *host_.directory(), host_.routing_rules());
  if (!scatter_read(route) || !(writes_in_transaction() || statement.hold)) return Next::Forward;
  if (Status refused = declare_refusal(route, statement); !refused.is_ok())
    return refuse_cursor_statement(consumed, refused);
  if (Status refused = pin_for_held_cursor(statement, parse->query); !refused.is_ok())
    return refuse_cursor_statement(consumed, refused);
  auto rest = wire::decode_bind_rest(bind->rest);
  if (!rest) return Next::Forward;
  MergedCursor::Parameters parameters{parse->param_types, std::string(rest->parameters)};
  std::string answer;
  wire::encode_parse_complete(answer);
  wire::encode_bind_complete(answer);
  if (described) wire::MessageWriter(answer).begin('n').end();  // NoData: DECLARE returns no rows
  if (clock_.request_started_us == 0) note_request_start();
  profile_.unnamed_elsewhere = true;  // the legs' unnamed statement is the shards' DECLARE now
  consume_client(consumed);
  run_declare(route, statement, &parameters, std::move(answer));
  return Next::Stop;
}

}  // namespace sw::session
