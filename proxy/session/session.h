// One client connection: startup (TLS, cancel), authentication, then relaying both query
// protocols to a server borrowed from the pool per transaction (or for the whole session).
// Lives on one worker loop; never throws; every error names whose fault it is.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "net/connection.h"
#include "net/timer.h"
#include "parser/analyze.h"
#include "pool/pool.h"
#include "router/directory.h"
#include "router/router.h"
#include "session/client_auth.h"
#include "session/fanout.h"
#include "session/prepared_statements.h"
#include "session/response_tracker.h"
#include "session/session_state.h"
#include "stats/snapshot.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/server_check.h"
#include "wire/startup.h"

namespace sw::config {
struct Config;
}
namespace sw::net {
class Loop;
class TlsContext;
}  // namespace sw::net

namespace sw::session {

class Session;

// The bytes of a whole typed frame (type, length and body) as they arrived.
inline std::string_view whole(const wire::Frame& frame) {
  return {frame.body.data() + frame.body.size() - frame.size, frame.size};
}

// What a session needs from the worker that owns it.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  virtual net::Loop& loop() = 0;
  virtual const config::Config& config() = 0;
  // The pool serving `user` on shard `shard` (an index into directory()->shards(); -1 = the
  // default shard); nullptr with `error` set if none can.
  virtual pool::Pool* pool_for(const std::string& user, int shard, Status* error) = 0;
  // The bucket directory this worker routes with (null until the catalog delivered one).
  virtual const std::shared_ptr<const router::Directory>& directory() = 0;
  // False once the directory could not be confirmed within sharding.directory_lease.
  virtual bool directory_lease_valid() = 0;
  // A shard refused a write with SW001: the directory is stale.
  virtual void request_directory_refresh() = 0;
  virtual const router::RoutingRules& routing_rules() = 0;
  virtual std::shared_ptr<net::TlsContext> server_tls() = 0;
  virtual StatementRegistry& statements() = 0;
  virtual wire::CancelKey register_cancel(Session* session) = 0;
  virtual void unregister_cancel(wire::CancelKey key) = 0;
  // A CancelRequest arrived on a new connection: find the session it names (on any worker).
  virtual void forward_cancel(wire::CancelKey key) = 0;
  virtual bool shutting_down() = 0;
  // The session is finished; the host deletes it outside the session's own callbacks.
  virtual void session_closed(Session* session) = 0;
  // This worker's counters (logins, latency, backend errors).
  virtual stats::WorkerTraffic& traffic() = 0;
  // PAUSE: a session about to start a transaction asks; if paused, it waits for resume_after_pause().
  virtual bool hold_if_paused(Session* session) = 0;
  // A new transaction writes a MIGRATING bucket: hold it until the directory changes. False when
  // cutover.queue_max requests wait already.
  virtual bool queue_for_cutover(Session* session) = 0;
  virtual void dequeue_from_cutover(Session* session) = 0;
  // The admin console: `reply` gets the answer (without ReadyForQuery) on this thread, once.
  virtual void admin_command(std::string_view sql, std::function<void(std::string)> reply) = 0;
};

// A statement parsed in an extended-protocol batch that is being routed.
struct BatchStatement {
  std::string query;
  std::vector<uint32_t> types;
};

class Session : private net::Connection::Handler, private pool::Pool::Waiter, private pool::BackendUser {
 public:
  Session(SessionHost& host, std::unique_ptr<net::Connection> client);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint64_t id() const { return client_->id(); }
  // A CancelRequest for this session's key: cancels the query its server is running, if any.
  void cancel_running_query();
  // SIGTERM: finish the transaction in progress, then leave; idle sessions leave now.
  void begin_shutdown();
  // Closes the client now (SIGINT, admin KILL).
  void terminate(const Status& why);
  // RESUME after PAUSE held this session (see SessionHost::hold_if_paused).
  void resume_after_pause();
  // A new directory arrived while a write waited for its bucket's cutover.
  void resume_after_directory_change();
  // A transaction (or a fan-out) holds servers right now: PAUSE waits for it.
  bool holds_server() const { return backend_ != nullptr || fanout_ != nullptr; }
  // For SHOW CLIENTS and SHOW POOLS (session_report.cc): `pool` is the pool the client counts
  // in (its server's, the one it waits for, else its login pool).
  stats::ClientInfo report(int worker, const pool::Pool** pool) const;
  uint64_t client_bytes_read() const { return client_->bytes_read(); }
  uint64_t client_bytes_written() const { return client_->bytes_written(); }

 private:
  enum class Phase { Startup, Authenticating, AwaitingServerParameters, Ready, Closed };

  // net::Connection::Handler (client side)
  void on_readable(net::Connection& connection) override;
  void on_closed(net::Connection& connection, const Status& why) override;
  void on_drained(net::Connection& connection) override;
  // pool::Pool::Waiter
  void on_backend_ready(pool::Backend* backend) override;
  void on_backend_failed(const Status& why) override;
  // pool::BackendUser
  void on_backend_readable(pool::Backend& backend) override;
  void on_backend_lost(pool::Backend& backend, const Status& why) override;
  void on_backend_drained(pool::Backend& backend) override;

  // Login (session_login.cc)
  void read_startup();
  void handle_startup_packet(const wire::StartupPacket& packet);
  void read_auth();
  void after_authentication();
  void finish_login();
  void fail_login(const Status& why);
  // Admin console (session_admin.cc)
  void start_admin();
  void read_admin_messages();
  // Statistics (session_report.cc)
  void note_request_start();
  void count_request_done();
  void count_fanout(const std::vector<pool::Pool*>& pools, stats::RouteLabel label, int64_t started_us);

  // Relay (session_relay.cc)
  std::string_view client_input() const;
  void consume_client(size_t n);
  void read_client_messages();
  bool answer_without_server(const wire::Frame& frame);
  bool acquire_backend(int shard);
  void attach(pool::Backend* backend);
  Status forward(const wire::Frame& frame);
  Status forward_query(const wire::Frame& frame);
  Status forward_parse(const wire::Frame& frame);
  Status forward_bind(const wire::Frame& frame);
  Status forward_describe_or_close(const wire::Frame& frame);
  void ensure_prepared(const PreparedStatement& statement);
  // Records what the server owes for a message written to it. Injected messages pass
  // relay=false (their answers are swallowed; their errors reach the client if relay_errors).
  void expect(Owed owed, bool relay = true, uint64_t statement = 0, bool relay_errors = true);
  // An answer the proxy gives itself, in its exact place among the server's answers.
  void answer_in_place(std::string bytes);
  void answer_with_error(const Status& error);
  void reject_pending_request(const Status& why);
  void read_server_messages();
  bool handle_server_message(const wire::Frame& frame);
  void relay_parameter_status(std::string_view body, bool relay);
  void on_query_finished(bool failed);
  void maybe_release_backend();
  void release_backend(bool clean);

  // Routing (session_route.cc)
  enum class Start { Forward, Answered, Wait };
  Start start_request(const wire::Frame& frame, int* shard);
  Start start_query(const wire::Frame& frame, int* shard);
  Start start_extended(int* shard);
  Start start_transaction_control(parser::StatementKind kind, std::string_view sql, size_t batch_size,
                                  const std::string& extended_answer);
  void remember_parsed(const std::map<std::string, BatchStatement, std::less<>>& parsed);
  Start start_fanout(std::string message, size_t consumed, const router::Route& route,
                     bool hide_parse_complete);
  Start start_extended_scatter(const BatchStatement& statement, const wire::BindMessage& bind,
                               size_t bind_end, const router::Route& route, bool client_parsed);
  Status check_bind_route(const wire::BindMessage& bind);
  Status check_pinned(const parser::QueryFacts& facts, const router::Route& route) const;
  void inject_abort(const Status& error, bool extended);
  void refuse_request(const Status& why);
  pool::Pool* pool_for_shard(int shard, Status* error);
  // Cutover queue (session_cutover.cc)
  Start wait_for_cutover(const router::Route& route);
  void end_cutover_wait();
  void on_cutover_timeout();
  // Fence errors (session_retry.cc)
  void capture_request(std::string_view bytes);
  bool on_fence_error(std::string_view body);
  void retry_after_fence();

  // Client output for server answers and proxy answers in the stream. While the first request's
  // answer has not started, ParseComplete/BindComplete/descriptions are held back, so a fence
  // retry can re-run the request without the client seeing them twice.
  void to_client(std::string_view bytes);
  bool replaying() const { return !replay_input_.empty(); }

  void send_fatal(const Status& why);
  void close(const char* reason);

  SessionHost& host_;
  std::unique_ptr<net::Connection> client_;
  Phase phase_ = Phase::Startup;
  wire::Limits limits_;
  net::Timer login_timer_;
  bool tls_done_ = false;

  std::string user_;
  std::string database_;
  std::unique_ptr<ClientAuth> auth_;
  wire::CancelKey cancel_key_;
  bool cancel_registered_ = false;
  std::map<std::string, std::string> client_parameters_;  // as the client was last told

  pool::Pool* pool_ = nullptr;  // the default shard's pool (login, server parameters)
  pool::Backend* backend_ = nullptr;
  int shard_ = -1;  // backend_'s shard: the transaction's shard
  std::vector<pool::Pool*> shard_pools_;
  std::string deferred_begin_;     // a BEGIN answered by the proxy, sent with the first statement
  bool deferred_aborted_ = false;  // a statement failed before the transaction had a shard
  std::unique_ptr<Fanout> fanout_;
  std::string last_unnamed_query_;  // the unnamed statement, for routing a later Bind
  std::vector<uint32_t> last_unnamed_types_;
  // Fence retry: the first request of a transaction is kept until its answer starts, so a
  // SW001 can re-run it on the bucket's new owner.
  std::string replay_input_;
  std::string first_request_;
  std::string first_request_begin_;
  std::string held_;  // answers held back during the first request (see to_client)
  bool capturing_ = false;
  bool answer_started_ = false;
  bool retry_pending_ = false;
  bool retried_ = false;  // one retry per request
  bool retry_now_ = false;
  uint64_t routed_version_ = 0;
  std::unique_ptr<net::Timer> retry_timer_;
  int retry_polls_ = 0;
  bool waiting_for_backend_ = false;
  pool::Pool* waiting_pool_ = nullptr;
  bool session_pooling_ = false;
  ResponseTracker tracker_;
  wire::ServerMessageCheck server_check_;  // of backend_'s messages; reset at attach
  char transaction_status_ = 'I';          // as the client sees it (a deferred BEGIN makes it 'T')
  char server_status_ = 'I';               // as backend_'s last ReadyForQuery said
  bool outside_transaction_ = false;       // backend_ runs a Parse/Describe batch outside it
  bool first_message_routed_ = false;      // the next Query/Bind picked backend_: no need to route it again
  bool extended_open_ = false;             // extended-protocol messages forwarded since the last Sync
  bool skip_until_sync_ = false;           // the proxy answered an error; drop messages up to Sync
  bool query_failed_ = false;              // the Query in progress got an ErrorResponse
  std::deque<std::shared_ptr<const parser::QueryFacts>> queries_in_flight_;
  SessionState state_;
  ClientStatements statements_;
  bool shutdown_pending_ = false;
  bool admin_ = false;       // a console session: no servers, commands go to the host
  bool admin_busy_ = false;  // a console command is running; later input waits
  bool held_by_pause_ = false;
  bool queued_for_cutover_ = false;
  uint32_t waiting_bucket_ = 0;
  std::unique_ptr<net::Timer> cutover_timer_;  // set while a write waits for a cutover
  // Statistics
  int64_t connected_at_us_ = stats::wall_clock_us();
  int64_t request_wall_us_ = 0;
  int64_t request_started_us_ = 0;  // monotonic; 0 = no request in flight
  int64_t xact_started_us_ = 0;
  stats::RouteLabel route_label_ = stats::RouteLabel::Default;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // lets posted tasks detect our end
};

}  // namespace sw::session
