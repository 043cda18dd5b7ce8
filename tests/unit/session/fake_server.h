// A test seam for the leg engine and the session (docs/architecture.md §5.6, §13): a PostgreSQL
// server on a loopback port that speaks the real v3 protocol from a message script. It logs any
// user in (trust: AuthenticationOk, ParameterStatus, BackendKeyData, ReadyForQuery), answers each
// Query with the bytes the script returns for its text, answers the extended protocol from the
// same script (answer_extended), drops CancelRequests (counted), and ends a connection at
// Terminate, or where an answer ends with kHangUp. One thread per connection, blocking sockets;
// every message it writes is built by wire's own encoders, so what the proxy reads is what a
// server sends, byte for byte.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/loop.h"
#include "pool/budget.h"
#include "pool/pool.h"
#include "session/leg_engine.h"
#include "wire/message_writer.h"
#include "wire/messages.h"
#include "wire/row_description.h"

namespace sw::test {

class FakeServer {
 public:
  // The bytes answering a Query with text `sql`, ReadyForQuery included.
  using Script = std::function<std::string(const std::string& sql)>;
  // Ends an answer: the server sends the bytes before it, then closes the connection (a server
  // that dies in the middle of an answer). No message type is 0xff.
  static constexpr std::string_view kHangUp{"\xff hang up", 9};

  explicit FakeServer(Script script) : script_(std::move(script)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(listen_fd_, 16);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeServer() {
    stopping_ = true;
    acceptor_.join();
    ::close(listen_fd_);
    for (std::thread& t : connections_) t.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  int port() const { return port_; }
  int cancels() const { return cancels_.load(); }
  int hang_ups() const { return hang_ups_.load(); }
  // The text of every Query, and of every Parse, in arrival order.
  std::vector<std::string> queries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queries_;
  }
  // The type of every message after the startup packet, in arrival order ("QPBDES").
  std::string types() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return types_;
  }

  // The usual answers: a command's CommandComplete, a one-column result (column v, text).
  static std::string command(const std::string& tag, char status = 'I') {
    std::string out;
    wire::encode_command_complete(out, tag);
    wire::encode_ready_for_query(out, status);
    return out;
  }
  static std::string rows(const std::vector<std::string>& values, char status = 'I') {
    std::string out = row_description() + data_rows(values);
    wire::encode_ready_for_query(out, status);
    return out;
  }
  // A merged read's collation query answered as a shard with the database collation C and no
  // nondeterministic collations (RowDescription, one DataRow, CommandComplete; no ReadyForQuery:
  // the read's answer follows in the same Query).
  static std::string collations_c() {
    std::string out;
    wire::encode_row_description(out,
                                 {wire::computed_column("database", 25), wire::computed_column("columns", 25),
                                  wire::computed_column("nondeterministic", 25)});
    wire::encode_data_row(out, {std::optional<std::string>("C"), std::optional<std::string>(""),
                                std::optional<std::string>("")});
    wire::encode_command_complete(out, "SELECT 1");
    return out;
  }
  static std::string row_description() {
    std::string out;
    wire::encode_row_description(out, {wire::computed_column("v", 25)});
    return out;
  }
  // The DataRows and the CommandComplete "SELECT <n>" of rows().
  static std::string data_rows(const std::vector<std::string>& values) {
    std::string out;
    for (const std::string& value : values) wire::encode_data_row(out, {value});
    wire::encode_command_complete(out, "SELECT " + std::to_string(values.size()));
    return out;
  }
  // A script: rows(`values`) for `sql`; "SET" for any other statement (a prologue).
  static Script answering(const std::string& sql, const std::vector<std::string>& values) {
    return [sql, values](const std::string& text) { return text == sql ? rows(values) : command("SET"); };
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd >= 0) connections_.emplace_back([this, fd] { serve(fd); });
    }
  }
  bool read_exact(int fd, char* out, size_t n) {
    while (n > 0) {
      pollfd p{fd, POLLIN, 0};
      if (stopping_) return false;
      if (::poll(&p, 1, 20) <= 0) continue;
      ssize_t got = ::read(fd, out, n);
      if (got <= 0) return false;
      out += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }
  static uint32_t be32(const char* p) {
    return (uint32_t(uint8_t(p[0])) << 24) | (uint32_t(uint8_t(p[1])) << 16) |
           (uint32_t(uint8_t(p[2])) << 8) | uint32_t(uint8_t(p[3]));
  }
  static void send_all(int fd, const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }
  void serve(int fd) {
    char header[5];
    if (read_exact(fd, header, 4)) {
      std::string startup(be32(header) - 4, '\0');
      if (read_exact(fd, startup.data(), startup.size()) && be32(startup.data()) == 80877102) {
        ++cancels_;  // CancelRequest: nothing to answer
      } else if (!startup.empty()) {
        std::string hello;
        wire::encode_auth_ok(hello);
        wire::encode_parameter_status(hello, "server_version", "15.0");
        wire::encode_backend_key_data(hello, {7, 42});
        wire::encode_ready_for_query(hello, 'I');
        send_all(fd, hello);
        serve_messages(fd);
      }
    }
    ::close(fd);
  }

  // The messages after the login, until Terminate, a hang-up or a closed socket.
  void serve_messages(int fd) {
    char header[5];
    Portals portals;
    while (read_exact(fd, header, 5) && header[0] != 'X') {
      std::string body(be32(header + 1) - 4, '\0');
      if (!read_exact(fd, body.data(), body.size())) break;
      const std::string sql = header[0] == 'Q' ? body.substr(0, body.find('\0')) : std::string();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        types_.push_back(header[0]);
        if (header[0] == 'Q') queries_.push_back(sql);
        if (header[0] == 'P') queries_.emplace_back(wire::decode_parse(body)->query);
      }
      if (!send_answer(fd, header[0] == 'Q' ? script_(sql) : answer_extended(header[0], body, portals)))
        break;
    }
  }
  // False when the answer ended with kHangUp: its bytes before it were sent, then the end of the
  // stream (FIN), and what the peer still sends is read and dropped until it closes. (A close()
  // with unread input would reset the connection and drop the answer's bytes not yet sent.)
  bool send_answer(int fd, const std::string& answer) {
    const bool hang_up = answer.size() >= kHangUp.size() &&
                         std::string_view(answer).substr(answer.size() - kHangUp.size()) == kHangUp;
    send_all(fd, hang_up ? answer.substr(0, answer.size() - kHangUp.size()) : answer);
    if (!hang_up) return true;
    ++hang_ups_;
    ::shutdown(fd, SHUT_WR);
    for (char drop[512]; !stopping_;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0 && ::read(fd, drop, sizeof(drop)) <= 0) break;
    }
    return false;
  }

  // The query text of each statement and portal of one connection.
  struct Portals {
    std::map<std::string, std::string> statements, portals;
  };
  // The extended protocol, answered from the script: Parse, Bind and Close are acknowledged;
  // Describe gets the RowDescription (else NoData) of the script's answer for the query (a
  // statement's after an empty ParameterDescription); Execute gets that answer without its
  // RowDescription and ReadyForQuery (a kHangUp in it is kept); Sync a ReadyForQuery 'I'; Flush
  // nothing.
  std::string answer_extended(char type, const std::string& body, Portals& p) {
    std::string out;
    switch (type) {
      case 'P': {
        auto parse = wire::decode_parse(body);
        p.statements[std::string(parse->statement)] = std::string(parse->query);
        wire::encode_parse_complete(out);
        break;
      }
      case 'B': {
        auto bind = wire::decode_bind(body);
        p.portals[std::string(bind->portal)] = p.statements[std::string(bind->statement)];
        wire::encode_bind_complete(out);
        break;
      }
      case 'D': {
        auto target = wire::decode_target(body);
        const std::string& sql = (target->kind == 'S' ? p.statements : p.portals)[std::string(target->name)];
        if (target->kind == 'S') wire::MessageWriter(out).begin('t').int16(0).end();
        std::string described;
        for (const std::string& m : split(script_(sql)))
          if (m[0] == 'T') described = m;
        if (described.empty()) wire::MessageWriter(described).begin('n').end();  // NoData
        out += described;
        break;
      }
      case 'E':
        for (const std::string& m :
             split(script_(p.portals[std::string(wire::decode_execute(body)->portal)])))
          if (m[0] != 'T' && m[0] != 'Z') out += m;
        break;
      case 'C': wire::encode_close_complete(out); break;
      case 'S': wire::encode_ready_for_query(out, 'I'); break;
      default: break;
    }
    return out;
  }
  // A script's answer as its messages (a trailing kHangUp as one more).
  static std::vector<std::string> split(const std::string& bytes) {
    std::vector<std::string> out;
    for (size_t at = 0; at < bytes.size();) {
      if (std::string_view(bytes).substr(at) == kHangUp) {
        out.emplace_back(kHangUp);
        break;
      }
      const size_t size = 1 + be32(bytes.data() + at + 1);
      out.push_back(bytes.substr(at, size));
      at += size;
    }
    return out;
  }

  Script script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> cancels_{0};
  std::atomic<int> hang_ups_{0};
  std::thread acceptor_;
  std::vector<std::thread> connections_;  // joined at the end (the acceptor alone adds to it)
  mutable std::mutex mutex_;
  std::vector<std::string> queries_;
  std::string types_;
};

// A real event loop and one real pool per fake server (shards s0, s1, ...), and a watchdog that
// stops a run that hangs.
struct LoopWithPools {
  net::Loop loop;
  std::shared_ptr<pool::Budget> budget = std::make_shared<pool::Budget>(16);
  std::vector<std::unique_ptr<pool::Pool>> pools;

  pool::Pool* add_pool(const FakeServer& server, uint64_t max_message_size) {
    pool::BackendTarget t;
    t.shard = 's' + std::to_string(pools.size());
    t.host = "127.0.0.1";
    t.port = server.port();
    t.dbname = "app";
    t.user = "app";
    pool::PoolSettings settings;
    settings.max_message_size = max_message_size;
    pools.push_back(std::make_unique<pool::Pool>(loop, t, settings, budget));
    return pools.back().get();
  }
  // The leg engine's targets on `servers`, each beginning with `begin`.
  std::vector<session::LegEngine::Target> targets(const std::vector<FakeServer*>& servers,
                                                  uint64_t max_message_size, const std::string& begin = "") {
    std::vector<session::LegEngine::Target> out;
    for (FakeServer* server : servers) {
      session::LegEngine::Target target;
      target.pool = add_pool(*server, max_message_size);
      target.shard = target.pool->target().shard;
      target.index = static_cast<int>(out.size());
      target.begin = begin;
      out.push_back(target);
    }
    return out;
  }
  // Runs the loop until the code under test stops it; false when the watchdog had to (5 s).
  bool run() {
    std::atomic<bool> ended{false};
    std::atomic<bool> timed_out{false};
    std::thread watchdog([&] {
      for (int i = 0; i < 500 && !ended; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (!ended) {
        timed_out = true;
        loop.stop();
      }
    });
    loop.run();
    ended = true;
    watchdog.join();
    return !timed_out;
  }
};

}  // namespace sw::test
