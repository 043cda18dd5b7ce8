// The client's requests (a Query, or an extended batch up to Sync or Flush) as the session works
// through them. The state is that of the request at the front of the client's input; requests
// already forwarded are in the leg's ResponseTracker with the answers they owe.
//
//   routing ──> answered                 (the proxy answers it: BEGIN, Sync, refusals, ...)
//      │──> waiting_for_cutover ──> routing   (directory changed) | answered (timeout: 40001)
//      │──> waiting_for_server ──> running    (a server, or PAUSE lifted) | answered (no server)
//      └──> running ──> answered             (ReadyForQuery relayed; the server may go back)
//              │──> retrying_after_fence ──> routing   (SW001 on the first request: run it again)
//              │──> waiting_for_leg ──> routing        (it needs another leg: once the active one
//              │                                        owes nothing it is routed again)
//              │──> lent_until_sync ──> routing | running  (a Parse/Describe batch's server, lent
//              │                                        until the proxy's Sync: given back or kept)
//              │──> waiting_for_server ──> routing     (it needs another shard than the riders'
//              │                                        server: that one is rolled back first)
//              └──> waiting_for_server ──> running     (it needs a shard the transaction has no
//                                                       leg on yet: a server joins)
// (proxy/session/README.md has the whole diagram.)
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "parser/analyze.h"
#include "parser/prepared_sql.h"
#include "router/router.h"
#include "session/error_position.h"
#include "session/prepared_statements.h"

namespace sw::session {

enum class RequestState : uint8_t {
  Routing,             // no server: deciding where the next request goes
  WaitingForServer,    // no server for it yet (pool, PAUSE, or the transaction leaves its server)
  WaitingForCutover,   // it writes a bucket in cutover: waits for the new directory
  Running,             // a server (or a fan-out) runs it
  RetryingAfterFence,  // its shard refused it with SW001: it runs again once the directory moved
  Answered,            // the proxy answered it itself
  WaitingForLeg,       // it needs another leg: waits until the active leg owes nothing
  // Transaction pooling: a Parse/Describe batch ended by a Flush ran on a server lent for it
  // only; the proxy's Sync went, and no client input is read until that server is back (given
  // back: routing; kept because the batch pinned the client: running).
  LentUntilSync,
};

// True when the session reads and routes more client input in `state`.
inline bool reads_client_input(RequestState state) {
  return state == RequestState::Routing || state == RequestState::Running || state == RequestState::Answered;
}

// The Query at the front of the client's input, analyzed once for routing and forwarding
// (Session::front_query, §5.2). Forgotten when client input is consumed or a Query finishes (a
// finished PREPARE or DEALLOCATE changes what an EXECUTE expands to).
struct FrontQuery {
  const char* body = nullptr;  // the analyzed frame: its body's place and size in the input
  size_t size = 0;
  Status refused;              // an EXECUTE of the client's prepared statement that cannot run
  std::string refused_detail;  // ... and PostgreSQL's DETAIL for it, if any
  std::string expanded;        // the statement such an EXECUTE runs instead; empty when none
  // Which bytes of `expanded` are the client's (parser::ExpandedSql): error positions map back.
  std::vector<parser::ExpandedSql::Piece> expanded_pieces;
  // The client's protocol-level statement `expanded` EXECUTEs by its server name (§5.3): the
  // server gets its Parse first when it lacks it.
  std::shared_ptr<const PreparedStatement> runs;
  std::string runs_name;  // its client's name (session pooling: the servers' name too)
  std::shared_ptr<const parser::QueryFacts> facts;  // null when the text does not parse
  // Its route, handed from routing to forwarding within one pass over the client input only: a
  // new directory or a reload comes between passes (Session::front_route).
  std::optional<router::Route> route;

  // As constructed (buffers keep their capacity): once per Query, where assigning a fresh
  // FrontQuery moved every member.
  void forget() {
    body = nullptr;
    size = 0;
    refused.fault = Fault::None;
    refused.sqlstate.clear();
    refused.message.clear();
    refused_detail.clear();
    expanded.clear();
    expanded_pieces.clear();
    runs.reset();
    runs_name.clear();
    facts.reset();
    forget_route();
  }
  // Forgets the route, its bucket list and table name handed back to the router for the next
  // route (router::recycle): routing a keyed Query then allocates nothing.
  void forget_route() {
    if (!route) return;
    router::recycle(*route);
    route.reset();
  }
};

// The route of the Bind that picked the server of an extended batch (start_bound_batch), for the
// check of that Bind when it is forwarded in the same pass (forward_bind): the same statement
// facts (held, so the address cannot be reused) and the same Bind bytes route the same.
struct BoundRoute {
  std::shared_ptr<const parser::QueryFacts> facts;
  std::string_view bind;  // the Bind's values in the client input (BindMessage::rest)
  router::Route route;
  // The query of the batch's Parse whose statement the Bind names, in the client input (empty
  // when the Bind names an earlier statement): its facts are `facts`, so forward_parse, in the
  // same pass over the same bytes, does not analyze it again.
  std::string_view parse_query;
};

struct Request {
  RequestState state = RequestState::Routing;
  bool routed = false;           // the Query/Bind that picked the server needs no routing check again
  bool batch_open = false;       // extended-protocol messages forwarded since the last Sync
  bool batch_bound = false;      // a Bind (other than a BEGIN) was forwarded since the last Sync
  bool skip_until_sync = false;  // an error was answered: messages up to Sync are dropped
  // A server's error went to the client since the active leg's last ReadyForQuery: the unsynced
  // batch failed on it, so it does not spread to another leg (session_legs_pipeline.cc).
  bool batch_failed = false;
  // Transaction pooling: a Parse/Describe batch ended by a Flush with no Bind yet runs on a server
  // that is lent for it only: the proxy ends it with a Sync of its own (answer swallowed) and
  // gives the server back, so the Bind that follows picks the shard (and the transaction's).
  bool lend_at_flush = false;    // the batch being forwarded ends so at its Flush (then LentUntilSync)
  bool query_failed = false;     // the Query in progress got an ErrorResponse
  bool unpin_if_failed = false;  // it pinned its client, and its failure would leave nothing behind
  bool joining_leg = false;      // the server being acquired joins a transaction already started
  FrontQuery front;
  // A refused PREPARE TRANSACTION that runs as ROLLBACK: the client gets this error in place of
  // the ROLLBACK's CommandComplete (Session::prepare_transaction_as_rollback).
  Status prepare_refused;
  // The statement the last forwarded Bind named, when it changes settings: its Execute carries it.
  std::shared_ptr<const parser::QueryFacts> bound_settings;
  std::optional<BoundRoute> bound;  // set at start_bound_batch, taken at its Bind's forward_bind
  // The values of the Bind being routed, decoded into the same buffers every time
  // (wire::decode_bind_values): routing a Bind allocates nothing for them once they are large
  // enough. Valid until the next Bind is decoded: read only by the route computed from them.
  wire::BindValues bind_values;
  // A client message rewritten for the server (a Bind of a prepared statement renamed to the
  // server's statement), encoded into the same buffer every time: the connection copies it.
  std::string rewritten;
  // Forgets `bound`, its route's buffers handed back to the router (router::recycle).
  void forget_bound() {
    if (!bound) return;
    router::recycle(bound->route);
    bound.reset();
  }
  // The statements of forwarded Queries, in order: their settings count once they succeed. Null
  // for a Query whose success changes nothing the session tracks (changes_tracked_state).
  std::deque<std::shared_ptr<const parser::QueryFacts>> queries;
  // Startup values restored after a RESET (or the DEALLOCATE after a PREPARE in transaction
  // pooling) are owed: the client's answers from its ReadyForQuery on wait in `held` until that
  // ReadyForQuery, so the client sees the restored values (and their ParameterStatus) as soon as
  // its RESET is answered, as on a server, and the server is back in its pool by then.
  bool restore_owed = false;
  bool restore_settings = false;  // what is owed restores startup settings (not a DEALLOCATE)
  std::string held;
  // Forwarded Queries whose EXECUTE the proxy rewrote, in order (their `queries` entries are their
  // facts): an error's position maps back to the client's text (Session::client_error_position).
  struct RewrittenQuery : RewrittenText {
    std::shared_ptr<const parser::QueryFacts> facts;
  };
  std::deque<RewrittenQuery> rewritten_queries;
  // Forwarded Queries with a SQL-level PREPARE, in order (their `queries` entries are their facts),
  // and their text as the client sent it: pg_prepared_statements shows it (§5.3).
  std::deque<std::pair<std::shared_ptr<const parser::QueryFacts>, std::string>> prepare_sources;
};

}  // namespace sw::session
