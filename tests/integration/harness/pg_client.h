// libpq helpers bounded by deadlines (a proxy that hangs fails the test instead of hanging it),
// and a raw TCP socket with protocol builders/parsers for byte-level tests.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace it {

using namespace std::chrono_literals;

// The result format a client asks for in Bind (0 text, 1 binary, as libpq numbers them).
enum class ResultFormat { Text = 0, Binary = 1 };

// A finished query: status, each value as the bytes the server sent (text, or binary when asked
// for), and the error fields if it failed.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* res);
  ExecStatusType status() const { return status_; }
  bool ok() const { return status_ == PGRES_COMMAND_OK || status_ == PGRES_TUPLES_OK; }
  bool timed_out() const { return timed_out_; }
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& error() const { return error_; }  // primary message ('M'), or libpq's text
  const std::string& command_tag() const { return tag_; }
  int rows() const { return static_cast<int>(rows_.size()); }
  int cols() const { return static_cast<int>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& value(int row = 0, int col = 0) const;
  bool is_null(int row, int col) const { return nulls_.at(row).at(col); }
  const std::vector<std::vector<std::string>>& data() const { return rows_; }
  std::string describe() const;  // for failure messages

  static PgResult timeout(const std::string& what);
  static PgResult failure(const std::string& message);

 private:
  ExecStatusType status_ = PGRES_FATAL_ERROR;
  bool timed_out_ = false;
  std::string sqlstate_, error_, tag_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::vector<bool>> nulls_;
};

// An open libpq connection. Every wait is bounded.
class PgConn {
 public:
  // Collects NoticeResponses into notices() (connect() installs it).
  void install_notice_receiver();

 public:
  PgConn() = default;
  explicit PgConn(PGconn* conn) : conn_(conn) {}
  ~PgConn() { reset(); }
  PgConn(PgConn&& o) noexcept : conn_(o.conn_), notices_(std::move(o.notices_)) { o.conn_ = nullptr; }
  PgConn& operator=(PgConn&& o) noexcept;
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  PGconn* get() const { return conn_; }
  explicit operator bool() const { return conn_ && PQstatus(conn_) == CONNECTION_OK; }
  void reset();  // PQfinish

  // Simple-protocol query; returns the last result. Times out -> PgResult::timed_out().
  PgResult exec(const std::string& sql, std::chrono::milliseconds timeout = 30s);
  // Extended protocol (PQsendQueryParams) with text parameters.
  PgResult exec_params(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                       std::chrono::milliseconds timeout = 30s);
  // Extended protocol without parameters, every result column in `format` (Bind's result format).
  PgResult exec_extended(const std::string& sql, ResultFormat format,
                         std::chrono::milliseconds timeout = 30s);
  PgResult prepare(const std::string& name, const std::string& sql, std::chrono::milliseconds timeout = 30s);
  PgResult exec_prepared(const std::string& name, const std::vector<std::optional<std::string>>& params,
                         std::chrono::milliseconds timeout = 30s);
  // The single value of a query that must succeed (throws with details otherwise).
  std::string value(const std::string& sql, std::chrono::milliseconds timeout = 30s);

  // Sends a query without waiting (PQsendQuery); collect with wait_result().
  bool send(const std::string& sql);
  PgResult wait_result(std::chrono::milliseconds timeout = 30s);

  // Waits up to `timeout` for a NOTIFY; returns {channel, payload}.
  std::optional<std::pair<std::string, std::string>> wait_notify(std::chrono::milliseconds timeout);

  // Sends a CancelRequest for this connection's running query (PQcancel); false with libpq's
  // reason in `error` when it could not be sent.
  bool cancel(std::string* error) const;

  std::string error_message() const { return conn_ ? PQerrorMessage(conn_) : "no connection"; }
  int backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }
  std::string parameter(const char* name) const;
  const std::vector<std::string>& notices() const { return *notices_; }

 private:
  PGconn* conn_ = nullptr;
  std::shared_ptr<std::vector<std::string>> notices_ = std::make_shared<std::vector<std::string>>();
};

struct ConnectResult {
  PgConn conn;  // valid when ok
  bool ok = false;
  bool timed_out = false;
  std::string error;     // libpq's message, verbose (includes "FATAL:  28P01: ...")
  std::string sqlstate;  // parsed from the verbose message when present
};

// Connects with PQconnectStart/PQconnectPoll, bounded by `timeout`; verbose error text.
ConnectResult connect(const std::string& conninfo, std::chrono::milliseconds timeout = 15s);
// Same, but throws with the error when it fails.
PgConn connect_or_throw(const std::string& conninfo, std::chrono::milliseconds timeout = 15s);

// ---- raw sockets ------------------------------------------------------------------------------

class RawSocket {
 public:
  // Connects to 127.0.0.1:port (throws on failure).
  explicit RawSocket(int port);
  // Wraps an existing fd without owning it (e.g. PQsocket of a libpq connection).
  static RawSocket borrow(int fd);
  ~RawSocket();
  RawSocket(RawSocket&& o) noexcept : fd_(o.fd_), owned_(o.owned_), closed_(o.closed_) { o.fd_ = -1; }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  int fd() const { return fd_; }
  bool send_all(std::string_view bytes);  // one send() loop; false on error (peer gone)
  // Reads what arrives within `timeout` (returns as soon as something is read).
  std::string read_some(std::chrono::milliseconds timeout);
  // Reads exactly n bytes unless timeout/close.
  std::string read_exact(size_t n, std::chrono::milliseconds timeout);
  // Reads until the peer closes (EOF or reset) or timeout. `closed()` tells which.
  std::string read_until_closed(std::chrono::milliseconds timeout);
  bool closed() const { return closed_; }
  void close_now();
  void shutdown_write();  // half-close: the peer reads EOF

 private:
  RawSocket() = default;
  int fd_ = -1;
  bool owned_ = true;
  bool closed_ = false;
};

namespace wire {

std::string be32(uint32_t v);
std::string be16(uint16_t v);
uint32_t get_be32(std::string_view s, size_t at);

std::string startup_message(const std::vector<std::pair<std::string, std::string>>& params,
                            uint32_t version = 196608);
std::string ssl_request();     // 80877103
std::string gssenc_request();  // 80877104
std::string cancel_request(uint32_t pid, uint32_t key);
std::string message(char type, std::string_view payload);  // type + length + payload
std::string query(std::string_view sql);                   // 'Q'

struct Message {
  char type = 0;
  std::string body;
};
// Splits complete backend messages off the front of `bytes`; leaves the rest.
std::vector<Message> parse_messages(std::string_view bytes, std::string* rest = nullptr);

struct ErrorFields {
  std::map<char, std::string> fields;
  std::string sqlstate() const { return get('C'); }
  std::string message() const { return get('M'); }
  std::string severity() const { return get('S'); }
  std::string get(char c) const {
    auto it = fields.find(c);
    return it == fields.end() ? std::string() : it->second;
  }
};
ErrorFields parse_error(std::string_view body);
// The first ErrorResponse in `bytes` (parsed as a message stream), if any.
std::optional<ErrorFields> find_error(std::string_view bytes);
// Printable rendering of bytes for failure messages.
std::string printable(std::string_view bytes, size_t max = 200);

}  // namespace wire
}  // namespace it
