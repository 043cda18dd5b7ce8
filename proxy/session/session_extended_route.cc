// Session: routing an extended-protocol batch. The shard is decided at its first Bind, from the
// parameter values; a batch with no Bind before its Sync (Parse/Describe only) may run anywhere.
#include "common/bytes.h"
#include "session/session.h"
#include "wire/messages.h"

namespace sw::session {
namespace {}  // namespace

// The proxy answered a batch itself: its Parses still define statements for later Binds.
void Session::remember_parsed(const std::map<std::string, BatchStatement, std::less<>>& parsed) {
  for (const auto& [name, statement] : parsed) {
    if (name.empty()) {
      last_unnamed_query_ = statement.query;
      last_unnamed_types_ = statement.types;
    } else if (!session_pooling_) {
      statements_.add(name, host_.statements().intern(statement.query, statement.types));
    }
  }
}

Session::Start Session::start_extended(int* shard) {
  const router::Directory& directory = *host_.directory();
  const int default_shard = directory.shard_index(host_.routing_rules().default_shard());
  std::string_view input = client_input();
  std::map<std::string, BatchStatement, std::less<>> parsed;  // Parses seen in this batch
  std::string answer;  // what the proxy owes if it answers a transaction-control batch itself
  size_t offset = 0;
  while (true) {
    auto result = wire::read_frame(input.substr(offset), wire::Sender::Client, limits_);
    if (result.status == wire::FrameStatus::NeedMore) return Start::Wait;  // the Bind is still coming
    if (result.status == wire::FrameStatus::Error) {
      *shard = default_shard;  // read_client_messages reports the violation when it gets there
      return Start::Forward;
    }
    const wire::Frame& frame = result.frame;
    switch (frame.type) {
      case 'P': {
        auto parse = wire::decode_parse(frame.body);
        if (parse) parsed[std::string(parse->statement)] = {std::string(parse->query), parse->param_types};
        wire::encode_parse_complete(answer);
        break;
      }
      case 'D':
        answer += '\x01';  // a statement Describe needs a server: not answerable by the proxy
        break;
      case 'B': {
        auto bind = wire::decode_bind(frame.body);
        if (!bind) {
          *shard = default_shard;
          return Start::Forward;
        }
        const BatchStatement* statement = nullptr;
        BatchStatement known;
        if (auto it = parsed.find(bind->statement); it != parsed.end()) {
          statement = &it->second;
        } else if (bind->statement.empty()) {
          known = {last_unnamed_query_, last_unnamed_types_};
          statement = &known;
        } else if (const PreparedStatement* prepared = statements_.find(bind->statement)) {
          known = {prepared->query, prepared->param_types};
          statement = &known;
        }
        if (statement == nullptr) {
          *shard = default_shard;  // the server reports the unknown statement
          return Start::Forward;
        }
        auto facts = parser::analyze(statement->query);
        if (!facts || (*facts)->statements.size() != 1) {
          *shard = default_shard;
          return Start::Forward;
        }
        const parser::StatementFacts& only = (*facts)->statements.front();
        wire::encode_bind_complete(answer);
        size_t batch = offset + frame.size;
        // A BEGIN/COMMIT/ROLLBACK batch (Parse? Bind Describe? Execute) answered by the proxy.
        auto rest = wire::read_frame(input.substr(batch), wire::Sender::Client, limits_);
        if (rest.status == wire::FrameStatus::NeedMore) return Start::Wait;
        if (rest.status == wire::FrameStatus::Complete && rest.frame.type == 'D') {
          answer += "n";
          answer.append("\0\0\0\4", 4);
          batch += rest.frame.size;
          rest = wire::read_frame(input.substr(batch), wire::Sender::Client, limits_);
          if (rest.status == wire::FrameStatus::NeedMore) return Start::Wait;
        }
        if (rest.status == wire::FrameStatus::Complete && rest.frame.type == 'E' &&
            answer.find('\x01') == std::string::npos) {
          Start answered = start_transaction_control(only.kind, only.text, batch + rest.frame.size, answer);
          if (answered != Start::Forward) {
            remember_parsed(parsed);
            return answered;
          }
        }
        if (deferred_aborted_) {
          refuse_request(Status::client(
              "25P02", "current transaction is aborted, commands ignored until end of transaction block"));
          return Start::Answered;
        }
        auto values = router::decode_bind_values(bind->rest, statement->types);
        if (!values) {
          refuse_request(values.status());
          return Start::Answered;
        }
        router::Route route = router::route(only, &*values, directory, host_.routing_rules());
        switch (route.kind) {
          case router::RouteKind::Shard:
          case router::RouteKind::Default:
            if (route.migrating && route.writes) return wait_for_cutover(route);
            end_cutover_wait();
            *shard = route.shard;
            first_message_routed_ = true;  // this Bind chose the server
            route_label_ = route.kind == router::RouteKind::Shard ? stats::RouteLabel::Shard
                                                                  : stats::RouteLabel::Default;
            return Start::Forward;
          case router::RouteKind::Error: refuse_request(route.error); return Start::Answered;
          case router::RouteKind::Scatter:
            if (deferred_begin_.empty()) {
              remember_parsed(parsed);
              return start_extended_scatter(*statement, *bind, offset + frame.size, route,
                                            parsed.count(std::string(bind->statement)) != 0);
            }
            [[fallthrough]];
          case router::RouteKind::AllShards:
            refuse_request(Status::client(
                "0A000",
                "statement on sharded table " + route.table +
                    " needs every shard; shardwire runs such statements only in the simple query protocol"));
            return Start::Answered;
          default: *shard = default_shard; return Start::Forward;
        }
      }
      case 'S':
      case 'H':
        // Parse/Describe without Bind: schemas are the same everywhere. Inside a transaction
        // that has no shard yet, this must not be what picks one.
        *shard = default_shard;
        outside_transaction_ = !deferred_begin_.empty();
        return Start::Forward;
      default: answer += '\x01'; break;
    }
    offset += frame.size;
  }
}

// A keyless read in the extended protocol, sent to every shard: the batch must be
// [Parse] Bind [Describe portal] Execute(all rows) Sync. Each shard gets it with the statement
// parsed as the unnamed one, so no shard needs the client's statement prepared beforehand.
Session::Start Session::start_extended_scatter(const BatchStatement& statement, const wire::BindMessage& bind,
                                               size_t bind_end, const router::Route& route,
                                               bool client_parsed) {
  std::string_view input = client_input();
  size_t offset = bind_end;
  auto next = [&]() { return wire::read_frame(input.substr(offset), wire::Sender::Client, limits_); };
  auto frame = next();
  if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  std::string batch;
  wire::encode_parse(batch, "", statement.query, statement.types);
  wire::encode_bind_renamed(batch, bind, "");
  if (frame.status == wire::FrameStatus::Complete && frame.frame.type == 'D') {
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
    frame = next();
    if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  }
  bool execute_all = frame.status == wire::FrameStatus::Complete && frame.frame.type == 'E' &&
                     frame.frame.body.size() >= 4 &&
                     load_be32(frame.frame.body.data() + frame.frame.body.size() - 4) == 0;
  if (execute_all) {
    batch.append(whole(frame.frame));
    offset += frame.frame.size;
    frame = next();
    if (frame.status == wire::FrameStatus::NeedMore) return Start::Wait;
  }
  if (!execute_all || frame.status != wire::FrameStatus::Complete || frame.frame.type != 'S') {
    refuse_request(Status::client("0A000", "a read of sharded table " + route.table +
                                               " without a key runs on every shard only as one batch of "
                                               "Bind, Describe, Execute (all rows) and Sync"));
    return Start::Answered;
  }
  batch.append(whole(frame.frame));
  offset += frame.frame.size;
  return start_fanout(std::move(batch), offset, route, !client_parsed);
}

}  // namespace sw::session
