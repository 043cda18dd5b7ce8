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
#include "session/client_auth.h"
#include "session/prepared_statements.h"
#include "session/response_tracker.h"
#include "session/session_state.h"
#include "wire/frame_reader.h"
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
  virtual std::shared_ptr<net::TlsContext> server_tls() = 0;
  virtual StatementRegistry& statements() = 0;
  virtual wire::CancelKey register_cancel(Session* session) = 0;
  virtual void unregister_cancel(wire::CancelKey key) = 0;
  // A CancelRequest arrived on a new connection: find the session it names (on any worker).
  virtual void forward_cancel(wire::CancelKey key) = 0;
  virtual bool shutting_down() = 0;
  // The session is finished; the host deletes it outside the session's own callbacks.
  virtual void session_closed(Session* session) = 0;
};

class Session : private net::Connection::Handler,
                private pool::Pool::Waiter,
                private pool::BackendUser {
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

  // Relay (session_relay.cc)
  void read_client_messages();
  bool answer_without_server(const wire::Frame& frame);
  bool acquire_backend();
  void attach(pool::Backend* backend);
  Status forward(const wire::Frame& frame);
  Status forward_query(const wire::Frame& frame);
  Status forward_parse(const wire::Frame& frame);
  Status forward_bind(const wire::Frame& frame);
  Status forward_describe_or_close(const wire::Frame& frame);
  void ensure_prepared(const PreparedStatement& statement);
  void expect(Owed owed, bool relay = true, uint64_t statement = 0);
  void answer_with_error(const Status& error);
  void reject_pending_request(const Status& why);
  void read_server_messages();
  bool handle_server_message(const wire::Frame& frame);
  void relay_parameter_status(std::string_view body, bool relay);
  void on_query_finished(bool failed);
  void maybe_release_backend();
  void release_backend(bool clean);

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

  pool::Pool* pool_ = nullptr;
  pool::Backend* backend_ = nullptr;
  bool waiting_for_backend_ = false;
  bool session_pooling_ = false;
  ResponseTracker tracker_;
  char transaction_status_ = 'I';
  bool extended_open_ = false;      // extended-protocol messages forwarded since the last Sync
  bool skip_until_sync_ = false;    // the proxy answered an error; drop messages up to Sync
  bool query_failed_ = false;       // the Query in progress got an ErrorResponse
  std::deque<std::shared_ptr<const parser::QueryFacts>> queries_in_flight_;
  SessionState state_;
  ClientStatements statements_;
  bool shutdown_pending_ = false;
};

}  // namespace sw::session
