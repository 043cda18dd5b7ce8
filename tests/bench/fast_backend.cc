// A PostgreSQL stand-in that answers every statement at once, for measuring the proxy alone
// (tests/bench/workers.sh): with a real server behind it, on two cores, the server's own CPU
// would cap what more proxy workers can show. One thread, epoll; a socket is read when epoll says
// it is readable, and answers are written at once (blocking, small). It speaks
// the server side of protocol 3.0 far enough for shardwire's pool and pgbench: SSLRequest and
// GSSENCRequest answered 'N', a StartupMessage answered with AuthenticationOk (it trusts every
// login), ParameterStatus, BackendKeyData and ReadyForQuery; a Query answered per statement
// (split at ';'); Parse/Bind/Describe/Execute/Close/Sync/Flush. A statement starting with SELECT
// returns one int4 row "1"; any other gets its first word as the tag (INSERT 0 1, UPDATE 1,
// DELETE 1 for those). BEGIN/START puts the connection in a transaction, COMMIT/END/ROLLBACK/ABORT
// ends it. Not a server: no SQL is run, no error is ever produced.
//
//   bench_fast_backend PORT
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/bytes.h"
#include "loopback.h"

namespace {

// One message: type, length, body.
void message(std::string& out, char type, std::string_view body) {
  out.push_back(type);
  sw::append_be32(out, static_cast<uint32_t>(body.size() + 4));
  out.append(body);
}

void parameter_status(std::string& out, const char* name, const char* value) {
  std::string body = name;
  body.push_back('\0');
  body += value;
  body.push_back('\0');
  message(out, 'S', body);
}

std::string upper_first_word(std::string_view sql) {
  size_t at = 0;
  while (at < sql.size() && std::isspace(static_cast<unsigned char>(sql[at]))) ++at;
  std::string word;
  while (at < sql.size() && std::isalpha(static_cast<unsigned char>(sql[at])))
    word.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(sql[at++]))));
  return word;
}

struct Connection {
  int fd = -1;
  bool started = false;
  char status = 'I';
  std::string in, out;
  std::map<std::string, bool> statement_selects;  // prepared statement name -> returns a row
  bool portal_selects = false;                    // the unnamed portal (pgbench's only one)
};

void row_description(std::string& out) {
  std::string body;
  sw::append_be16(body, 1);
  body += "x";
  body.push_back('\0');
  sw::append_be32(body, 0);   // table OID
  sw::append_be16(body, 0);   // column number
  sw::append_be32(body, 23);  // int4
  sw::append_be16(body, 4);
  sw::append_be32(body, 0xFFFFFFFF);  // typmod -1
  sw::append_be16(body, 0);           // text
  message(out, 'T', body);
}

// The statement's rows (if any) and its CommandComplete; moves the transaction status.
void complete(Connection& c, std::string_view sql) {
  const std::string word = upper_first_word(sql);
  std::string tag = word;
  if (word == "SELECT") {
    std::string row;
    sw::append_be16(row, 1);
    sw::append_be32(row, 1);
    row += "1";
    message(c.out, 'D', row);
    tag = "SELECT 1";
  } else if (word == "INSERT") {
    tag = "INSERT 0 1";
  } else if (word == "UPDATE" || word == "DELETE") {
    tag += " 1";
  } else if (word == "BEGIN" || word == "START") {
    c.status = 'T';
    tag = "BEGIN";
  } else if (word == "COMMIT" || word == "END" || word == "ROLLBACK" || word == "ABORT") {
    c.status = 'I';
    tag = word == "END" ? "COMMIT" : word == "ABORT" ? "ROLLBACK" : word;
  }
  tag.push_back('\0');
  message(c.out, 'C', tag);
}

void ready(Connection& c) { message(c.out, 'Z', std::string_view(&c.status, 1)); }

void simple_query(Connection& c, std::string_view text) {
  size_t start = 0;
  bool any = false;
  while (start < text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view statement = text.substr(start, end - start);
    if (!upper_first_word(statement).empty()) {
      if (upper_first_word(statement) == "SELECT") row_description(c.out);
      complete(c, statement);
      any = true;
    }
    start = end + 1;
  }
  if (!any) message(c.out, 'I', {});
  ready(c);
}

void startup(Connection& c, uint32_t code) {
  if (code == 80877103 || code == 80877104) {  // SSLRequest, GSSENCRequest
    c.out.push_back('N');
    return;
  }
  c.started = true;
  std::string ok;
  sw::append_be32(ok, 0);
  message(c.out, 'R', ok);
  parameter_status(c.out, "server_version", "15.0");
  parameter_status(c.out, "server_encoding", "UTF8");
  parameter_status(c.out, "client_encoding", "UTF8");
  parameter_status(c.out, "DateStyle", "ISO, MDY");
  parameter_status(c.out, "IntervalStyle", "postgres");
  parameter_status(c.out, "TimeZone", "UTC");
  parameter_status(c.out, "integer_datetimes", "on");
  parameter_status(c.out, "standard_conforming_strings", "on");
  std::string key;
  sw::append_be32(key, static_cast<uint32_t>(c.fd));
  sw::append_be32(key, 12345);
  message(c.out, 'K', key);
  ready(c);
}

// One extended-protocol message (or Query/Terminate). False: close the connection.
bool on_message(Connection& c, char type, std::string_view body) {
  switch (type) {
    case 'Q': simple_query(c, body.substr(0, body.find('\0'))); return true;
    case 'P': {
      const std::string name(body.substr(0, body.find('\0')));
      const std::string_view rest = body.substr(name.size() + 1);
      c.statement_selects[name] = upper_first_word(rest.substr(0, rest.find('\0'))) == "SELECT";
      message(c.out, '1', {});
      return true;
    }
    case 'B': {
      const size_t portal_end = body.find('\0');
      const std::string statement(
          body.substr(portal_end + 1, body.find('\0', portal_end + 1) - portal_end - 1));
      c.portal_selects = c.statement_selects[statement];
      message(c.out, '2', {});
      return true;
    }
    case 'D':
      if (!body.empty() && body[0] == 'S') {
        std::string none;
        sw::append_be16(none, 0);
        message(c.out, 't', none);
        if (c.statement_selects[std::string(body.substr(1, body.find('\0', 1) - 1))])
          row_description(c.out);
        else
          message(c.out, 'n', {});
      } else if (c.portal_selects) {
        row_description(c.out);
      } else {
        message(c.out, 'n', {});
      }
      return true;
    case 'E': complete(c, c.portal_selects ? "SELECT" : "UPDATE"); return true;
    case 'C': message(c.out, '3', {}); return true;
    case 'S': ready(c); return true;
    case 'H': return true;
    default: return false;  // 'X' Terminate, or anything this stand-in does not speak
  }
}

// Handles every complete message in c.in. False: close.
bool drain_input(Connection& c) {
  size_t at = 0;
  while (true) {
    const size_t header = c.started ? 5 : 4;
    if (c.in.size() - at < header) break;
    const uint32_t length = sw::load_be32(c.in.data() + at + (c.started ? 1 : 0));
    if (length < 4 || length > (1u << 24)) return false;
    const size_t whole = length + (c.started ? 1 : 0);
    if (c.in.size() - at < whole) break;
    if (!c.started) {
      if (length < 8) return false;
      const uint32_t code = sw::load_be32(c.in.data() + at + 4);
      if (code == 80877102) return false;  // CancelRequest: nothing runs long enough to cancel
      startup(c, code);
    } else if (!on_message(c, c.in[at], std::string_view(c.in.data() + at + 5, length - 4))) {
      return false;
    }
    at += whole;
  }
  c.in.erase(0, at);
  return true;
}

bool flush(Connection& c) {
  while (!c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;  // a stand-in: a full socket buffer is not expected at these sizes
    c.out.erase(0, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: bench_fast_backend PORT\n");
    return 2;
  }
  const int listener =
      sw::bench::listen_on_loopback(static_cast<uint16_t>(std::atoi(argv[1])), "bench_fast_backend");
  const int epoll = ::epoll_create1(0);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listener;
  ::epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
  std::map<int, std::unique_ptr<Connection>> connections;
  epoll_event ready_events[256];
  char buffer[65536];
  while (true) {
    const int n = ::epoll_wait(epoll, ready_events, 256, -1);
    for (int i = 0; i < n; ++i) {
      const int fd = ready_events[i].data.fd;
      if (fd == listener) {
        const int client = ::accept4(listener, nullptr, nullptr, 0);
        if (client < 0) continue;
        const int one = 1;
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto c = std::make_unique<Connection>();
        c->fd = client;
        epoll_event in{};
        in.events = EPOLLIN;
        in.data.fd = client;
        ::epoll_ctl(epoll, EPOLL_CTL_ADD, client, &in);
        connections[client] = std::move(c);
        continue;
      }
      Connection& c = *connections[fd];
      const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
      bool open = got > 0;
      if (open) {
        c.in.append(buffer, static_cast<size_t>(got));
        open = drain_input(c) && flush(c);
      }
      if (!open) {
        ::close(fd);
        connections.erase(fd);
      }
    }
  }
}
