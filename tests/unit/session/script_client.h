// The client side of the session seam (session_host.h): a blocking loopback connection that
// writes v3 messages built by wire's own encoders (client_messages.h) and reads back whole
// frames. Every read gives up after 5 s, so a session that hangs fails the test instead of
// stopping it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "wire/messages.h"
#include "wire/startup.h"

namespace sw::test {

// One message as the client read it.
struct ClientFrame {
  char type = 0;      // 0: the connection ended (or the read timed out) before a whole message
  std::string bytes;  // the whole message: type, length and body
  std::string_view body() const { return std::string_view(bytes).substr(5); }
};

class ScriptClient {
 public:
  explicit ScriptClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~ScriptClient() { ::close(fd_); }
  ScriptClient(const ScriptClient&) = delete;
  ScriptClient& operator=(const ScriptClient&) = delete;

  bool connected() const { return connected_; }
  void send(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }
  void query(const std::string& sql) {
    std::string out;
    wire::encode_query(out, sql);
    send(out);
  }
  // The startup packet of user app on database app; the answer up to its ReadyForQuery.
  std::vector<ClientFrame> login() {
    send(wire::encode_startup_message({{"user", "app"}, {"database", "app"}}));
    return read_until_ready();
  }

  ClientFrame read() {
    ClientFrame frame;
    std::string header(5, '\0');
    if (!read_exact(header.data(), header.size())) return frame;
    const uint32_t length = (uint32_t(uint8_t(header[1])) << 24) | (uint32_t(uint8_t(header[2])) << 16) |
                            (uint32_t(uint8_t(header[3])) << 8) | uint32_t(uint8_t(header[4]));
    std::string body(length >= 4 ? length - 4 : 0, '\0');
    if (length < 4 || !read_exact(body.data(), body.size())) return frame;
    frame.type = header[0];
    frame.bytes = header + body;
    return frame;
  }
  // Messages up to and including a ReadyForQuery, or up to the end of the connection (then the
  // last frame has type 0).
  std::vector<ClientFrame> read_until_ready() {
    std::vector<ClientFrame> frames;
    do frames.push_back(read());
    while (frames.back().type != 'Z' && frames.back().type != 0);
    return frames;
  }
  // True when the session closed the connection with nothing more to read (within 5 s).
  bool closed_by_peer() {
    char byte = 0;
    return ::recv(fd_, &byte, 1, 0) == 0;
  }

 private:
  bool read_exact(char* out, size_t n) {
    while (n > 0) {
      ssize_t got = ::recv(fd_, out, n, 0);
      if (got <= 0) return false;
      out += got;
      n -= static_cast<size_t>(got);
    }
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
};

// The types of `frames` as a string ("TDCZ"; a "." for the end of the connection).
inline std::string types_of(const std::vector<ClientFrame>& frames) {
  std::string out;
  for (const ClientFrame& f : frames) out.push_back(f.type == 0 ? '.' : f.type);
  return out;
}

// The bytes of `frames`, concatenated.
inline std::string bytes_of(const std::vector<ClientFrame>& frames) {
  std::string out;
  for (const ClientFrame& f : frames) out += f.bytes;
  return out;
}

// "<severity> <sqlstate> <message>" of an ErrorResponse, or what the frame was instead.
inline std::string error_line(const ClientFrame& frame) {
  if (frame.type != 'E') return std::string("not an ErrorResponse: '") + frame.type + "'";
  auto fields = wire::decode_error_fields(frame.body());
  if (!fields) return "malformed ErrorResponse";
  return std::string(fields->severity) + " " + std::string(fields->sqlstate) + " " +
         std::string(fields->message);
}

// Logs `client` in: AuthenticationOk, the server's ParameterStatus, BackendKeyData and
// ReadyForQuery. Returns the session's cancel key.
inline wire::CancelKey log_in(ScriptClient& client) {
  REQUIRE(client.connected());
  const std::vector<ClientFrame> frames = client.login();
  REQUIRE(types_of(frames) == "RSKZ");
  return *wire::decode_backend_key_data(frames[2].body());
}

// Polls `done` for up to 2 s: for what the loop does after the client's last read (a session
// deleted after its client saw the close, a server reset after its client left).
template <typename Done>
bool eventually(Done done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace sw::test
