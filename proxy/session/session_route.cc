// Session: picking the shard for a request when no server is attached (the decisions are
// routing.h's and TransactionControl's), and refusing what cannot be routed.
#include "common/log.h"
#include "config/config.h"
#include "net/loop.h"
#include "session/session.h"
#include "sqltext/catalog_sql.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

// A COPY split or joined across shards must be its Query's only statement: the proxy splits
// its rows by key (COPY FROM), or joins the shards' rows on the session's servers (COPY TO).
void refuse_copy_with_others(const router::Route& route, bool on_session_servers, Placement& placement) {
  if (placement.kind != Placement::Kind::FanOut) return;
  if (route.copy_in) {
    placement.kind = Placement::Kind::Refuse;
    placement.error = Status::client("0A000", "COPY FROM STDIN into sharded table " + route.table +
                                                  " must be sent alone, not with other statements");
  } else if (route.copy_out && on_session_servers) {
    placement.kind = Placement::Kind::Refuse;
    placement.error = Status::client("0A000", "COPY ... TO STDOUT of sharded table " + route.table +
                                                  " inside a transaction block (or with pool.mode session) "
                                                  "must be sent alone, not with other statements");
  }
}

using parser::StatementKind;
using router::RouteKind;

bool touches_tables(const parser::QueryFacts& facts) {
  for (const auto& statement : facts.statements) {
    if (!statement.tables.empty()) return true;
  }
  return false;
}

const parser::StatementFacts* single_statement(const parser::QueryFacts& facts) {
  return facts.statements.size() == 1 ? &facts.statements.front() : nullptr;
}

Status aborted_transaction() {
  return Status::client("25P02",
                        "current transaction is aborted, commands ignored until end of transaction block");
}

}  // namespace

int Session::default_shard() const {
  return host_.directory()->shard_index(host_.routing_rules().default_shard());
}

pool::Pool* Session::pool_for_shard(int shard, Status* error) {
  size_t index = static_cast<size_t>(shard < 0 ? 0 : shard);
  if (pools_.by_shard.size() <= index) pools_.by_shard.resize(index + 1, nullptr);
  pool::Pool*& cached = pools_.by_shard[index];
  if (cached == nullptr || cached->retired()) cached = host_.pool_for(profile_.user, shard, error);
  return cached;
}

// Answers the client's pending request with `why` and, inside a transaction that has no shard
// yet, marks it failed as a server would.
void Session::refuse_request(const Status& why, std::string_view detail) {
  txn_.control.abort_if_deferred();
  reject_pending_request(why, detail);
}

// No server is attached: decide where the request at the front of the input goes.
Session::Start Session::start_request(const wire::Frame& frame, int* shard) {
  const auto& directory = host_.directory();
  if (!directory || !host_.directory_lease_valid()) {
    refuse_request(
        Status::proxy("57P03", directory ? "shardwire cannot confirm the bucket directory "
                                           "(catalog unreachable past directory_lease); retry later"
                                         : "shardwire has not loaded the bucket directory yet; retry later"));
    return Start::Answered;
  }
  fence_.on_routed(directory->version());
  request_.forget_bound();
  clock_.route_label = stats::RouteLabel::Default;
  switch (frame.type) {
    case 'Q': return start_query(frame, shard);
    case 'P':
    case 'B':
    case 'D':
    case 'E':
    case 'C': return start_extended(shard);
    default: *shard = default_shard(); return Start::Forward;
  }
}

Session::Start Session::start_query(const wire::Frame& frame, int* shard) {
  auto sql = wire::decode_query(frame.body);
  if (!sql) {
    refuse_request(sql.status());
    return Start::Answered;
  }
  const FrontQuery& front = front_query(frame, *sql);
  if (!front.refused.is_ok()) {
    // Refusing consumes the Query, and forgets `front`.
    const Status refused = front.refused;
    const std::string detail = front.refused_detail;
    refuse_request(refused, detail);
    return Start::Answered;
  }
  std::shared_ptr<const parser::QueryFacts> facts = front.facts;
  if (!facts) {
    // Let the default shard's server report its own syntax error, exactly.
    *shard = default_shard();
    return Start::Forward;
  }
  const parser::StatementFacts* only = single_statement(*facts);
  bool protected_setting = (only != nullptr) &&
                           (only->kind == StatementKind::Set || only->kind == StatementKind::SetLocal) &&
                           SessionState::is_protected(only->set_name);
  if (only != nullptr && !protected_setting) {
    auto answer = txn_.control.on_statement(only->kind, only->text, only->set_name);
    if (answer == TransactionControl::Answer::NoSuchSavepoint) {
      refuse_request(txn_.control.no_such_savepoint());
      return Start::Answered;
    }
    if (answer != TransactionControl::Answer::Forward) {
      Start answered = answer_transaction_control(answer, frame.size, {});
      profile_.settings.on_statement(*only);  // a deferred SET counts if the transaction commits
      return answered;
    }
  }
  if (txn_.control.aborted()) {
    refuse_request(aborted_transaction());
    return Start::Answered;
  }
  if (only != nullptr && answer_sql_deallocate(*only, frame.size)) return Start::Answered;
  if (only != nullptr) {
    if (auto drop = drop_index_on_every_shard(*only)) {
      if (!drop->is_ok()) {
        refuse_request(drop->status());
        return Start::Answered;
      }
      return start_drop_index(frame, drop->value());
    }
    if (finishes_prepared_on_shards(*only))
      return start_finish_prepared(*only, std::string(whole(frame)), frame.size, false);
  }
  const router::Route& routed = front_route(*facts);
  Placement placement = place(routed, Protocol::Simple, txn_.control.deferred(),
                              needs_default_shard(routed) ? default_shard() : -1,
                              !needs_read_lease(routed) || read_lease_valid());
  if (placement.kind == Placement::Kind::Run) return run_on(placement, shard);  // the route stays kept
  // Not forwarded as routed: the route leaves the front Query.
  router::Route route = take_front_route();
  if (only == nullptr) refuse_copy_with_others(route, reads_on_session_servers(), placement);
  switch (placement.kind) {
    case Placement::Kind::Run: return run_on(placement, shard);
    case Placement::Kind::WaitForCutover: return wait_for_cutover(route);
    case Placement::Kind::FanOut:
      if (copies_in(route, only)) return start_copy_in(frame, *only, route);
      if (route.reference_write)
        return start_reference_write(std::string(whole(frame)), frame.size, only, route);
      if (route.scatter_write()) return start_scatter_write(frame, route);
      if (route.kind == RouteKind::Split) return start_split_insert(only, route, frame.size);
      return start_fanout(std::string(whole(frame)), frame.size, route, false);
    case Placement::Kind::Refuse: refuse_request(placement.error); return Start::Answered;
  }
  return Start::Answered;
}

bool Session::read_lease_valid() {
  if (host_.directory_read_lease_valid()) return true;
  host_.request_directory_refresh();
  return false;
}

Session::Start Session::run_on(const Placement& placement, int* shard) {
  *shard = placement.shard;
  if (!placement.routed) return Start::Forward;
  end_cutover_wait();
  request_.routed = true;  // the message that chose the server is not checked again
  clock_.route_label = placement.label;
  return Start::Forward;
}

// The transaction has run only riders (statements naming no table) on its server: does this
// Query need another shard?
bool Session::needs_move(const wire::Frame& query) {
  if (!host_.directory()) return false;
  auto facts = facts_of_query(query);
  if (!facts) return false;
  const router::Route& route = front_route(*facts);
  const bool pinnable = route.kind == RouteKind::Shard || route.kind == RouteKind::Default;
  const bool moves = pinnable && !check_pinned(*facts, route).is_ok();
  if (!pinnable || moves) request_.front.forget_route();  // routed again where it runs
  return moves;
}

// Rolls the transaction's server back and gives it back; the Query that needs another shard
// stays in the input and is routed again once the server is gone, the BEGIN and the riders
// deferred again (TransactionControl::finish_move, in release_backend).
void Session::move_transaction() {
  LegAnswers& leg = txn_.leg;
  LOG_DEBUG("client=c%llu transaction leaves shard %d: only statements naming no table ran there",
            (unsigned long long)id(), shard_of(leg));
  txn_.control.start_move();
  leg.outside_transaction = true;  // what the server answers from here on is not the client's
  std::string out;
  wire::encode_query(out, "ROLLBACK");
  expect(Owed::Query, /*relay=*/false, 0, /*relay_errors=*/false);
  active_server().connection().write(out);
  set_request_state(RequestState::WaitingForServer);
}

// The proxy answered BEGIN, SET in a deferred transaction, or its COMMIT/ROLLBACK.
// `extended_answer` holds the ParseComplete/BindComplete/NoData an extended batch is owed
// before its CommandComplete.
Session::Start Session::answer_transaction_control(TransactionControl::Answer answer, size_t batch_size,
                                                   const std::string& extended_answer) {
  using Answer = TransactionControl::Answer;
  if (answer == Answer::Commit || answer == Answer::Rollback)
    profile_.settings.end_transaction(answer == Answer::Commit);
  // Reused per thread: the answer is copied into the client's output at once, and a fresh
  // string was a heap allocation per BEGIN/COMMIT the proxy answers.
  static thread_local std::string out;
  out.assign(extended_answer);
  if (answer == Answer::Rollback && !request_.prepare_refused.is_ok()) {
    wire::encode_error(out, "ERROR", request_.prepare_refused.sqlstate, request_.prepare_refused.message);
    request_.prepare_refused = Status::ok();
  } else {
    wire::encode_command_complete(out, TransactionControl::tag(answer));
  }
  // An extended batch's Sync gets its ReadyForQuery from answer_without_server (or, pipelined
  // behind more statements, from the server that runs them).
  if (extended_answer.empty()) wire::encode_ready_for_query(out, txn_.control.status());
  client_->write(out);
  consume_client(batch_size);
  return Start::Answered;
}

// One target per shard; false with `error` set when a shard has no pool for the client.
bool Session::fanout_targets(const router::Route& route, std::vector<Fanout::Target>* targets,
                             Status* error) {
  const router::Directory& directory = *host_.directory();
  const config::Sharding& sharding = host_.config().sharding;
  for (size_t i = 0; i < directory.shards().size(); ++i) {
    Fanout::Target target;
    target.pool = pool_for_shard(static_cast<int>(i), error);
    if (target.pool == nullptr) return false;
    target.shard = directory.shard_name(static_cast<uint16_t>(i));
    for (const std::string& table : route.fence_tables) {
      for (const auto& configured : sharding.tables) {
        if (configured.name == table)
          target.epilogue_sql += sqltext::install_fence_statement(configured, sharding.buckets) + ";" +
                                 sqltext::bucket_index_statement(configured, sharding.buckets) + ";";
      }
    }
    targets->push_back(std::move(target));
  }
  return true;
}

// One target per shard for a statement that fences no table (DROP INDEX, COMMIT PREPARED); false
// once the request is refused when a shard has no pool for the client.
bool Session::every_shard_targets(std::vector<Fanout::Target>* targets) {
  Status error;
  if (fanout_targets(router::Route{}, targets, &error)) return true;
  refuse_request(error);
  return false;
}

Session::Start Session::start_fanout(std::string message, size_t consumed, const router::Route& route,
                                     bool hide_parse_complete) {
  Status error;
  std::vector<Fanout::Target> targets;
  if (!fanout_targets(route, &targets, &error)) {
    refuse_request(error);
    return Start::Answered;
  }
  // With the session's servers every scatter read runs as a merge (a relaying plan too), but a
  // COPY ... TO STDOUT, which runs as below with the session's servers (run_fanout).
  if (scatter_read(route) && reads_on_session_servers()) {
    if (Status refused = held_read_refusal(route); !refused.is_ok()) {
      refuse_request(refused);
      return Start::Answered;
    }
    if (!route.copy_out) return start_merge(std::move(targets), consumed, route);
  }
  // A plain concatenation relays the shards' rows as they come (any result format); it runs the
  // plan's SQL, which reads only each shard's own rows.
  const bool relay = route.merge && route.merge->relays_rows();
  if (route.merge && !relay) return start_merge(std::move(targets), consumed, route);
  const std::string& shard_sql = relay ? route.merge->shard_sql : route.shard_sql;
  if (!shard_sql.empty() && !message.empty() && message[0] == 'Q') {
    message.clear();
    wire::encode_query(message, shard_sql);
  } else if (!route.shard_sql.empty()) {
    refuse_request(Status::client("0A000", "statement on sharded table " + route.table +
                                               " needs every shard; send it as a simple query"));
    return Start::Answered;
  }
  for (Fanout::Target& target : targets) target.copy_csv_header = route.copy_header;
  return run_fanout(std::move(targets), std::move(message), consumed, route.kind == RouteKind::Scatter,
                    hide_parse_complete);
}

Session::Start Session::run_fanout(std::vector<Fanout::Target> targets, std::string message, size_t consumed,
                                   bool scatter, bool hide_parse_complete, bool first_to_succeed) {
  auto mode = scatter            ? Fanout::Mode::ConcatenateRows
              : first_to_succeed ? Fanout::Mode::FirstToSucceed
                                 : Fanout::Mode::OneAfterAnother;
  LOG_DEBUG("client=c%llu %s on %zu shards", (unsigned long long)id(),
            mode == Fanout::Mode::ConcatenateRows ? "scatter read" : "DDL", targets.size());
  std::vector<pool::Pool*> pools;
  pools.reserve(targets.size());
  for (const auto& target : targets) pools.push_back(target.pool);
  auto label = scatter ? stats::RouteLabel::Scatter : stats::RouteLabel::AllShards;
  // Only a COPY ... TO STDOUT gets here with the session's servers (start_fanout).
  const bool held = scatter && reads_on_session_servers();
  const bool in_transaction = held && writes_in_transaction();
  txn_.runner.emplace<Fanout>(
      mode, std::move(targets), std::move(message), server_state(),
      [this](std::string_view bytes) { client_->write(bytes); },
      [this, in_transaction, pools = std::move(pools), label, started = stats::monotonic_us()] {
        write_session_ready(in_transaction);
        if (!in_transaction) profile_.schema_changes.end_transaction();  // DDL on every shard
        count_fanout(pools, label, started);
        host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
          if (!alive.lock()) return;
          txn_.runner.reset<Fanout>();
          if (request_.state == RequestState::Running) set_request_state(RequestState::Answered);
          if (phase_ == Phase::Ready) read_client_messages();
        });
      });
  if (hide_parse_complete) txn_.runner.get<Fanout>()->hide_parse_complete();
  if (held) {
    if (Status error = hold_copy_servers(*txn_.runner.get<Fanout>()); !error) {
      txn_.runner.reset<Fanout>();
      refuse_request(error);
      return Start::Answered;
    }
  }
  if (scatter && host_.routing_rules().owned_rows_only())
    txn_.runner.get<Fanout>()->watch_start(host_.starting_reads(), host_.directory()->version());
  set_request_state(RequestState::Running);
  consume_client(consumed);
  txn_.runner.get<Fanout>()->start();
  return Start::Wait;
}

Status Session::check_query_route(const parser::QueryFacts& facts, const router::Route& route, bool routed) {
  // Each check's Status is its own variable, returned as built: no Status is move-assigned on
  // the path every statement takes.
  if (Status write = check_write(facts, route); !write.is_ok()) return write;
  if (!routed) {
    if (Status pinned = check_pinned(facts, route); !pinned.is_ok()) return pinned;
  }
  return refuse_commit_among_statements(facts);
}

// Inside a transaction on the leg's shard: may this statement run here?
Status Session::check_pinned(const parser::QueryFacts& facts, const router::Route& route) const {
  const router::Directory& directory = *host_.directory();
  int shard = shard_of(txn_.leg);
  auto cross = [&](const std::string& other) {
    return Status::client(
        "0A000", "the transaction is on shard " + directory.shard_name(static_cast<uint16_t>(shard)) +
                     " but this statement needs shard " + other +
                     " here (a transaction reaches another shard only with a request of its own: send the "
                     "statement in its own Query, or after a Sync)");
  };
  switch (route.kind) {
    case RouteKind::Session:
    case RouteKind::AtBind: return Status::ok();
    case RouteKind::Shard:
    case RouteKind::Default:
      if (route.shard == shard || route.any_shard) return Status::ok();  // any_shard: every shard has it
      if (route.kind == RouteKind::Default && !touches_tables(facts)) return Status::ok();
      return cross(directory.shard_name(static_cast<uint16_t>(route.shard)));
    case RouteKind::Scatter:
    case RouteKind::AllShards:
      if (route.copy_in) {
        return Status::client("0A000",
                              "COPY FROM STDIN into sharded table " + route.table +
                                  " inside a transaction block (or with pool.mode session) runs on every "
                                  "shard only when sent alone in its own Query; send it alone");
      }
      if (route.reference_write) return reference_write_in_transaction(route);
      if (scatter_read(route)) {
        if (Status refused = held_read_refusal(route); !refused.is_ok()) return refused;
      }
      if (route.scatter_write()) {
        return Status::client("0A000", scatter_write_what(route) +
                                           " inside a transaction block (or with pool.mode session) runs "
                                           "only sent alone in its own Query; send it so");
      }
      return cross("every shard");
    case RouteKind::Split: return split_insert_refusal(route);
    case RouteKind::Error: return route.error;
  }
  return route.error;
}

// Makes the server fail the statement with `error`, so the transaction aborts exactly as
// PostgreSQL aborts it, and the client gets the error in its place in the stream.
void Session::inject_abort(const Status& error, bool extended) {
  std::string message = error.message;
  for (size_t at = message.find('\''); at != std::string::npos; at = message.find('\'', at + 2))
    message.insert(at, 1, '\'');
  std::string sql = "DO $sw_abort$ BEGIN RAISE EXCEPTION USING ERRCODE = '" + error.sqlstate +
                    "', MESSAGE = '" + message + "'; END $sw_abort$";
  std::string out;
  if (!extended) {
    wire::encode_query(out, sql);
    request_.queries.push_back(nullptr);
    expect(Owed::Query);
  } else {
    wire::encode_parse(out, "", sql, {});
    wire::MessageWriter(out).begin('B').cstr("").cstr("").int16(0).int16(0).int16(0).end();
    wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
    for (Owed owed : {Owed::Parse, Owed::Bind, Owed::Execute}) expect(owed, /*relay=*/false);
    request_.skip_until_sync = true;
  }
  active_server().connection().write(out);
}

}  // namespace sw::session
