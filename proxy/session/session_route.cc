// Session: picking the shard for a request, deferred BEGIN, and refusing what cannot be routed.
#include "catalog/catalog_sql.h"
#include "common/log.h"
#include "config/config.h"
#include "net/loop.h"
#include "session/session.h"
#include "wire/message_writer.h"
#include "wire/messages.h"

namespace sw::session {
namespace {

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

}  // namespace

pool::Pool* Session::pool_for_shard(int shard, Status* error) {
  size_t index = static_cast<size_t>(shard < 0 ? 0 : shard);
  if (shard_pools_.size() <= index) shard_pools_.resize(index + 1, nullptr);
  pool::Pool*& cached = shard_pools_[index];
  if (cached == nullptr || cached->retired()) cached = host_.pool_for(user_, shard, error);
  return cached;
}

// Answers the client's pending request with `why` and, inside a transaction that has no shard
// yet, marks it failed as a server would.
void Session::refuse_request(const Status& why) {
  if (!deferred_begin_.empty()) {
    deferred_aborted_ = true;
    transaction_status_ = 'E';
  }
  reject_pending_request(why);
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
  routed_version_ = directory->version();
  route_label_ = stats::RouteLabel::Default;
  switch (frame.type) {
    case 'Q': return start_query(frame, shard);
    case 'P':
    case 'B':
    case 'D':
    case 'E':
    case 'C': return start_extended(shard);
    default: *shard = directory->shard_index(host_.routing_rules().default_shard()); return Start::Forward;
  }
}

Session::Start Session::start_query(const wire::Frame& frame, int* shard) {
  const router::Directory& directory = *host_.directory();
  auto sql = wire::decode_query(frame.body);
  if (!sql) {
    refuse_request(sql.status());
    return Start::Answered;
  }
  auto facts = parser::analyze(*sql);
  if (!facts) {
    // Let the default shard's server report its own syntax error, exactly.
    *shard = directory.shard_index(host_.routing_rules().default_shard());
    return Start::Forward;
  }
  const parser::StatementFacts* only = single_statement(**facts);
  bool protected_setting = (only != nullptr) &&
                           (only->kind == StatementKind::Set || only->kind == StatementKind::SetLocal) &&
                           SessionState::is_protected(only->set_name);
  if (only != nullptr && !protected_setting) {
    Start answered = start_transaction_control(only->kind, only->text, frame.size, {});
    if (answered != Start::Forward) {
      state_.on_statement(*only);  // a deferred SET counts if the transaction commits
      return answered;
    }
  }
  if (deferred_aborted_) {
    refuse_request(Status::client(
        "25P02", "current transaction is aborted, commands ignored until end of transaction block"));
    return Start::Answered;
  }
  router::Route route = router::route_query(**facts, nullptr, directory, host_.routing_rules());
  switch (route.kind) {
    case RouteKind::Shard:
    case RouteKind::Default:
      if (route.migrating && route.writes) return wait_for_cutover(route);
      end_cutover_wait();
      *shard = route.shard;
      first_message_routed_ = true;
      route_label_ = route.kind == RouteKind::Shard ? stats::RouteLabel::Shard : stats::RouteLabel::Default;
      return Start::Forward;
    case RouteKind::Session:
    case RouteKind::AtBind:
      *shard = directory.shard_index(host_.routing_rules().default_shard());
      return Start::Forward;
    case RouteKind::Scatter:
    case RouteKind::AllShards:
      if (!deferred_begin_.empty()) {
        refuse_request(Status::client("0A000", "statement on sharded table " + route.table +
                                                   " needs every shard, which a transaction cannot span"));
        return Start::Answered;
      }
      return start_fanout(std::string(whole(frame)), frame.size, route, false);
    case RouteKind::Error: refuse_request(route.error); return Start::Answered;
  }
  return Start::Answered;
}

// BEGIN is answered by the proxy and sent with the first statement that picks a shard; COMMIT
// or ROLLBACK of a transaction that never picked one is answered too. `extended_answer` holds
// the ParseComplete/BindComplete/NoData an extended batch is owed before its CommandComplete.
Session::Start Session::start_transaction_control(StatementKind kind, std::string_view sql, size_t batch_size,
                                                  const std::string& extended_answer) {
  bool in_deferred = !deferred_begin_.empty();
  std::string tag;
  if (kind == StatementKind::Begin && !in_deferred && transaction_status_ == 'I') {
    deferred_begin_ = std::string(sql);
    transaction_status_ = 'T';
    tag = "BEGIN";
  } else if ((kind == StatementKind::Set || kind == StatementKind::SetLocal) && in_deferred &&
             !deferred_aborted_) {
    // A setting picks no shard: it runs with the BEGIN, on the shard the transaction gets.
    deferred_begin_ += ";";
    deferred_begin_ += sql;
    tag = "SET";
  } else if ((kind == StatementKind::Commit || kind == StatementKind::Rollback) && in_deferred) {
    tag = deferred_aborted_ || kind == StatementKind::Rollback ? "ROLLBACK" : "COMMIT";
    state_.end_transaction(tag == "COMMIT");
    deferred_begin_.clear();
    deferred_aborted_ = false;
    transaction_status_ = 'I';
  } else {
    return Start::Forward;
  }
  std::string out = extended_answer;
  wire::encode_command_complete(out, tag);
  // An extended batch's Sync gets its ReadyForQuery from answer_without_server (or, pipelined
  // behind more statements, from the server that runs them).
  if (extended_answer.empty()) wire::encode_ready_for_query(out, transaction_status_);
  client_->write(out);
  consume_client(batch_size);
  return Start::Answered;
}

Session::Start Session::start_fanout(std::string message, size_t consumed, const router::Route& route,
                                     bool hide_parse_complete) {
  const router::Directory& directory = *host_.directory();
  std::vector<Fanout::Target> targets;
  for (size_t i = 0; i < directory.shards().size(); ++i) {
    Status error;
    Fanout::Target target;
    target.pool = pool_for_shard(static_cast<int>(i), &error);
    if (target.pool == nullptr) {
      refuse_request(error);
      return Start::Answered;
    }
    target.shard = directory.shard_name(static_cast<uint16_t>(i));
    for (const std::string& table : route.fence_tables) {
      for (const auto& configured : host_.config().sharding.tables) {
        if (configured.name == table)
          target.epilogue_sql +=
              catalog::install_fence_statement(configured, host_.config().sharding.buckets) + ";" +
              catalog::bucket_index_statement(configured, host_.config().sharding.buckets) + ";";
      }
    }
    targets.push_back(std::move(target));
  }
  auto mode =
      route.kind == RouteKind::Scatter ? Fanout::Mode::ConcatenateRows : Fanout::Mode::OneAfterAnother;
  LOG_DEBUG("client=c%llu %s on %zu shards", (unsigned long long)id(),
            mode == Fanout::Mode::ConcatenateRows ? "scatter read" : "DDL", targets.size());
  std::vector<pool::Pool*> pools;
  for (const auto& target : targets) pools.push_back(target.pool);
  auto label = route.kind == RouteKind::Scatter ? stats::RouteLabel::Scatter : stats::RouteLabel::AllShards;
  fanout_ = std::make_unique<Fanout>(
      mode, std::move(targets), std::move(message), state_.signature(),
      [this](std::string_view bytes) { client_->write(bytes); },
      [this, pools = std::move(pools), label, started = stats::monotonic_us()] {
        count_fanout(pools, label, started);
        host_.loop().post([this, alive = std::weak_ptr<int>(alive_)] {
          if (!alive.lock()) return;
          fanout_.reset();
          if (phase_ == Phase::Ready) read_client_messages();
        });
      });
  if (hide_parse_complete) fanout_->hide_parse_complete();
  consume_client(consumed);
  fanout_->start();
  return Start::Wait;
}

// Inside a transaction on shard_: may this statement run here?
Status Session::check_pinned(const parser::QueryFacts& facts, const router::Route& route) const {
  const router::Directory& directory = *host_.directory();
  auto cross = [&](const std::string& other) {
    return Status::client(
        "0A000", "the transaction is on shard " + directory.shard_name(static_cast<uint16_t>(shard_)) +
                     " but this statement needs shard " + other + " (transactions cannot span shards)");
  };
  switch (route.kind) {
    case RouteKind::Session:
    case RouteKind::AtBind: return Status::ok();
    case RouteKind::Shard:
    case RouteKind::Default:
      if (route.shard == shard_) return Status::ok();
      if (route.kind == RouteKind::Default && !touches_tables(facts)) return Status::ok();
      return cross(directory.shard_name(static_cast<uint16_t>(route.shard)));
    case RouteKind::Scatter:
    case RouteKind::AllShards: return cross("every shard");
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
    queries_in_flight_.push_back(nullptr);
    expect(Owed::Query);
  } else {
    wire::encode_parse(out, "", sql, {});
    wire::MessageWriter(out).begin('B').cstr("").cstr("").int16(0).int16(0).int16(0).end();
    wire::MessageWriter(out).begin('E').cstr("").int32(0).end();
    for (Owed owed : {Owed::Parse, Owed::Bind, Owed::Execute}) expect(owed, /*relay=*/false);
    skip_until_sync_ = true;
  }
  backend_->connection().write(out);
}

}  // namespace sw::session
