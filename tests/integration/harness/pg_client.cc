#include "harness/pg_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <stdexcept>

namespace it {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until fd is ready for `events` or the deadline passes.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the caller's read report the error
  }
}

std::string sqlstate_from_text(const std::string& text) {
  static const std::regex re(R"((ERROR|FATAL|PANIC):  ([0-9A-Z]{5}): )");
  std::smatch m;
  if (std::regex_search(text, m, re)) return m[2];
  return {};
}

void notice_receiver(void* arg, const PGresult* res) {
  auto* sink = static_cast<std::vector<std::string>*>(arg);
  const char* msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  sink->push_back(msg ? msg : "");
}

}  // namespace

PgResult::PgResult(PGresult* res) {
  if (!res) {
    status_ = PGRES_FATAL_ERROR;
    error_ = "null result";
    return;
  }
  status_ = PQresultStatus(res);
  if (const char* s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) sqlstate_ = s;
  if (const char* m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)) {
    error_ = m;
  } else if (const char* e = PQresultErrorMessage(res); e && *e) {
    error_ = e;
  }
  if (const char* t = PQcmdStatus(res)) tag_ = t;
  int nf = PQnfields(res), nt = PQntuples(res);
  for (int c = 0; c < nf; ++c) {
    const char* name = PQfname(res, c);  // null for COPY results
    names_.push_back(name ? name : "");
  }
  rows_.resize(nt);
  nulls_.resize(nt);
  for (int r = 0; r < nt; ++r) {
    for (int c = 0; c < nf; ++c) {
      rows_[r].emplace_back(PQgetvalue(res, r, c), PQgetlength(res, r, c));
      nulls_[r].push_back(PQgetisnull(res, r, c));
    }
  }
  PQclear(res);
}

PgResult PgResult::timeout(const std::string& what) {
  PgResult r;
  r.timed_out_ = true;
  r.error_ = "timed out: " + what;
  return r;
}

PgResult PgResult::failure(const std::string& message) {
  PgResult r;
  r.error_ = message;
  return r;
}

const std::string& PgResult::value(int row, int col) const {
  if (row >= rows() || col >= cols())
    throw std::out_of_range("PgResult::value(" + std::to_string(row) + "," + std::to_string(col) + ") of " +
                            describe());
  return rows_[row][col];
}

std::string PgResult::describe() const {
  std::string s = std::string(PQresStatus(status_));
  if (timed_out_) s = "TIMED OUT";
  if (!sqlstate_.empty()) s += " [" + sqlstate_ + "]";
  if (!error_.empty()) s += " " + error_;
  if (ok()) s += " rows=" + std::to_string(rows());
  return s;
}

PgConn& PgConn::operator=(PgConn&& o) noexcept {
  if (this != &o) {
    reset();
    conn_ = o.conn_;
    notices_ = std::move(o.notices_);
    o.conn_ = nullptr;
  }
  return *this;
}

void PgConn::reset() {
  if (conn_) PQfinish(conn_);
  conn_ = nullptr;
}

void PgConn::install_notice_receiver() {
  if (conn_) PQsetNoticeReceiver(conn_, notice_receiver, notices_.get());
}

std::string PgConn::parameter(const char* name) const {
  const char* v = conn_ ? PQparameterStatus(conn_, name) : nullptr;
  return v ? v : "";
}

PgResult PgConn::wait_result(std::chrono::milliseconds timeout) {
  if (!conn_) return PgResult::failure("no connection");
  auto deadline = Clock::now() + timeout;
  std::optional<PgResult> chosen;
  while (true) {
    while (PQisBusy(conn_)) {
      if (PQflush(conn_) < 0) break;
      if (!wait_fd(PQsocket(conn_), POLLIN, deadline)) return PgResult::timeout("waiting for a query result");
      if (!PQconsumeInput(conn_)) break;
    }
    PGresult* r = PQgetResult(conn_);
    if (!r) break;
    PgResult pr(r);
    if (pr.status() == PGRES_COPY_IN || pr.status() == PGRES_COPY_OUT || pr.status() == PGRES_COPY_BOTH)
      return pr;
    if (!chosen || chosen->ok()) chosen = std::move(pr);  // keep the first error
  }
  if (!chosen) return PgResult::failure("no result: " + error_message());
  return std::move(*chosen);
}

bool PgConn::cancel(std::string* error) const {
  PGcancel* cancel = conn_ ? PQgetCancel(conn_) : nullptr;
  if (cancel == nullptr) {
    *error = "PQgetCancel returned null";
    return false;
  }
  char buf[256] = {0};
  const int sent = PQcancel(cancel, buf, sizeof buf);
  PQfreeCancel(cancel);
  *error = buf;
  return sent == 1;
}

bool PgConn::send(const std::string& sql) { return conn_ && PQsendQuery(conn_, sql.c_str()) == 1; }

PgResult PgConn::exec(const std::string& sql, std::chrono::milliseconds timeout) {
  if (!send(sql)) return PgResult::failure("PQsendQuery: " + error_message());
  return wait_result(timeout);
}

namespace {
struct ParamArrays {
  std::vector<const char*> values;
  explicit ParamArrays(const std::vector<std::optional<std::string>>& params) {
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  }
};
}  // namespace

PgResult PgConn::exec_params(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                             std::chrono::milliseconds timeout) {
  if (!conn_) return PgResult::failure("no connection");
  ParamArrays a(params);
  if (!PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, a.values.data(),
                         nullptr, nullptr, 0))
    return PgResult::failure("PQsendQueryParams: " + error_message());
  return wait_result(timeout);
}

PgResult PgConn::exec_extended(const std::string& sql, ResultFormat format,
                               std::chrono::milliseconds timeout) {
  if (!conn_) return PgResult::failure("no connection");
  if (!PQsendQueryParams(conn_, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, static_cast<int>(format)))
    return PgResult::failure("PQsendQueryParams: " + error_message());
  return wait_result(timeout);
}

PgResult PgConn::prepare(const std::string& name, const std::string& sql, std::chrono::milliseconds timeout) {
  if (!conn_) return PgResult::failure("no connection");
  if (!PQsendPrepare(conn_, name.c_str(), sql.c_str(), 0, nullptr))
    return PgResult::failure("PQsendPrepare: " + error_message());
  return wait_result(timeout);
}

PgResult PgConn::exec_prepared(const std::string& name, const std::vector<std::optional<std::string>>& params,
                               std::chrono::milliseconds timeout) {
  if (!conn_) return PgResult::failure("no connection");
  ParamArrays a(params);
  if (!PQsendQueryPrepared(conn_, name.c_str(), static_cast<int>(params.size()), a.values.data(), nullptr,
                           nullptr, 0))
    return PgResult::failure("PQsendQueryPrepared: " + error_message());
  return wait_result(timeout);
}

std::string PgConn::value(const std::string& sql, std::chrono::milliseconds timeout) {
  PgResult r = exec(sql, timeout);
  if (!r.ok() || r.rows() < 1 || r.cols() < 1)
    throw std::runtime_error("query `" + sql + "` failed: " + r.describe());
  return r.value(0, 0);
}

std::optional<std::pair<std::string, std::string>> PgConn::wait_notify(std::chrono::milliseconds timeout) {
  if (!conn_) return std::nullopt;
  auto deadline = Clock::now() + timeout;
  while (true) {
    PQconsumeInput(conn_);
    if (PGnotify* n = PQnotifies(conn_)) {
      std::pair<std::string, std::string> out{n->relname, n->extra ? n->extra : ""};
      PQfreemem(n);
      return out;
    }
    if (PQstatus(conn_) != CONNECTION_OK) return std::nullopt;
    if (!wait_fd(PQsocket(conn_), POLLIN, deadline)) return std::nullopt;
  }
}

ConnectResult connect(const std::string& conninfo, std::chrono::milliseconds timeout) {
  ConnectResult out;
  auto deadline = Clock::now() + timeout;
  PGconn* c = PQconnectStart(conninfo.c_str());
  if (!c) {
    out.error = "PQconnectStart: out of memory";
    return out;
  }
  PQsetErrorVerbosity(c, PQERRORS_VERBOSE);
  PgConn conn(c);
  conn.install_notice_receiver();
  if (PQstatus(c) == CONNECTION_BAD) {
    out.error = PQerrorMessage(c);
    out.sqlstate = sqlstate_from_text(out.error);
    return out;
  }
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (true) {
    if (st == PGRES_POLLING_OK) break;
    if (st == PGRES_POLLING_FAILED) {
      out.error = PQerrorMessage(c);
      out.sqlstate = sqlstate_from_text(out.error);
      return out;
    }
    short events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (!wait_fd(PQsocket(c), events, deadline)) {
      out.timed_out = true;
      out.error = "timed out connecting (" + std::to_string(timeout.count()) + " ms)";
      return out;
    }
    st = PQconnectPoll(c);
  }
  PQsetErrorVerbosity(c, PQERRORS_DEFAULT);
  out.ok = true;
  out.conn = std::move(conn);
  return out;
}

PgConn connect_or_throw(const std::string& conninfo, std::chrono::milliseconds timeout) {
  ConnectResult r = connect(conninfo, timeout);
  if (!r.ok) throw std::runtime_error("connect failed: " + r.error);
  return std::move(r.conn);
}

// ---- raw sockets ------------------------------------------------------------------------------

RawSocket::RawSocket(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("connect 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(e));
  }
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawSocket RawSocket::borrow(int fd) {
  RawSocket s;
  s.fd_ = fd;
  s.owned_ = false;
  return s;
}

RawSocket::~RawSocket() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

void RawSocket::close_now() {
  if (owned_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  closed_ = true;
}

void RawSocket::shutdown_write() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

bool RawSocket::send_all(std::string_view bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd_, POLLOUT, 0};
        poll(&p, 1, 1000);
        continue;
      }
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string RawSocket::read_some(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  if (fd_ < 0 || closed_) return {};
  if (!wait_fd(fd_, POLLIN, deadline)) return {};
  char buf[65536];
  ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  if (n == 0 || (errno != EAGAIN && errno != EINTR)) closed_ = true;
  return {};
}

std::string RawSocket::read_exact(size_t n, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string out;
  char buf[65536];
  while (out.size() < n && !closed_) {
    if (!wait_fd(fd_, POLLIN, deadline)) break;
    ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), MSG_DONTWAIT);
    if (got > 0)
      out.append(buf, static_cast<size_t>(got));
    else if (got == 0 || (errno != EAGAIN && errno != EINTR))
      closed_ = true;
  }
  return out;
}

std::string RawSocket::read_until_closed(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  std::string out;
  char buf[65536];
  while (!closed_) {
    if (!wait_fd(fd_, POLLIN, deadline)) break;
    ssize_t got = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (got > 0)
      out.append(buf, static_cast<size_t>(got));
    else if (got == 0 || (errno != EAGAIN && errno != EINTR))
      closed_ = true;
  }
  return out;
}

namespace wire {

std::string be32(uint32_t v) {
  std::string s(4, '\0');
  s[0] = static_cast<char>(v >> 24);
  s[1] = static_cast<char>(v >> 16);
  s[2] = static_cast<char>(v >> 8);
  s[3] = static_cast<char>(v);
  return s;
}

std::string be16(uint16_t v) {
  std::string s(2, '\0');
  s[0] = static_cast<char>(v >> 8);
  s[1] = static_cast<char>(v);
  return s;
}

uint32_t get_be32(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::string startup_message(const std::vector<std::pair<std::string, std::string>>& params,
                            uint32_t version) {
  std::string body = be32(version);
  for (const auto& [k, v] : params) {
    body += k;
    body.push_back('\0');
    body += v;
    body.push_back('\0');
  }
  body.push_back('\0');
  return be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

std::string ssl_request() { return be32(8) + be32(80877103); }
std::string gssenc_request() { return be32(8) + be32(80877104); }
std::string cancel_request(uint32_t pid, uint32_t key) {
  return be32(16) + be32(80877102) + be32(pid) + be32(key);
}

std::string message(char type, std::string_view payload) {
  return std::string(1, type) + be32(static_cast<uint32_t>(payload.size() + 4)) + std::string(payload);
}

std::string query(std::string_view sql) {
  std::string p(sql);
  p.push_back('\0');
  return message('Q', p);
}

std::vector<Message> parse_messages(std::string_view bytes, std::string* rest) {
  std::vector<Message> out;
  size_t off = 0;
  while (bytes.size() - off >= 5) {
    uint32_t len = get_be32(bytes, off + 1);
    if (len < 4 || bytes.size() - off - 1 < len) break;
    out.push_back({bytes[off], std::string(bytes.substr(off + 5, len - 4))});
    off += 1 + len;
  }
  if (rest) *rest = std::string(bytes.substr(off));
  return out;
}

ErrorFields parse_error(std::string_view body) {
  ErrorFields f;
  size_t off = 0;
  while (off < body.size() && body[off] != '\0') {
    char code = body[off++];
    size_t end = body.find('\0', off);
    if (end == std::string_view::npos) break;
    f.fields[code] = std::string(body.substr(off, end - off));
    off = end + 1;
  }
  return f;
}

std::optional<ErrorFields> find_error(std::string_view bytes) {
  for (const auto& m : parse_messages(bytes))
    if (m.type == 'E') return parse_error(m.body);
  return std::nullopt;
}

std::string printable(std::string_view bytes, size_t max) {
  std::string out;
  static const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < bytes.size() && i < max; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 32 && c < 127 && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  if (bytes.size() > max) out += "...(" + std::to_string(bytes.size()) + " bytes)";
  if (bytes.empty()) out = "(nothing)";
  return out;
}

}  // namespace wire
}  // namespace it
