// A scripted fake PostgreSQL server for fault injection: the hostile peers a real PostgreSQL
// cannot be made to be. It listens on a loopback port (a thread accepts, one thread per
// connection) and speaks just enough of the server side of the v3 protocol for shardwire to log
// in and send simple queries: the SSLRequest answer ('N', or the scripted 'S' with bytes after
// it), the StartupMessage, trust / md5 / SCRAM-SHA-256 authentication (it never checks the
// password: it is not what is under test), ParameterStatus, BackendKeyData, ReadyForQuery, and
// answers to Query messages.
//
// The scripted fault replaces the normal answer at its step: a login fault at the login, a query
// fault in the answer to the first Query whose text starts with SELECT (SET/RESET/DISCARD and
// the like are answered normally, so shardwire's state replay never hits the fault first). Every
// fault is delivered on every connection, so retries meet it too.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace it {

enum class FakeAuth { Trust, Md5, Scram };

enum class BackendFault {
  None,
  SslBytesAfterAnswer,        // SSLRequest answered 'S' with "unencrypted" bytes in the same write
  ScramHugeIterations,        // server-first-message with i=2147483648 (2^31)
  ScramLongNonce,             // server nonce 5000 characters long (client nonce + filler)
  ScramBadSignature,          // sane server-first (i=4096), server-final with an all-zero signature
  LoginErrorWithoutSqlstate,  // after authentication: ErrorResponse with S and M fields only
  QueryErrorWithoutSqlstate,  // SELECT answered with an ErrorResponse without C, then ReadyForQuery
  TruncatedDataRow,           // DataRow whose only field claims 100 bytes; the message holds 5
  ColumnCountMismatch,        // RowDescription of 1 column followed by a DataRow of 3
  HugeMessageLength,          // RowDescription, then a DataRow header announcing 2^31 bytes
  CloseMidResult,             // RowDescription and one DataRow, then the connection is closed
  CloseMidMessage,            // RowDescription, the first 12 bytes of a 100-byte DataRow, close
  IgnoresTerminate,           // Terminate read, the connection kept open until shardwire closes it
};

const char* fault_name(BackendFault fault);

struct FakeBackendScript {
  FakeAuth auth = FakeAuth::Trust;
  BackendFault fault = BackendFault::None;
};

class FakeBackend {
 public:
  explicit FakeBackend(FakeBackendScript script);
  ~FakeBackend();  // closes every connection and joins every thread
  FakeBackend(const FakeBackend&) = delete;
  FakeBackend& operator=(const FakeBackend&) = delete;

  int port() const { return port_; }
  const FakeBackendScript& script() const { return script_; }
  int connections() const { return connections_.load(); }
  // Times the scripted fault was sent (a test whose fault never fired proves nothing).
  int faults_delivered() const { return faults_.load(); }
  // One line per step of every connection ("c1 startup user=app", "c1 fault sent", ...).
  std::string events() const;

 private:
  void accept_loop();
  void serve(int fd, int number);
  void note(int number, const std::string& what);

  FakeBackendScript script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> faults_{0};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> servers_;
  std::vector<int> open_fds_;
  std::vector<std::string> events_;
};

}  // namespace it
