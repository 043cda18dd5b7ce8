// One client connection: startup (TLS, cancel), authentication, then relaying both query
// protocols to a server borrowed from the pool per transaction (or for the whole session).
// Lives on one worker loop; never throws; every error names whose fault it is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "merge/value.h"
#include "net/connection.h"
#include "net/timer.h"
#include "parser/analyze.h"
#include "pool/pool.h"
#include "router/directory.h"
#include "router/router.h"
#include "session/cancel_join.h"
#include "session/client_auth.h"
#include "session/cursor_statement.h"
#include "session/cutover_wait.h"
#include "session/drop_index.h"
#include "session/fence_retry.h"
#include "session/host.h"
#include "session/leg_engine.h"
#include "session/pinning.h"
#include "session/prepared_statements.h"
#include "session/request.h"
#include "session/request_transitions.h"
#include "session/routing.h"
#include "session/server_state.h"
#include "session/session_state.h"
#include "session/sql_prepared.h"
#include "session/starting_reads.h"
#include "session/transaction.h"
#include "stats/snapshot.h"
#include "wire/frame_reader.h"
#include "wire/messages.h"
#include "wire/server_check.h"
#include "wire/startup.h"

namespace sw::session {

class Session;

// Bind values a shard gets in place of the client's, for a statement whose key lists are cut by
// shard (merge::ShardStatement::params).
using ShardParams = std::vector<merge::ShardStatement::Param>;
// "INSERT ... SELECT into sharded table t on several shards", "write of sharded table t with keys
// on several shards": a scatter write, for messages.
std::string scatter_write_what(const router::Route& route);

// The bytes of a whole typed frame (type, length and body) as they arrived.
inline std::string_view whole(const wire::Frame& frame) {
  return {frame.body.data() + frame.body.size() - frame.size, frame.size};
}

// What the session knows about its client, for as long as it is connected.
struct ClientProfile {
  std::string user;
  std::string database;
  std::map<std::string, std::string> parameters;  // ParameterStatus values as the client was last told
  SessionState settings;                          // SET/RESET, to bring each server to them
  ClientStatements statements;                    // its prepared statements (transaction pooling)
  SchemaChanges schema_changes;                   // DDL it sent: the schema epoch (§5.3)
  SqlStatements sql_statements;                   // its SQL-level PREPAREs
  ExtendedSqlCommands sql_commands;               // PREPARE/DEALLOCATE in the extended protocol
  BatchStatement unnamed;                         // its last unnamed statement, for routing a later Bind
  // The protocol-level statement the unnamed one EXECUTEs (renamed to its server name): parsed
  // first on a server that lacks it.
  std::shared_ptr<const PreparedStatement> unnamed_runs;
  // The unnamed statement was parsed on a server given back since, or a lent one (Request::lent):
  // the next server that binds or describes it gets its Parse first.
  bool unnamed_elsewhere = false;
};

// The startup and authentication phases.
struct LoginState {
  explicit LoginState(net::Loop& loop) : timer(loop) {}
  net::Timer timer;  // login_timeout
  bool tls_done = false;
  std::unique_ptr<ClientAuth> auth;
  wire::CancelKey cancel_key;
  bool cancel_registered = false;
};

// The pools the client's servers come from.
struct PoolChoice {
  pool::Pool* login = nullptr;  // the default shard's pool (login, server parameters)
  std::vector<pool::Pool*> by_shard;
  bool session_pooling = false;  // pool.mode: session (a server for the whole session), or pinned
  // Transaction pooling: why the client was pinned (session_pooling is then set too).
  PinReason pinned = PinReason::None;
  // Pinned for a cursor WITH HOLD: one of one shard was declared (it lives on its server, where
  // the proxy does not follow it), so the pin stays until the client leaves.
  bool held_on_server = false;
  // pool.mode: session from the start. SQL-level PREPAREs of a pinned client stay the proxy's.
  bool session_from_start() const { return session_pooling && pinned == PinReason::None; }
};

// How the session runs: a console session has no servers; shutdown waits for the transaction.
struct SessionMode {
  bool admin = false;       // a console session: no servers, commands go to the host
  bool admin_busy = false;  // a console command is running; later input waits
  bool shutdown_pending = false;
};

// The timers of the request at the front of the input, made when first needed.
struct RequestTimers {
  std::unique_ptr<net::Timer> cutover;     // waiting_for_cutover: cutover.queue_timeout
  std::unique_ptr<net::Timer> fence_poll;  // retrying_after_fence: polls for a newer directory
};

// Per-request and per-transaction timings for SHOW CLIENTS, SHOW STATS and the latency histograms.
struct RequestClock {
  int64_t connected_at_us = stats::wall_clock_us();
  int64_t request_wall_us = 0;
  int64_t request_started_us = 0;  // monotonic; 0 = no request in flight
  int64_t xact_started_us = 0;
  stats::RouteLabel route_label = stats::RouteLabel::Default;
};

class Session : private net::Connection::Handler, private LegEngine::Runner {
 public:
  Session(SessionHost& host, std::unique_ptr<net::Connection> client);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint64_t id() const { return client_->id(); }
  // A CancelRequest for this session's key: cancels the query its server is running, if any;
  // `delivered` runs once the server has it (Pool::send_cancel), or at once.
  void cancel_running_query(std::function<void()> delivered = {});
  // SIGTERM: finish the transaction in progress, then leave; idle sessions leave now.
  void begin_shutdown();
  // Closes the client now (SIGINT, admin KILL).
  void terminate(const Status& why);
  // RESUME after PAUSE held this session (see SessionHost::hold_if_paused).
  void resume_after_pause();
  // A new directory arrived while a write waited for its bucket's cutover.
  void resume_after_directory_change();
  // A transaction (or a fan-out) holds servers right now: PAUSE waits for it.
  bool holds_server() const { return txn_.holds_server(); }
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
  // The pool's answer to the wait of a leg of legs_ (on_leg_server, on_no_server): a server, or
  // why there is none.
  void on_backend_ready(pool::Backend* backend);
  void on_backend_failed(const Status& why);
  // LegEngine::Runner: the session's answer policy on the legs of its engine, legs_
  // (session_server.cc): the active leg's answers relayed, a parked leg's swallowed.
  void on_leg_server(size_t leg, std::string prologue) override;
  bool on_leg_message(size_t leg, const LegEngine::Message& message) override;
  void on_leg_ready(size_t /*leg*/) override {}
  bool on_leg_refused(size_t /*leg*/, const Status& /*why*/) override { return true; }
  void on_leg_caught_up(size_t leg) override;
  void on_leg_violation(size_t leg, const Status& why) override;
  void on_leg_lost(size_t leg, const Status& why) override;
  void on_leg_drained(size_t leg) override;
  void on_no_server(const Status& why) override;
  bool takes_async_messages() const override { return true; }
  void cancel_runner(CancelJoin& join);

  // Login (session_login.cc)
  void read_startup();
  void handle_startup_packet(const wire::StartupPacket& packet);
  void negotiate_tls();
  void accept_startup(const wire::StartupPacket& packet);
  void read_auth();
  void after_authentication();
  void finish_login(const std::map<std::string, std::string>* reported = nullptr);
  bool startup_needs_probe() const;
  void probe_startup_settings(pool::Backend* backend);
  void end_startup_probe();
  std::string startup_key() const;
  void fail_login(const Status& why);
  // Admin console (session_admin.cc)
  void start_admin();
  void read_admin_messages();
  // Statistics (session_report.cc)
  void note_request_start();
  void count_request_done();
  void count_fanout(const std::vector<pool::Pool*>& pools, stats::RouteLabel label, int64_t started_us);

  // Client input (session_relay.cc)
  std::string_view client_input() const;
  void consume_client(size_t n);
  void read_client_messages();
  bool request_reads_client_input();
  bool runner_takes_client_input() const;
  // What read_client_messages does with the frame at the front of the input when no server is
  // attached: go on with it (a server is attached now), take the next one, or stop reading.
  enum class Next { Forward, Continue, Stop };
  Next start_without_server(const wire::Frame& frame);
  bool answer_without_server(const wire::Frame& frame);
  // Checked against the transition table (request_transitions.h): a change it lacks is logged.
  void set_request_state(RequestState state) {
    if (!request_transition_allowed(request_.state, state)) report_unexpected_transition(state);
    request_.state = state;
  }
  void report_unexpected_transition(RequestState to) const;
  // An event came in a state that does not expect it (a defect of the session): logged.
  void report_unexpected_event(const char* event) const;
  void expect_waiting_for_server(const char* event) const;
  // The front request needs another leg: it is routed again once the active leg owes nothing
  // (after_active_message) or more client input comes.
  Next wait_for_active_leg() {
    set_request_state(RequestState::WaitingForLeg);
    return Next::Stop;
  }
  bool server_lent() const { return request_.state == RequestState::LentUntilSync; }
  // Leg (session_leg.cc): the transaction's server.
  // A leg's server, held by its leg of legs_: null with no leg, or when the leg lost it in a run.
  pool::Backend* server_of(const LegAnswers& leg) const {
    return leg.attached() ? legs_.backend(leg.slot) : nullptr;
  }
  // The active leg's server, where the session relays to it (attached, in no run). Inline: it
  // runs for every message the client sends.
  pool::Backend& active_server() const { return *legs_.backend(txn_.leg.slot); }
  // The directory shard of a leg's server: its engine leg's target (-1 with no leg).
  int shard_of(const LegAnswers& leg) const { return leg.attached() ? legs_.target(leg.slot).index : -1; }
  bool acquire_backend(int shard);
  void attach(pool::Backend* backend);
  // At a transaction boundary the leg's server goes back to its pool, or stays (session pooling):
  // release_at_boundary. Inline: it runs after every message of the active leg.
  void maybe_release_backend() {
    if (txn_.leg.attached() && txn_.leg.at_boundary(request_.batch_open)) release_at_boundary();
  }
  void release_at_boundary();
  void keep_pinned_leg();
  // `reset_query`: session pooling, the client left: the pool resets the server and reuses it.
  void release_backend(bool clean, const std::string* reset_query = nullptr);
  // Legs on several shards (session_legs.cc)
  std::shared_ptr<const parser::QueryFacts> facts_of_query(const wire::Frame& query);
  static int statement_shard(const parser::QueryFacts& facts, const router::Route& route);
  void note_for_every_leg(const parser::QueryFacts& facts);
  Status check_write(const parser::QueryFacts& facts, const router::Route& route);
  Next route_across_legs(const wire::Frame& query);
  Next switch_to_leg(int shard);
  void catch_up_parked_leg();
  std::string joining_prologue();
  // What a server must be in before this client's statements run there (server_state.h).
  ServerState server_state() const {
    return {profile_.settings.signature(), id(),
            servers_hold_sql_prepared() ? &profile_.sql_statements : nullptr};
  }
  void restore_parked_leg();
  // `consumed`: the Query's size; `batch`: the extended batch that holds the COMMIT.
  Next end_across_legs(bool commit, size_t consumed, const ExtendedBatch* batch = nullptr);
  Next finish_ending(const wire::Frame& query);
  std::vector<std::string> every_leg_sql(const parser::StatementFacts& statement) const;
  void send_to_every_leg(const parser::StatementFacts& statement);
  void send_to_parked(std::string_view sql);
  void send_unseen(LegAnswers& leg, std::string_view messages, const std::vector<Owed>& owed);
  bool on_parked_frame(LegAnswers& leg, const wire::Frame& frame);
  void fail_parked_leg(const LegAnswers& leg);
  void on_parked_message(LegAnswers& leg, const wire::Frame& frame);
  void release_idle_parked();
  void end_parked_like_active(bool committed);
  void on_active_status();
  Next route_batch_across_legs();
  Next finish_batch_ending();
  Next close_batch_for_another_leg();
  // A batch outside a transaction block reaching several shards (session_legs_pipeline.cc)
  Next spread_batch_to_another_leg();
  bool may_spread_batch() const;
  void begin_spread_batch();
  Next end_spread_batch(const wire::Frame& sync);
  void commit_spread_batch();
  void note_session_parse(std::string_view name, std::string_view query, const std::vector<uint32_t>& types);
  void ensure_session_statement(std::string_view name);
  // Session pooling: what drops session state reaches every server of the session (session_legs_reset.cc)
  void reset_other_legs(const parser::StatementFacts& statement);
  void note_settings_of_query(const parser::QueryFacts& facts);
  void drop_session_statements(const std::optional<std::string>& name);
  void close_session_statement(std::string_view name);
  int shard_holding_deallocated(const parser::StatementFacts& statement) const;
  void release_parked_legs();
  // Two-phase commit (session_two_phase.cc)
  CrossShardWrites cross_shard_writes() const;
  Status refuse_commit_among_statements(const parser::QueryFacts& facts) const;
  Next start_two_phase(const CommitPlan& plan, size_t consumed, std::string answered, bool extended);
  Next start_two_phase(const CommitPlan& plan, const ExtendedBatch& batch);
  std::vector<LegEngine::Target> commit_targets(const CommitPlan& plan, std::vector<size_t>* written);
  CommitLegs::Calls commit_calls();
  void after_commit_event();
  bool end_session_by_commit_leg(size_t leg, std::string_view frame);
  void terminate_by_commit_leg(size_t leg);
  Next lost_written_shard(int shard);
  void take_back_commit_legs(TwoPhaseState& state);
  void after_two_phase_event();
  // Client -> server (session_relay.cc, session_extended.cc)
  Status forward(const wire::Frame& frame);
  Status forward_query(const wire::Frame& frame);
  void answer_refused_front(const FrontQuery& front);
  void lend_until_sync(const wire::Frame& flush);
  bool refuse_in_query(const parser::QueryFacts& facts);
  Status refusal_in_query(const parser::StatementFacts& statement);
  bool prepare_transaction_as_rollback(FrontQuery& front);
  Next prepare_transaction_batch_as_query();
  // SQL-level PREPARE / EXECUTE / DEALLOCATE (session_sql_prepared.cc)
  bool expands_sql_execute() const;
  bool tracks_sql_prepared() const;
  bool servers_hold_sql_prepared() const;
  const FrontQuery& front_query(const wire::Frame& frame, std::string_view sql);
  // The route of the front Query's `facts`, in Request::front (so forwarding finds it kept): the
  // one kept in this pass, else routed in place there. A Route is a large object, never moved on
  // this path; a caller that does not forward the Query as routed takes it out (take_front_route).
  router::Route& front_route(const parser::QueryFacts& facts);
  router::Route take_front_route();
  void keep_front_route(router::Route&& route) { request_.front.route.emplace(std::move(route)); }
  // The route kept for `facts` in this pass, or null.
  const router::Route* kept_front_route(const parser::QueryFacts& facts) const;
  // A Query on the attached server: may it run there with `route` (`routed`: it picked that server)?
  Status check_query_route(const parser::QueryFacts& facts, const router::Route& route, bool routed);
  void forget_sql_prepares(const parser::QueryFacts& facts);
  void note_sql_prepared(const parser::StatementFacts& statement, std::string_view source = {});
  // pg_prepared_statements answered from the client's statements (session_prepared_view.cc)
  bool answers_prepared_view(const parser::QueryFacts& facts) const;
  std::optional<parser::ExpandedSql> prepared_view_rewrite(std::string_view sql,
                                                           const parser::QueryFacts& facts) const;
  void rewrite_prepared_view(std::string_view sql, FrontQuery& front) const;
  std::shared_ptr<const parser::QueryFacts> read_view_in_expanded(
      std::string& sql, std::vector<parser::ExpandedSql::Piece>& pieces,
      const parser::QueryFacts& facts) const;
  void describe_unresolved_statements(bool sync);
  bool keeps_view_reader(const PreparedStatement& statement) const;
  std::shared_ptr<const RewrittenText> parse_view_reader(const PreparedStatement& statement);
  void parse_view_reader_for(std::string_view client_name, const PreparedStatement& statement);
  void expect_view_reader_parse(std::shared_ptr<const RewrittenText> rewrite);
  void bind_view_reader(const wire::BindMessage& bind, const PreparedStatement& statement);
  void describe_view_reader(const PreparedStatement& statement);
  void note_parameter_description(std::string_view body);
  void note_prepare_source(const std::shared_ptr<const parser::QueryFacts>& facts, std::string_view sql);
  std::string take_prepare_source(const std::shared_ptr<const parser::QueryFacts>& facts);
  bool answer_sql_deallocate(const parser::StatementFacts& statement, size_t frame_size);
  bool proxy_answers_deallocate(const std::string& name) const;
  std::optional<parser::SqlExecute> client_execute(const parser::StatementFacts& statement) const;
  Result<parser::ExpandedSql> expand_client_execute(std::string_view sql,
                                                    const parser::StatementFacts& statement,
                                                    const parser::SqlExecute& execute,
                                                    std::string* detail) const;
  Status refuse_duplicate_prepare(const parser::StatementFacts& statement) const;
  // EXECUTE of a protocol-level statement the server holds as the proxy's (session_protocol_execute.cc)
  std::shared_ptr<const PreparedStatement> protocol_execute(const parser::StatementFacts& statement,
                                                            parser::SqlExecute* execute) const;
  Status rename_protocol_execute(std::string_view sql, const parser::StatementFacts& statement,
                                 FrontQuery& front);
  void ensure_prepared_before_query(const FrontQuery& front);
  std::shared_ptr<const RewrittenText> renamed_parse(std::string_view query, Status* refused,
                                                     std::shared_ptr<const PreparedStatement>* runs);
  // An ErrorResponse of a Query whose EXECUTE the proxy rewrote, its position moved back into the
  // client's text (or dropped); empty when the error goes on as the server sent it.
  std::string client_error_position(const wire::Frame& error, const RewrittenText* parse);
  // The client's own two-phase commit (session_client_two_phase.cc): what is refused, and
  // COMMIT/ROLLBACK PREPARED tried shard after shard.
  Status refuse_two_phase(const parser::StatementFacts& statement) const;
  bool ran_on_several_shards() const;

  static Status refuse_protected_setting(const parser::StatementFacts& statement);
  Status refuse_unpoolable(const parser::StatementFacts& statement, bool merged_cursor = false);
  bool unpin_if_no_held_cursor();
  // SQL-level commands in the extended protocol (session_extended_sql.cc)
  std::optional<parser::ExpandedSql> expanded_execute(std::string_view query, Status* refused) const;
  Status expand_batch_execute(ExtendedBatch& batch);
  bool parse_sql_command(const wire::ParseMessage& parse, const parser::QueryFacts* facts);
  bool bind_sql_command(const wire::BindMessage& bind);
  bool describe_sql_command(const wire::TargetMessage& target, bool describe);
  bool execute_sql_command(const wire::Frame& execute);
  void forget_deallocated(const std::string& name);
  void after_sql_command_sync();
  void on_sql_command_complete(std::string_view tag);
  void unpin();
  bool pin_undone_by_failure(const parser::QueryFacts& facts) const;
  void unpin_after_failure();
  // session_settings_extended.cc: SET, set_config, savepoints run by Execute count like a Query's.
  void note_bound_settings(std::string_view statement);
  void expect_execute();
  void on_execute_settings(const parser::QueryFacts& facts);
  Status forward_parse(const wire::Frame& frame);
  // forward_parse's parts: the refusals of what the Parse's statement does (true: refused and
  // answered); a Parse sent under the client's own name (session pooling, the unnamed statement);
  // a named one in transaction pooling, mapped onto a shared server statement (§5.3).
  bool refuse_parse(const parser::QueryFacts& facts);
  void forward_parse_as_sent(const wire::Frame& frame, const wire::ParseMessage& parse,
                             std::string_view query, const std::shared_ptr<const RewrittenText>& rewrite);
  void forward_pooled_parse(const wire::ParseMessage& parse, std::string_view query,
                            std::shared_ptr<const PreparedStatement> runs,
                            const std::shared_ptr<const RewrittenText>& rewrite);
  Status forward_bind(const wire::Frame& frame);
  Status forward_describe_or_close(const wire::Frame& frame);
  void ensure_prepared(const PreparedStatement& statement, bool relay_errors = true);
  void ensure_unnamed_parsed();
  // Records what the server owes for a message written to it. Injected messages pass
  // relay=false (their answers are swallowed; their errors reach the client if relay_errors).
  void expect(Owed owed, bool relay = true, uint64_t statement = 0, bool relay_errors = true);
  // An answer the proxy gives itself, in its exact place among the server's answers.
  void answer_in_place(std::string_view bytes);
  void answer_with_error(const Status& error);
  // `detail`: the error's DETAIL, if any.
  void reject_pending_request(const Status& why, std::string_view detail = {});
  // Server -> client (session_server.cc)
  void after_active_message();
  bool stop_reading_leg(size_t leg);
  void drop_violating_server(const Status& why);
  void after_server_frame(RequestState before);
  enum class AfterMessage { Continue, Dropped, Retry };
  AfterMessage handle_server_message(const wire::Frame& frame);
  bool ends_session(const wire::Frame& frame, pool::Backend& backend);
  bool on_server_error(const wire::Frame& frame, bool relay, bool completed);
  bool on_ready_for_query(const wire::Frame& frame, bool relay, bool answered);
  void expect_parse(std::string_view client_name, uint64_t statement, bool answered,
                    std::shared_ptr<const RewrittenText> rewritten = nullptr);
  void forget_failed_parses();
  void retire_if_stale(const wire::Frame& error, const ResponseTracker::Outcome& outcome);
  void after_server_message(char type, const ResponseTracker::Outcome& outcome);
  void relay_parameter_status(std::string_view body);
  void hold_until_restored(const wire::Frame& frame, bool relay, const std::string& due);
  void on_query_finished(bool failed);

  // Routing (session_route.cc, session_extended_route.cc)
  enum class Start { Forward, Answered, Wait };
  Start start_request(const wire::Frame& frame, int* shard);
  Start start_query(const wire::Frame& frame, int* shard);
  Start start_extended(int* shard);
  Start start_bound_batch(const ExtendedBatch& batch, int* shard);
  Start answer_transaction_control(TransactionControl::Answer answer, size_t batch_size,
                                   const std::string& extended_answer);
  Start run_on(const Placement& placement, int* shard);
  bool needs_move(const wire::Frame& query);
  void move_transaction();
  void remember_parsed(const ParsedStatements& parsed);
  Start start_fanout(std::string message, size_t consumed, const router::Route& route,
                     bool hide_parse_complete);
  Start run_fanout(std::vector<Fanout::Target> targets, std::string message, size_t consumed, bool scatter,
                   bool hide_parse_complete, bool first_to_succeed = false);
  // DROP INDEX with several shards (session_drop_index.cc): nullopt when not one.
  std::optional<Result<DropIndex>> drop_index_on_every_shard(const parser::StatementFacts& statement) const;
  Start start_drop_index(const wire::Frame& frame, const DropIndex& drop);
  // COMMIT/ROLLBACK PREPARED with several shards (session_client_two_phase.cc).
  bool finishes_prepared_on_shards(const parser::StatementFacts& statement) const;
  Start start_finish_prepared(const parser::StatementFacts& statement, std::string message, size_t consumed,
                              bool hide_parse_complete);
  Start start_extended_finish_prepared(const ExtendedBatch& bound);
  Next finish_prepared_beside_leg(const wire::Frame& query);
  Next finish_prepared_batch_beside_leg(const ExtendedBatch& batch);
  bool fanout_targets(const router::Route& route, std::vector<Fanout::Target>* targets, Status* error);
  bool every_shard_targets(std::vector<Fanout::Target>* targets);
  // A writing run's targets on the transaction's legs (session_run_legs.cc): one per shard of
  // `shards` (every shard of the directory when null), in that order, and their pools.
  Status write_targets(const std::vector<int>* shards, bool in_transaction,
                       std::vector<LegEngine::Target>* targets, std::vector<pool::Pool*>* pools);
  // COPY FROM STDIN or a reference write on the transaction's legs (session_reference_write.cc)
  bool writes_in_transaction() const { return txn_.shards.open() || txn_.control.deferred(); }
  // A COPY FROM into a sharded table (split by key) or a reference table (whole to every shard).
  static bool copies_in(const router::Route& route, const parser::StatementFacts* only) {
    return route.copy_in ||
           (route.reference_write && only != nullptr && only->kind == parser::StatementKind::Copy);
  }
  // A run on the transaction's legs (session_run_legs.cc): its targets, its end in place (the
  // verdict, the settling of a failed run), and what it is made of.
  std::vector<int> every_shard() const;
  Status transaction_targets(const std::vector<int>& shards, bool in_transaction,
                             std::vector<LegEngine::Target>* targets);
  LegAnswers* transaction_leg(int shard);
  // The transaction's legs' answers by their leg of legs_ (`slot`).
  LegAnswers* parked_leg(size_t slot);
  void drop_leg(size_t slot);
  // Some LegAnswers of the transaction name leg `slot` of legs_. A leg legs_ gives the
  // transaction is named by none: they never outlive their leg (checked where a leg joins).
  bool leg_recorded(size_t slot) const;
  Status end_run_on_legs(const std::vector<LegEngine::Handed>& handed, const Status& error,
                         bool in_transaction);
  LegEngine::HandBack hand_back_to_legs(bool in_transaction);  // end_run_on_legs
  void end_borrowed_leg(const LegEngine::Handed& server, bool failed, bool in_transaction);
  void settle_run_leg(LegAnswers& leg, const LegEngine::Handed& server, bool in_transaction);
  struct RunEnd {
    Status verdict = Status::ok();  // why a successful run is refused after all
    bool failed = false;            // the run failed, or was refused
    bool deferred = false;          // inside a transaction whose BEGIN was deferred
  };
  RunEnd begin_run_end(const std::vector<LegEngine::Handed>& handed, const Status& error,
                       bool in_transaction);
  Status finish_run_end(const RunEnd& end, bool in_transaction, bool lost);
  void note_run_statement(LegAnswers& leg, const LegEngine::Handed& server, bool in_transaction);
  void post_run_end(bool failed, bool lost);
  Status refuse_writes_in_transaction(const std::vector<LegEngine::Handed>& handed) const;
  void fail_legs_outside_run();
  void read_settling_legs();
  // A run's CancelRequest reached the server (a borrowed leg): it is never pooled clean, as a
  // late cancel would hit another client's query.
  bool cancelled_by_run(const pool::Backend& backend) const {
    const size_t index = legs_.leg_of(backend);
    return index < legs_.size() && legs_.cancelled(index);
  }
  // The leg's server is one a run reads now: never at a boundary, never pooled.
  bool in_run(const LegAnswers& leg) const { return leg.attached() && legs_.in_run(leg.slot); }
  void write_session_ready(bool in_transaction);
  Next write_on_every_shard(const wire::Frame& query, const parser::StatementFacts& only,
                            const router::Route& route);
  Next write_batch_on_every_shard(const ExtendedBatch& batch, const router::Route& route);
  Next write_in_open_batch(const wire::Frame& query);
  // SQL cursors over several shards (session_merged_cursor.cc).
  Next merged_cursor_statement(const wire::Frame& frame);
  Next declare_merged_cursor(const wire::Frame& frame, const CursorStatement& statement);
  void close_merged_cursors(const CursorStatement& statement, std::string head);
  Next run_cursor_statement(const CursorStatement& statement, size_t consumed, const bool* described);
  void forget_cursors_at_end(std::string_view sql);
  Next refuse_cursor_statement(size_t consumed, const Status& why);
  Next declare_merged_cursor_batch(const std::vector<wire::Frame>& frames, size_t consumed,
                                   const CursorStatement& statement);
  void continue_cursor_fetch();
  Next merged_cursor_batch(const wire::Frame& frame);
  Status declare_refusal(const router::Route& route, const CursorStatement& statement) const;
  void run_declare(const router::Route& route, const CursorStatement& statement,
                   const MergedCursor::Parameters* parameters, std::string answer);
  void start_cursor_round(const std::vector<int>& shards, const std::vector<std::string>& sql,
                          CursorRound::Take take, std::function<void(const Status&)> after);
  void start_cursor_round(const std::vector<int>& shards, std::vector<std::string> messages, int ready,
                          CursorRound::Take take, std::function<void(const Status&)> after);
  void fail_cursor(const Status& why);
  Status held_cursor_commit_refusal(std::string_view sql) const;
  Status bound_commit_refusal(const wire::Frame& bind_frame) const;
  Status pin_for_held_cursor(const CursorStatement& statement, std::string_view declare_sql);
  void close_held_halves(const MergedCursor& cursor);
  void end_cursor_request();
  Status every_shard_write_refusal(const parser::StatementFacts& only, const router::Route& route);
  // COPY FROM STDIN into a sharded table (session_copy_in.cc)
  Start start_copy_in(const wire::Frame& frame, const parser::StatementFacts& statement,
                      const router::Route& route);
  void feed_copy_in();
  void end_copy_in();
  // A multi-row INSERT split by shard (session_split_insert.cc), in or outside a transaction block;
  // in the extended protocol with the batch's Parse types, Bind and whether it described the portal.
  Status split_insert_refusal_now(const parser::StatementFacts* only, const router::Route& route) const;
  Start start_split_insert(const parser::StatementFacts* only, const router::Route& route, size_t consumed,
                           const SplitBatch* batch = nullptr);
  Start start_extended_split(const ExtendedBatch& bound, const router::Route& route);
  // An extended batch whose Binds go to several shards before its Sync (session_batch_split.cc);
  // nothing when it is not one.
  std::optional<Start> start_batch_across_shards(const ExtendedBatch& bound);
  Start run_split_insert(std::vector<SplitInsert::Part> parts, SplitInsert::Setup setup,
                         std::vector<pool::Pool*> pools, size_t consumed);
  // A write of a reference table on every shard (session_reference_write.cc)
  // `message`: the client's Query, or the extended batch rebuilt for every shard (then the
  // shards' ParseComplete is hidden unless the client sent the Parse); `consumed`: its size.
  Start start_reference_write(std::string message, size_t consumed, const parser::StatementFacts* only,
                              const router::Route& route, bool hide_parse_complete = false);
  Result<std::pair<std::string, size_t>> extended_reference_write(const ExtendedBatch& bound,
                                                                  const router::Route& route,
                                                                  std::string_view sql,
                                                                  const ShardParams* replaced = nullptr);
  Start start_extended_reference_write(const ExtendedBatch& bound, const router::Route& route);
  // A write on several shards, each running its own SQL: INSERT ... SELECT, or an UPDATE/DELETE
  // whose key lists span shards (session_scatter_write.cc)
  Status scatter_write_refusal(const router::Route& route) const;
  Start start_scatter_write(const wire::Frame& frame, const router::Route& route);
  Start start_extended_scatter_write(const ExtendedBatch& bound, const router::Route& route);
  Start run_scatter_write(std::vector<std::string> messages, size_t consumed, const router::Route& route,
                          bool hide_parse_complete, KeyMoveClient key_move_client = {});
  KeyMoveClient key_move_client(const ExtendedBatch& bound) const;
  Next continue_key_move_portal(const wire::Frame& frame);
  Next continue_held_portal(const wire::Frame& frame);
  Start start_write_runner(size_t consumed, std::vector<LegEngine::Target> targets,
                           std::vector<pool::Pool*> pools, ReferenceWrite::Setup setup,
                           stats::RouteLabel label, bool in_transaction);
  // A runner's two-phase commit: the session's gid, catalog decision and counters (session_two_phase.cc)
  TwoPhaseHooks two_phase_hooks();
  Start start_merge(std::vector<Fanout::Target> targets, size_t consumed, const router::Route& route,
                    MergeFanout::Extended* extended = nullptr);
  // A scatter read on the session's servers, in a transaction block or session pooling
  // (session_scatter_read.cc).
  static bool scatter_read(const router::Route& route);
  bool reads_on_session_servers() const;
  Status held_read_refusal(const router::Route& route) const;
  Next read_on_every_shard(const wire::Frame& query, const router::Route& route);
  Next read_batch_on_every_shard(const ExtendedBatch& batch, const router::Route& route);
  Next refuse_scatter_portal_execute();
  void keep_scatter_portal();
  Next continue_scatter_portal(const wire::Frame& frame);
  Status hold_merge_servers(MergeFanout& merge, const router::Route& route);
  merge::DateReading date_reading() const;
  Status hold_copy_servers(Fanout& fanout);
  Start start_extended_scatter(const ExtendedBatch& batch, const router::Route& route);
  Start start_extended_merge(const ExtendedBatch& bound, const router::Route& route, size_t consumed,
                             bool describe_portal, uint32_t max_rows);
  Status check_bind_route(const wire::BindMessage& bind, bool pinned);
  Status check_pinned(const parser::QueryFacts& facts, const router::Route& route) const;
  void inject_abort(const Status& error, bool extended);
  void refuse_request(const Status& why, std::string_view detail = {});
  int default_shard() const;
  // The host's read lease; when it lapsed, asks the watcher to confirm the directory soon.
  bool read_lease_valid();
  pool::Pool* pool_for_shard(int shard, Status* error);
  // Cutover queue (session_cutover.cc)
  Start wait_for_cutover(const router::Route& route);
  void end_cutover_wait();
  void on_cutover_timeout();
  // Fence errors (session_retry.cc)
  bool on_fence_error(std::string_view body);
  void retry_after_fence();
  void on_fence_polled();

  // Client output for server answers and proxy answers in the stream (see FenceRetry::to_client).
  void to_client(std::string_view bytes) {
    fence_.to_client(bytes, [this](std::string_view out) { client_->write(out); });
  }

  void send_fatal(const Status& why);
  void close(const char* reason);

  SessionHost& host_;
  std::unique_ptr<net::Connection> client_;
  Phase phase_ = Phase::Startup;
  wire::Limits limits_;
  LoginState login_;
  ClientProfile profile_;
  PoolChoice pools_;
  // The transaction's servers as legs of one engine, read by its one loop; the session is its
  // runner. A leg of it waits for the server a request needs (WaitingForServer; none: PAUSE, or a
  // move). Declared before txn_: a runner's engine in txn_ goes first.
  LegEngine legs_;
  Transaction txn_;
  // A move's RETURNING left at its Executes' row limits in the transaction (continue_key_move_portal).
  std::unique_ptr<KeyMoveRest> key_move_rest_;
  Request request_;
  FenceRetry fence_;
  CutoverWait cutover_;
  RequestTimers timers_;
  SessionMode mode_;
  RequestClock clock_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // lets posted tasks detect our end
};

}  // namespace sw::session
