// Session: SQL cursors over several shards (docs/architecture.md §5.6, "Cursors merged across
// shards"). Inside a transaction block (or WITH HOLD, in or outside one), a DECLARE of a keyless
// read declares a cursor of the same name on every shard the read reaches (the transaction's legs:
// its own, new ones joining the transaction, as for a merged read), with the merge plan's
// per-shard SQL; the merge's state (MergedCursor) stays until CLOSE or the transaction's end
// (session_merged_cursor_end.cc). FETCH and MOVE of it pull merged rows, refilling only the shards
// whose rows ran out (a round of `FETCH n` on those); CLOSE closes it on its shards. Each round is
// a CursorRound on the leg engine; a failed round fails the transaction on every leg, as a failed
// merged read does.
#include <algorithm>

#include "common/log.h"
#include "net/loop.h"
#include "parser/analyze.h"
#include "session/cursor_statement.h"
#include "session/session.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

Status backward_refusal(const CursorStatement& statement) {
  return Status::client("0A000",
                        "cursor \"" + statement.name + "\" reads several shards and moves only forward (" +
                            statement.backward +
                            " is not supported); declare it SCROLL to move back, use FETCH [FORWARD] n "
                            "or FETCH ALL, or DECLARE it again to start over");
}

}  // namespace

// A Query at the front of the input: a cursor statement this session answers across shards, or
// Forward (the usual path).
Session::Next Session::merged_cursor_statement(const wire::Frame& frame) {
  if (frame.type == 'P' || frame.type == 'D' || frame.type == 'B') return merged_cursor_batch(frame);
  if (frame.type != 'Q' || !host_.directory()) return Next::Forward;
  if (!writes_in_transaction()) end_cursors(txn_.cursors, CursorsEnd::Commit);  // the transaction ended
  if (server_lent() || txn_.control.moving() || request_.batch_open || txn_.ending != Ending::None ||
      (txn_.leg.attached() && txn_.leg.outside_transaction))
    return Next::Forward;
  auto sql = wire::decode_query(frame.body);
  if (!sql) return Next::Forward;
  CursorStatement statement = read_cursor_statement(*sql);
  if (statement.kind == CursorStatement::Kind::None) {
    if (Status refused = held_cursor_commit_refusal(*sql); !refused.is_ok())
      return refuse_cursor_statement(frame.size, refused);
    forget_cursors_at_end(*sql);
    return Next::Forward;
  }
  if (statement.kind == CursorStatement::Kind::Declare) return declare_merged_cursor(frame, statement);
  return run_cursor_statement(statement, frame.size, nullptr);
}

// FETCH, MOVE or CLOSE (a Query, or a batch whose Describe `*described` says) of a merged cursor;
// Forward for another cursor's.
Session::Next Session::run_cursor_statement(const CursorStatement& statement, size_t consumed,
                                            const bool* described) {
  if (statement.kind == CursorStatement::Kind::Unread) {
    if (txn_.cursors.empty()) return Next::Forward;
    return refuse_cursor_statement(
        consumed, Status::client("0A000",
                                 "shardwire reads a FETCH or MOVE while a cursor over several shards is open "
                                 "only as FETCH [NEXT | FORWARD [n | ALL] | n | ALL] [FROM | IN] name"));
  }
  if (statement.kind == CursorStatement::Kind::CloseAll) {
    if (txn_.cursors.empty()) return Next::Forward;
  } else if (txn_.cursors.find(statement.name) == txn_.cursors.end()) {
    return Next::Forward;  // a cursor of one shard, on its leg
  }
  if (txn_.leg.attached() && !txn_.leg.tracker.idle()) return wait_for_active_leg();
  if (txn_.control.aborted() || (txn_.leg.attached() && txn_.combined_status(txn_.leg.server_status) == 'E'))
    return Next::Forward;  // 25P02, as any statement
  if (clock_.request_started_us == 0) note_request_start();
  const bool scroll = statement.kind != CursorStatement::Kind::Close &&
                      statement.kind != CursorStatement::Kind::CloseAll &&
                      txn_.cursors[statement.name]->scroll() != nullptr;
  if (!statement.backward.empty() && !scroll)
    return refuse_cursor_statement(consumed, backward_refusal(statement));
  if (statement.kind != CursorStatement::Kind::Close && statement.kind != CursorStatement::Kind::CloseAll &&
      txn_.cursors[statement.name]->failed)
    return refuse_cursor_statement(
        consumed, Status::client("55000", "cursor \"" + statement.name +
                                              "\" failed in an earlier FETCH and cannot be run; CLOSE it "
                                              "and declare it again"));
  const bool fetch = statement.kind == CursorStatement::Kind::Fetch;
  std::string head;  // what the client gets before the rows or the tag
  if (described != nullptr) {
    wire::encode_parse_complete(head);
    wire::encode_bind_complete(head);
  }
  if (fetch && (described == nullptr || *described)) {
    head += txn_.cursors[statement.name]->row_description();
  } else if (described != nullptr && *described) {
    wire::MessageWriter(head).begin('n').end();  // NoData
  }
  consume_client(consumed);
  set_request_state(RequestState::Running);
  if (!fetch && statement.kind != CursorStatement::Kind::Move) {
    close_merged_cursors(statement, std::move(head));
    return Next::Stop;
  }
  txn_.cursor_fetch = CursorFetch{statement.name, statement.count, 0, !fetch, std::nullopt};
  if (scroll) {
    txn_.cursor_fetch->scroll.emplace(statement.direction, statement.steps);
    txn_.cursor_fetch->wanted =
        txn_.cursors[statement.name]->scroll()->needed(statement.direction, statement.steps);
  }
  client_->write(head);
  continue_cursor_fetch();
  return Next::Stop;
}

// A refusal fails the transaction, as the statement's error would on PostgreSQL; `consumed`: the
// client's Query, or its whole batch up to the Sync.
Session::Next Session::refuse_cursor_statement(size_t consumed, const Status& why) {
  if (txn_.leg.attached() && !txn_.leg.tracker.idle()) return wait_for_active_leg();
  if (clock_.request_started_us == 0) note_request_start();
  if (txn_.leg.attached()) {
    inject_abort(why, false);  // its ErrorResponse and ReadyForQuery are the client's answer
  } else {
    txn_.control.abort_if_deferred();
    std::string out;
    wire::encode_error(out, "ERROR", why.sqlstate, why.message);
    wire::encode_ready_for_query(out, txn_.control.status());
    client_->write(out);
    set_request_state(RequestState::Answered);
  }
  consume_client(consumed);
  return Next::Continue;
}

Session::Next Session::declare_merged_cursor(const wire::Frame& frame, const CursorStatement& statement) {
  auto facts = parser::analyze(statement.query);
  if (!facts || (*facts)->statements.size() != 1) return Next::Forward;
  router::Route route = router::route_query(**facts, nullptr, *host_.directory(), host_.routing_rules());
  if (!scatter_read(route) || !(writes_in_transaction() || statement.hold))
    return Next::Forward;  // one shard, or refused
  if (txn_.leg.attached() && !txn_.leg.tracker.idle()) return wait_for_active_leg();
  if (txn_.control.aborted() || (txn_.leg.attached() && txn_.combined_status(txn_.leg.server_status) == 'E'))
    return Next::Forward;
  if (Status refused = declare_refusal(route, statement); !refused.is_ok())
    return refuse_cursor_statement(frame.size, refused);
  if (Status refused = pin_for_held_cursor(statement, *wire::decode_query(frame.body)); !refused.is_ok())
    return refuse_cursor_statement(frame.size, refused);
  if (clock_.request_started_us == 0) note_request_start();
  consume_client(frame.size);
  run_declare(route, statement, nullptr, {});
  return Next::Stop;
}

// Why a cursor over the shards of `route` cannot be declared; ok when it can.
Status Session::declare_refusal(const router::Route& route, const CursorStatement& statement) const {
  const std::string what = "cursor \"" + statement.name + "\" reads " + route.table + " on several shards";
  if (Status refused = held_read_refusal(route); !refused.is_ok()) return refused;
  if (statement.binary)
    return Status::client("0A000",
                          what +
                              ": BINARY is not supported on such a cursor; declare it in text, or add "
                              "a shard key value");
  if (txn_.cursors.count(statement.name) > 0)
    return Status::client("42P03", "cursor \"" + statement.name + "\" already exists");
  return Status::ok();
}

namespace {

// The directory's names of `shards` (its indexes), by leg.
std::vector<std::string> shard_names(const router::Directory& directory, const std::vector<int>& shards) {
  std::vector<std::string> names;
  names.reserve(shards.size());
  for (int shard : shards) names.push_back(directory.shards()[static_cast<size_t>(shard)]);
  return names;
}

}  // namespace

// Declares the cursor on the read's shards (the client's DECLARE was consumed); `parameters`: the
// extended protocol's, whose answer starts with `answer` (ParseComplete, BindComplete, NoData).
void Session::run_declare(const router::Route& route, const CursorStatement& statement,
                          const MergedCursor::Parameters* parameters, std::string answer) {
  std::vector<int> shards;
  if (route.merge->shard_statements.empty()) {
    for (size_t i = 0; i < host_.directory()->shards().size(); ++i) shards.push_back(static_cast<int>(i));
  } else {
    for (const merge::ShardStatement& shard : route.merge->shard_statements) shards.push_back(shard.shard);
  }
  auto cursor = std::make_shared<MergedCursor>(statement.name, shards, *route.merge, host_.config().fanout,
                                               statement.hold, statement.scroll);
  const bool in_transaction = writes_in_transaction();
  cursor->merger().set_dates(date_reading());
  std::vector<std::string> messages;
  for (size_t i = 0; i < shards.size(); ++i) messages.push_back(cursor->declare_messages(i, parameters));
  set_request_state(RequestState::Running);
  start_cursor_round(
      shards, std::move(messages), MergedCursor::declare_ready(parameters),
      [cursor, names = shard_names(*host_.directory(), shards)](size_t leg, char type,
                                                                std::string_view body) {
        return cursor->take_declared(leg, names[leg], type, body);
      },
      [this, cursor, in_transaction, answer = std::move(answer)](const Status& error) mutable {
        if (!error.is_ok() && cursor->hold() && !in_transaction) return close_held_halves(*cursor);
        if (!error.is_ok()) return end_cursor_request();
        if (!cursor->declared()) {
          const Status why =
              Status::server("08P01", "a shard did not describe cursor \"" + cursor->name() + "\"");
          if (cursor->hold() && !in_transaction) {
            std::string out;
            wire::encode_error(out, "ERROR", why.sqlstate, why.message);
            client_->write(out);
            return close_held_halves(*cursor);
          }
          fail_cursor(why);
          return;
        }
        cursor->committed = !in_transaction;  // its own transaction on each shard committed it
        txn_.cursors[cursor->name()] = cursor;
        wire::encode_command_complete(answer, "DECLARE CURSOR");
        client_->write(answer);
        end_cursor_request();
      });
}

// Pulls merged rows for the FETCH or MOVE in progress; when a shard's rows ran out, a round refills
// the shards that need it and this runs again.
void Session::continue_cursor_fetch() {
  CursorFetch& fetch = *txn_.cursor_fetch;
  MergedCursor& cursor = *txn_.cursors[fetch.name];
  merge::Merger& merger = cursor.merger();
  CursorScroll* scroll = cursor.scroll();  // SCROLL: rows are kept first, then answered
  std::string out;
  for (;;) {
    const int64_t have = scroll != nullptr ? scroll->kept() : fetch.rows;
    if (fetch.wanted != CursorStatement::kAll && have >= fetch.wanted) break;
    auto next = merger.next();
    Status kept = next ? Status::ok() : next.status();
    if (kept.is_ok() && scroll != nullptr && next->has_value()) {
      std::string row;
      wire::encode_data_row(row, **next);
      kept = scroll->keep(std::move(row), fetch.name);
      if (kept.is_ok()) continue;
    }
    if (!kept.is_ok()) {
      if (!out.empty()) client_->write(out);
      fail_cursor(kept);
      return;
    }
    if (next->has_value()) {
      if (!fetch.move) wire::encode_data_row(out, **next);
      ++fetch.rows;
      if (out.size() > size_t{64} * 1024) client_->write(std::exchange(out, {}));
      continue;
    }
    if (merger.done()) break;
    if (!out.empty()) client_->write(out);
    const int64_t rows =
        cursor.refill_size(fetch.wanted == CursorStatement::kAll ? fetch.wanted : fetch.wanted - have);
    std::vector<int> shards;
    std::vector<size_t> legs;
    for (size_t i = 0; i < cursor.shards().size(); ++i) {
      if (!merger.waiting_for(i)) continue;
      shards.push_back(cursor.shards()[i]);
      legs.push_back(i);
    }
    std::vector<std::string> sql(shards.size(), cursor.refill_sql(rows));
    if (shards.empty()) {
      fail_cursor(Status::proxy("XX000", "the merge of cursor \"" + fetch.name + "\" waits for no shard"));
      return;
    }
    std::shared_ptr<MergedCursor> held = txn_.cursors[fetch.name];
    start_cursor_round(
        shards, sql,
        [held, legs, rows](size_t leg, char type, std::string_view body) {
          return held->take_refill(legs[leg], type, body, rows);
        },
        [this](const Status& error) {
          if (!error.is_ok()) return end_cursor_request();
          continue_cursor_fetch();
        });
    return;
  }
  if (scroll != nullptr) {
    for (int64_t i : scroll->move(fetch.scroll->first, fetch.scroll->second, merger.done())) {
      if (!fetch.move) out += scroll->row(i);
      ++fetch.rows;
      if (out.size() > size_t{64} * 1024) client_->write(std::exchange(out, {}));
    }
  }
  wire::encode_command_complete(out, (fetch.move ? "MOVE " : "FETCH ") + std::to_string(fetch.rows));
  client_->write(out);
  end_cursor_request();
}

// CLOSE name / CLOSE ALL: closed on the shards that hold it (CLOSE ALL: on every leg too, for the
// cursors of one shard).
void Session::close_merged_cursors(const CursorStatement& statement, std::string head) {
  std::vector<int> shards;
  auto add = [&shards](int shard) {
    if (shard >= 0 && std::find(shards.begin(), shards.end(), shard) == shards.end()) shards.push_back(shard);
  };
  if (statement.kind == CursorStatement::Kind::Close) {
    for (int shard : txn_.cursors[statement.name]->shards()) add(shard);
  } else {
    for (const auto& [name, cursor] : txn_.cursors)
      for (int shard : cursor->shards()) add(shard);
    add(shard_of(txn_.leg));
    for (const LegAnswers& parked : txn_.parked) add(shard_of(parked));
  }
  const std::string sql = statement.kind == CursorStatement::Kind::Close
                              ? "CLOSE " + quoted_name(statement.name)
                              : std::string("CLOSE ALL");
  if (statement.kind == CursorStatement::Kind::Close) {
    txn_.cursors.erase(statement.name);
  } else {
    txn_.cursors.clear();
  }
  start_cursor_round(
      shards, std::vector<std::string>(shards.size(), sql),
      [](size_t, char, std::string_view) { return Status::ok(); },
      [this, all = statement.kind == CursorStatement::Kind::CloseAll,
       head = std::move(head)](const Status& error) {
        if (error.is_ok()) {
          std::string out = head;
          wire::encode_command_complete(out, all ? "CLOSE CURSOR ALL" : "CLOSE CURSOR");
          client_->write(out);
        }
        if (error.is_ok() && pools_.session_pooling && unpin_if_no_held_cursor()) {
          release_idle_parked();  // the client's servers go back to the pool
          maybe_release_backend();
        }
        end_cursor_request();
      });
}

// A round of one simple Query per shard.
void Session::start_cursor_round(const std::vector<int>& shards, const std::vector<std::string>& sql,
                                 CursorRound::Take take, std::function<void(const Status&)> after) {
  std::vector<std::string> messages(sql.size());
  for (size_t i = 0; i < sql.size(); ++i) wire::encode_query(messages[i], sql[i]);
  start_cursor_round(shards, std::move(messages), 1, std::move(take), std::move(after));
}

// A round on `shards`, run on the transaction's legs, each sent its `messages` and answering
// `ready` ReadyForQuery messages; `after` runs once the round ended (every leg the session's).
void Session::start_cursor_round(const std::vector<int>& shards, std::vector<std::string> messages, int ready,
                                 CursorRound::Take take, std::function<void(const Status&)> after) {
  std::vector<LegEngine::Target> targets;
  const bool in_transaction = writes_in_transaction();
  if (Status error = transaction_targets(shards, in_transaction, &targets); !error) {
    fail_cursor(error);
    return;
  }
  txn_.runner.emplace<CursorRound>(
      legs_, std::move(targets), std::move(messages), ready, server_state(),
      [this](std::string_view bytes) { client_->write(bytes); }, std::move(take),
      [this, in_transaction](std::vector<LegEngine::Handed> handed, const Status& error) {
        if (!error.is_ok()) {  // the transaction failed: only held cursors of earlier ones survive
          end_cursors(txn_.cursors, CursorsEnd::Failure, txn_.cursor_fetch ? txn_.cursor_fetch->name : "");
          txn_.cursor_fetch.reset();
        }
        // Outside a transaction block each shard's own transaction ended with its answer: servers
        // read to their last ReadyForQuery are the session's again as they are.
        const bool settled = !in_transaction && std::all_of(handed.begin(), handed.end(), [](const auto& h) {
          return h.backend != nullptr && h.ready_owed == 0;
        });
        return end_run_on_legs(handed, settled ? Status::ok() : error, in_transaction);
      },
      [this, after = std::move(after)](const Status& error) {
        host_.loop().post([this, alive = std::weak_ptr<int>(alive_), after, error] {
          if (!alive.lock()) return;
          txn_.runner.reset<CursorRound>();
          after(error);
        });
      });
  txn_.runner.get<CursorRound>()->start();
}

// A merge error (or a server the round could not have): the client gets it and the transaction
// fails on every leg, as a shard's error does: a round raises it on the cursor's shards.
void Session::fail_cursor(const Status& why) {
  std::vector<int> shards;
  if (txn_.cursor_fetch) {
    auto found = txn_.cursors.find(txn_.cursor_fetch->name);
    if (found != txn_.cursors.end()) shards = found->second->shards();
  }
  end_cursors(txn_.cursors, CursorsEnd::Failure, txn_.cursor_fetch ? txn_.cursor_fetch->name : "");
  txn_.cursor_fetch.reset();
  if (shards.empty() || why.sqlstate == "08006" || !writes_in_transaction()) {  // no transaction to fail
    std::string out;
    wire::encode_error(out, "ERROR", why.sqlstate, why.message);
    client_->write(out);
    txn_.control.abort_if_deferred();
    end_cursor_request();
    return;
  }
  std::string message = why.message;
  for (size_t at = message.find('\''); at != std::string::npos; at = message.find('\'', at + 2))
    message.insert(at, 1, '\'');
  const std::string sql = "DO $sw_abort$ BEGIN RAISE EXCEPTION USING ERRCODE = '" + why.sqlstate +
                          "', MESSAGE = '" + message + "'; END $sw_abort$";
  start_cursor_round(
      shards, std::vector<std::string>(shards.size(), sql),
      [](size_t, char, std::string_view) { return Status::ok(); },
      [this](const Status&) { end_cursor_request(); });
}

// The cursor statement was answered (or failed): ReadyForQuery, and the session reads on.
void Session::end_cursor_request() {
  txn_.cursor_fetch.reset();
  write_session_ready(true);
  if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
  if (phase_ == Phase::Ready) read_client_messages();
}

}  // namespace sw::session
