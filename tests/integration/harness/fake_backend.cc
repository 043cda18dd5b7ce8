#include "harness/fake_backend.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "harness/loopback.h"
#include "harness/pg_client.h"

namespace it {
namespace {

constexpr uint32_t kSslRequestCode = 80877103;
constexpr uint32_t kGssEncRequestCode = 80877104;
constexpr uint32_t kMaxPacket = 1u << 20;  // the fake refuses to buffer more from shardwire

// Blocking reads bounded by the owner's stop flag: every wait is a 50 ms poll slice.
class Peer {
 public:
  Peer(int fd, const std::atomic<bool>& stopping) : fd_(fd), stopping_(stopping) {}

  bool write(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // Exactly n bytes, or nullopt when the peer closed or the fake is stopping.
  std::optional<std::string> read(size_t n) {
    std::string out;
    while (out.size() < n) {
      pollfd p{fd_, POLLIN, 0};
      if (stopping_) return std::nullopt;
      if (poll(&p, 1, 50) <= 0) continue;
      char buffer[8192];
      ssize_t got = ::recv(fd_, buffer, std::min(sizeof buffer, n - out.size()), 0);
      if (got <= 0) return std::nullopt;
      out.append(buffer, static_cast<size_t>(got));
    }
    return out;
  }
  // A startup-phase packet: its body after the length word.
  std::optional<std::string> packet() {
    auto header = read(4);
    if (!header) return std::nullopt;
    uint32_t length = wire::get_be32(*header, 0);
    if (length < 8 || length > kMaxPacket) return std::nullopt;
    return read(length - 4);
  }
  // A typed message: type byte, then its body after the length word.
  std::optional<std::pair<char, std::string>> message() {
    auto header = read(5);
    if (!header) return std::nullopt;
    uint32_t length = wire::get_be32(*header, 1);
    if (length < 4 || length > kMaxPacket) return std::nullopt;
    auto body = read(length - 4);
    if (!body) return std::nullopt;
    return std::make_pair((*header)[0], *body);
  }
  // Waits for shardwire to close the connection (what a hostile peer's victim should do).
  void drain_until_closed() {
    while (read(1)) {}
  }

 private:
  int fd_;
  const std::atomic<bool>& stopping_;
};

std::string cstr(const std::string& s) { return s + '\0'; }
std::string auth_message(uint32_t code, const std::string& data = {}) {
  return wire::message('R', wire::be32(code) + data);
}
std::string parameter_status(const std::string& name, const std::string& value) {
  return wire::message('S', cstr(name) + cstr(value));
}
std::string ready() { return wire::message('Z', "I"); }
std::string command_complete(const std::string& tag) { return wire::message('C', cstr(tag)); }
// One text column named v (type text, oid 25).
std::string row_description() {
  return wire::message('T', wire::be16(1) + cstr("v") + wire::be32(0) + wire::be16(0) + wire::be32(25) +
                                wire::be16(0xffff) + wire::be32(0xffffffff) + wire::be16(0));
}
std::string data_row(const std::vector<std::string>& values) {
  std::string body = wire::be16(static_cast<uint16_t>(values.size()));
  for (const auto& v : values) body += wire::be32(static_cast<uint32_t>(v.size())) + v;
  return wire::message('D', body);
}
// An ErrorResponse with severity and message only: no SQLSTATE ('C') field.
std::string error_without_sqlstate(const std::string& severity, const std::string& message) {
  std::string body = "S";  // built by appending: GCC 12 warns falsely on "literal" + std::string&&
  body += cstr(severity) + 'M' + cstr(message) + '\0';
  return wire::message('E', body);
}
std::string error_with_sqlstate(const std::string& sqlstate, const std::string& message) {
  std::string body = cstr("SERROR");
  body += 'C' + cstr(sqlstate) + 'M' + cstr(message) + '\0';
  return wire::message('E', body);
}

bool starts_with_select(const std::string& sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  std::string word;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])))
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
  return word == "SELECT";
}

std::string first_word_upper(const std::string& sql) {
  std::string word;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (word.empty()) continue;
      break;
    }
    if (!std::isalpha(static_cast<unsigned char>(c))) break;
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return word.empty() ? "OK" : word;
}

}  // namespace

const char* fault_name(BackendFault fault) {
  switch (fault) {
    case BackendFault::None: return "none";
    case BackendFault::SslBytesAfterAnswer: return "bytes after the S answer to SSLRequest";
    case BackendFault::ScramHugeIterations: return "SCRAM iteration count 2^31";
    case BackendFault::ScramLongNonce: return "over-long SCRAM nonce";
    case BackendFault::ScramBadSignature: return "wrong SCRAM server signature";
    case BackendFault::LoginErrorWithoutSqlstate: return "login ErrorResponse without SQLSTATE";
    case BackendFault::QueryErrorWithoutSqlstate: return "query ErrorResponse without SQLSTATE";
    case BackendFault::TruncatedDataRow: return "truncated DataRow";
    case BackendFault::ColumnCountMismatch: return "DataRow column count differs from RowDescription";
    case BackendFault::HugeMessageLength: return "message length 2^31";
    case BackendFault::CloseMidResult: return "close mid-result";
    case BackendFault::CloseMidMessage: return "close mid-message";
    case BackendFault::IgnoresTerminate: return "Terminate ignored";
  }
  return "?";
}

FakeBackend::FakeBackend(FakeBackendScript script) : script_(script) {
  listen_fd_ = listen_loopback(&port_, "fake backend");
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeBackend::~FakeBackend() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> servers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
    servers.swap(servers_);
  }
  for (auto& t : servers) t.join();
}

std::string FakeBackend::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& e : events_) out += e + "\n";
  return out;
}

void FakeBackend::note(int number, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::string(1, 'c') + std::to_string(number) + ' ' + what);
}

void FakeBackend::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int number = ++connections_;
    std::lock_guard<std::mutex> lock(mutex_);
    open_fds_.push_back(fd);
    servers_.emplace_back([this, fd, number] {
      serve(fd, number);
      std::lock_guard<std::mutex> done(mutex_);
      open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
      close(fd);
    });
  }
}

void FakeBackend::serve(int fd, int number) {
  Peer peer(fd, stopping_);
  const BackendFault fault = script_.fault;
  auto deliver = [&](const std::string& bytes) {
    ++faults_;  // counted before the write: shardwire may answer its client before write() returns
    bool sent = peer.write(bytes);
    note(number, std::string("fault sent: ") + fault_name(fault) + (sent ? "" : " (write failed)"));
    return sent;
  };

  // Startup phase: SSLRequest / GSSENCRequest answers, then the StartupMessage.
  std::optional<std::string> packet = peer.packet();
  while (
      packet && packet->size() >= 4 &&
      (wire::get_be32(*packet, 0) == kSslRequestCode || wire::get_be32(*packet, 0) == kGssEncRequestCode)) {
    if (wire::get_be32(*packet, 0) == kSslRequestCode && fault == BackendFault::SslBytesAfterAnswer) {
      // 'S' and the start of a (plaintext) server message in one write: one segment on loopback.
      if (deliver(std::string(1, 'S') + auth_message(0))) peer.drain_until_closed();
      return;
    }
    note(number, "SSLRequest/GSSENCRequest answered N");
    if (!peer.write("N")) return;
    packet = peer.packet();
  }
  if (!packet || packet->size() < 4) return;
  std::string user;
  for (size_t at = 4; at < packet->size();) {
    size_t end = packet->find('\0', at);
    if (end == std::string::npos || end == at) break;
    std::string key = packet->substr(at, end - at);
    size_t value_end = packet->find('\0', end + 1);
    if (value_end == std::string::npos) break;
    if (key == "user") user = packet->substr(end + 1, value_end - end - 1);
    at = value_end + 1;
  }
  note(number, "startup user=" + user);

  // Authentication. The password is never checked: the peer under test is shardwire.
  if (script_.auth == FakeAuth::Md5) {
    if (!peer.write(auth_message(5, "salt")) || !peer.message()) return;
    note(number, "md5 password message received");
  } else if (script_.auth == FakeAuth::Scram) {
    if (!peer.write(auth_message(10, cstr("SCRAM-SHA-256") + std::string(1, '\0')))) return;
    auto initial = peer.message();
    if (!initial || initial->first != 'p') return;
    // SASLInitialResponse: mechanism, int32 length, "n,,n=,r=<client nonce>".
    const std::string& body = initial->second;
    size_t mechanism_end = body.find('\0');
    size_t nonce_at = body.find("r=", mechanism_end == std::string::npos ? 0 : mechanism_end);
    std::string client_nonce = nonce_at == std::string::npos ? "" : body.substr(nonce_at + 2);
    note(number, "SASL initial response, client nonce of " + std::to_string(client_nonce.size()) + " bytes");
    const std::string salt = ",s=c2FsdHNhbHRzYWx0c2FsdA==";  // base64 of 16 bytes
    if (fault == BackendFault::ScramHugeIterations) {
      if (deliver(auth_message(11, "r=" + client_nonce + "fake" + salt + ",i=2147483648")))
        peer.drain_until_closed();
      return;
    }
    if (fault == BackendFault::ScramLongNonce) {
      std::string nonce = client_nonce + std::string(5000 - std::min<size_t>(client_nonce.size(), 4000), 'x');
      if (deliver(auth_message(11, "r=" + nonce + salt + ",i=4096"))) peer.drain_until_closed();
      return;
    }
    if (!peer.write(auth_message(11, "r=" + client_nonce + "fake" + salt + ",i=4096"))) return;
    auto final_message = peer.message();
    if (!final_message) return;
    note(number, "SASL client-final received");
    // The fake does not know the password: its server signature is always wrong.
    if (!deliver(auth_message(12, "v=" + std::string(43, 'A') + "="))) return;
  }
  if (fault == BackendFault::LoginErrorWithoutSqlstate) {
    if (deliver(error_without_sqlstate("FATAL", "fake backend: no SQLSTATE in this login error")))
      peer.drain_until_closed();
    return;
  }
  std::string welcome = auth_message(0);
  for (auto [name, value] : {std::pair<const char*, const char*>{"server_version", "15.0 (fake)"},
                             {"server_encoding", "UTF8"},
                             {"client_encoding", "UTF8"},
                             {"DateStyle", "ISO, MDY"},
                             {"integer_datetimes", "on"},
                             {"standard_conforming_strings", "on"},
                             {"TimeZone", "UTC"}})
    welcome += parameter_status(name, value);
  welcome += wire::message('K', wire::be32(static_cast<uint32_t>(40000 + number)) + wire::be32(0x5eed));
  welcome += ready();
  if (!peer.write(welcome)) return;
  note(number, "logged in");

  // Queries. A fault answers the first SELECT; everything else gets a plain answer.
  while (auto message = peer.message()) {
    auto [type, body] = *message;
    if (type == 'X') {
      note(number, "Terminate");
      if (fault != BackendFault::IgnoresTerminate) return;
      ++faults_;
      note(number, "fault sent: Terminate ignored");
      peer.drain_until_closed();
      note(number, "closed by shardwire");
      return;
    }
    if (type == 'S') {
      peer.write(ready());
      continue;
    }
    if (type != 'Q') {
      peer.write(error_with_sqlstate(
          "0A000", std::string("fake backend: message type '") + type + "' is not supported"));
      continue;
    }
    std::string sql = body.substr(0, body.find('\0'));
    note(number, "Query " + first_word_upper(sql));
    if (!starts_with_select(sql) || fault == BackendFault::None) {
      std::string answer = starts_with_select(sql)
                               ? row_description() + data_row({"1"}) + command_complete("SELECT 1")
                               : command_complete(first_word_upper(sql));
      if (!peer.write(answer + ready())) return;
      continue;
    }
    switch (fault) {
      case BackendFault::QueryErrorWithoutSqlstate:
        // The connection stays usable from the fake's side: only shardwire's policy ends it.
        if (!deliver(error_without_sqlstate("ERROR", "fake backend: no SQLSTATE in this error") + ready()))
          return;
        continue;
      case BackendFault::TruncatedDataRow: {
        // A well-framed message whose one field claims 100 bytes of a 5-byte remainder.
        std::string row = wire::message('D', wire::be16(1) + wire::be32(100) + "12345");
        if (!deliver(row_description() + row + command_complete("SELECT 1") + ready())) return;
        continue;
      }
      case BackendFault::ColumnCountMismatch:
        if (!deliver(row_description() + data_row({"1", "2", "3"}) + command_complete("SELECT 1") + ready()))
          return;
        continue;
      case BackendFault::HugeMessageLength:
        if (deliver(row_description() + "D" + wire::be32(0x80000000u) + "xxxx")) peer.drain_until_closed();
        return;
      case BackendFault::CloseMidResult: deliver(row_description() + data_row({"1"})); return;
      case BackendFault::CloseMidMessage:
        deliver(row_description() + std::string("D") + wire::be32(100) + wire::be16(1) + wire::be32(90) +
                "x");
        return;
      default:  // login faults: a query cannot get here with them
        if (!peer.write(row_description() + data_row({"1"}) + command_complete("SELECT 1") + ready())) return;
        continue;
    }
  }
}

}  // namespace it
