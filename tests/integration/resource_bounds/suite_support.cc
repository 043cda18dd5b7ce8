#include "resource_bounds/suite_support.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <stdexcept>

#include "resource_bounds/client_swarm.h"

namespace it::rb {
namespace {

using Clock = std::chrono::steady_clock;

// Reads until an Authentication message ('R') with `code` arrives; throws on anything else.
void expect_auth_request(RawSocket& socket, uint32_t code, const char* what) {
  std::string bytes;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline && !socket.closed()) {
    bytes += socket.read_some(std::chrono::milliseconds(200));
    std::string rest;
    auto messages = wire::parse_messages(bytes, &rest);
    if (messages.empty()) continue;
    const wire::Message& m = messages.front();
    if (m.type == 'R' && m.body.size() >= 4 && wire::get_be32(m.body, 0) == code) return;
    throw std::runtime_error(std::string(what) + ": expected Authentication code " + std::to_string(code) +
                             ", got " + wire::printable(bytes));
  }
  throw std::runtime_error(std::string(what) + ": no Authentication code " + std::to_string(code) +
                           " within 10 s (got " + wire::printable(bytes) + ")");
}

std::string sasl_initial_response() {
  std::string client_first = "n,,n=,r=rEsOuRcEbOuNdSnOnCe01";
  std::string body = "SCRAM-SHA-256";
  body.push_back('\0');
  body += wire::be32(static_cast<uint32_t>(client_first.size())) + client_first;
  return wire::message('p', body);
}

// Reads what is there without blocking; marks the client closed on EOF or a reset.
void drain(StalledClient& client) {
  char buf[4096];
  while (!client.closed) {
    ssize_t n = ::recv(client.socket->fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      client.received.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    client.closed = true;
    client.closed_after_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - client.connected).count();
  }
}

}  // namespace

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

void restart_with_listen_key(ProxyProcess& proxy, const std::string& line) {
  std::string text = proxy.config_text();
  size_t at = text.find("listen:\n");
  REQUIRE(at != std::string::npos);
  text.insert(at + 8, "  " + line + "\n");
  proxy.write_config(text);
  proxy.signal(SIGINT);
  REQUIRE(proxy.wait_exit(10s).has_value());
  proxy.restart(proxy.options().env);
}

void raise_own_fd_limit(int clients) {
  long hard = own_hard_open_file_limit();
  REQUIRE_MESSAGE(hard >= clients + 200,
                  "hard open file limit " << hard << " is too low for " << clients << " clients");
  set_own_open_file_limit(hard);
}

FdLimitedProxyBinary::FdLimitedProxyBinary(int limit) {
  std::string binary = shardwire_binary();
  REQUIRE_MESSAGE(!binary.empty(), "no shardwire binary");
  if (const char* set = std::getenv("SHARDWIRE_BIN")) previous_ = set;
  // `ulimit -n` without -S/-H sets both limits. Raising the hard one back needs CAP_SYS_RESOURCE,
  // which root loses here (setpriv, util-linux); other users never have it.
  std::string script = dir_.file("shardwire-fdlimit.sh");
  write_file(script, "#!/bin/sh\nulimit -n " + std::to_string(limit) + " || exit 71\n" +
                         "if [ \"$(id -u)\" = 0 ]; then\n" +
                         "  exec setpriv --inh-caps=-sys_resource --bounding-set=-sys_resource '" + binary +
                         "' \"$@\"\n" + "fi\nexec '" + binary + "' \"$@\"\n");
  REQUIRE(chmod(script.c_str(), 0755) == 0);
  setenv("SHARDWIRE_BIN", script.c_str(), 1);
}

FdLimitedProxyBinary::~FdLimitedProxyBinary() {
  if (previous_)
    setenv("SHARDWIRE_BIN", previous_->c_str(), 1);
  else
    unsetenv("SHARDWIRE_BIN");
}

Bystander::Bystander(const std::string& conninfo) : conn_(connect_or_throw(conninfo)) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      auto start = std::chrono::steady_clock::now();
      PgResult r = conn_.exec("SELECT count(*) FROM generate_series(1, 1000)", 20s);
      long long took =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
              .count();
      if (!r.ok() || r.value() != "1000") {
        first_failure_ = r.describe();
        ++failed_;
        return;
      }
      ++done_;
      if (took > max_ms_.load()) max_ms_.store(took);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

void Bystander::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

NewcomerLoop::NewcomerLoop(std::string conninfo) : conninfo_(std::move(conninfo)) {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      ConnectResult c = connect(conninfo_, 10s);
      PgResult r = c.ok ? c.conn.exec("SELECT 1", 10s) : PgResult::failure(c.error);
      if (r.ok())
        ++served_;
      else if (failed_++ == 0)
        first_failure_ = r.describe();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void NewcomerLoop::stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

const char* stall_name(StallKind kind) {
  switch (kind) {
    case StallKind::Silent: return "silent";
    case StallKind::Slowloris: return "slowloris";
    case StallKind::AfterStartup: return "stopped after startup";
    case StallKind::MidScram: return "stopped mid-SCRAM";
  }
  return "?";
}

std::vector<StalledClient> open_stalled(int port, StallKind kind, int count) {
  std::vector<StalledClient> clients;
  for (int i = 0; i < count; ++i) {
    StalledClient c{kind, std::make_unique<RawSocket>(port), Clock::now()};
    std::string startup = wire::startup_message({{"user", "app"}, {"database", "app"}});
    switch (kind) {
      case StallKind::Silent: break;
      case StallKind::Slowloris:
        c.startup = startup;
        c.socket->send_all(startup.substr(0, 1));
        c.dribbled = 1;
        break;
      case StallKind::AfterStartup:
        c.socket->send_all(startup);
        expect_auth_request(*c.socket, 10, "AuthenticationSASL");
        break;
      case StallKind::MidScram:
        c.socket->send_all(startup);
        expect_auth_request(*c.socket, 10, "AuthenticationSASL");
        c.socket->send_all(sasl_initial_response());
        expect_auth_request(*c.socket, 11, "AuthenticationSASLContinue");
        break;
    }
    clients.push_back(std::move(c));
  }
  return clients;
}

void wait_until_closed(std::vector<StalledClient>& clients, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  auto next_dribble = Clock::now() + std::chrono::seconds(1);
  std::vector<pollfd> fds;
  std::vector<StalledClient*> open;
  while (Clock::now() < deadline) {
    fds.clear();
    open.clear();
    for (StalledClient& c : clients) {
      if (c.closed) continue;
      fds.push_back({c.socket->fd(), POLLIN, 0});
      open.push_back(&c);
    }
    if (open.empty()) return;
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents != 0) drain(*open[i]);
    if (Clock::now() < next_dribble) continue;
    next_dribble += std::chrono::seconds(1);
    for (StalledClient* c : open) {
      if (c->kind != StallKind::Slowloris || c->closed || c->dribbled >= c->startup.size()) continue;
      drain(*c);  // an answer already there is read before a byte that could reset the connection
      if (c->closed) continue;
      if (::send(c->socket->fd(), c->startup.data() + c->dribbled, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
        ++c->dribbled;
    }
  }
}

}  // namespace it::rb
