// One server connection to a shard: connects, negotiates TLS if the DSN asks for it, logs in
// (trust, cleartext, md5, SCRAM-SHA-256), then serves one user (a client session) at a time.
// The Pool owns every Backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "common/status.h"
#include "net/connection.h"
#include "wire/startup.h"

namespace sw::auth {
class ScramClient;
}

namespace sw::pool {

class Pool;
class Backend;

// Where and as whom to log in. `key()` identifies a pool.
struct BackendTarget {
  std::string shard;
  std::string host;
  int port = 5432;
  std::string dbname;
  std::string user;
  std::string password;
  std::string sslmode = "disable";
  std::string sslrootcert;
  std::string key() const;
};

// The session a Backend is attached to.
class BackendUser {
 public:
  virtual ~BackendUser() = default;
  virtual void on_backend_readable(Backend& backend) = 0;
  // The server connection failed; the Backend is closed and will be deleted by its Pool.
  virtual void on_backend_lost(Backend& backend, const Status& why) = 0;
  virtual void on_backend_drained(Backend&) {}
};

class Backend : private net::Connection::Handler {
 public:
  enum class State { Connecting, Negotiating, LoggingIn, Idle, Active, Closed };

  Backend(Pool& pool, uint64_t id, uint64_t now_ms);
  ~Backend() override;

  void start();
  State state() const { return state_; }
  uint64_t id() const { return id_; }
  Pool& pool() { return pool_; }
  const BackendTarget& target() const;
  net::Connection& connection() { return *connection_; }
  wire::CancelKey server_key() const { return server_key_; }
  // ParameterStatus values the server has reported.
  const std::map<std::string, std::string>& parameters() const { return parameters_; }
  void set_parameter(std::string_view name, std::string_view value);

  // `slot`: the user's own index for this server (a LegEngine's leg), given back by user_slot().
  void attach(BackendUser* user, size_t slot = 0);
  void detach();
  BackendUser* user() const { return user_; }
  size_t user_slot() const { return user_slot_; }
  // Sends Terminate. A logged-in server is then read until it hangs up (its Pool keeps the
  // server's pool.size slot until then: PostgreSQL still counts the backend), other connections
  // close once the Terminate is written.
  void close();
  // close() sent Terminate to a logged-in server that has not hung up yet.
  bool awaiting_hangup() const { return awaiting_hangup_; }

  // Bookkeeping for the session layer (the pool only clears them after a server reset).
  std::string applied_state;              // session SET statements this server has run
  uint64_t sequences_of = 0;              // client whose sequence values it may hold; 0: none
  std::unordered_set<uint64_t> prepared;  // ids of statements prepared on this server
  // A client's SQL-level PREPAREs this server holds under the client's names: name -> version
  // (session::SqlStatements). Transaction pooling with one shard only.
  std::unordered_map<std::string, uint64_t> sql_prepared;
  // A client loaded a library into the server process (LOAD): no reset unloads it, so the pool
  // closes the server when it is released instead of reusing it (docs/architecture.md §5.7).
  bool library_loaded = false;
  uint64_t created_ms;
  uint64_t idle_since_ms = 0;
  int64_t connected_at_us = 0;  // wall clock, for the admin console
  int64_t attached_at_us = 0;   // wall clock of the last attach

 private:
  friend class Pool;
  void on_readable(net::Connection& connection) override;
  void on_closed(net::Connection& connection, const Status& why) override;
  void on_connected(net::Connection& connection, const Status& status) override;
  void on_drained(net::Connection& connection) override;
  void send_startup();
  void read_ssl_answer();
  void read_login();
  Status handle_login_message(char type, std::string_view body);
  Status handle_auth(std::string_view body);
  void fail_login(const Status& why);

  Pool& pool_;
  uint64_t id_;
  State state_ = State::Connecting;
  bool awaiting_hangup_ = false;
  std::unique_ptr<net::Connection> connection_;
  BackendUser* user_ = nullptr;
  size_t user_slot_ = 0;
  wire::CancelKey server_key_;
  std::map<std::string, std::string> parameters_;
  std::unique_ptr<auth::ScramClient> scram_;
};

}  // namespace sw::pool
