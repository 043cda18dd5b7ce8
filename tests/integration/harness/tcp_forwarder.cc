#include "harness/tcp_forwarder.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/loopback.h"

namespace it {
namespace {

// Copies what is readable on `from` to `to`; false when `from` closed or failed.
bool pump(int from, int to) {
  char buffer[16384];
  ssize_t n = read(from, buffer, sizeof buffer);
  if (n <= 0) return false;
  for (ssize_t sent = 0; sent < n;) {
    ssize_t w = write(to, buffer + sent, static_cast<size_t>(n - sent));
    if (w <= 0) return false;
    sent += w;
  }
  return true;
}

// A relay must add no delay of its own: without TCP_NODELAY a reply written right after an
// unsolicited message (a NOTIFY) waits for the peer's delayed ACK, about 40 ms per round trip,
// which no catalog or shard reached directly or through pgbouncer/HAProxy (both set it) sees.
void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

TcpForwarder::TcpForwarder(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = listen_loopback(&port_, "tcp forwarder");
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpForwarder::~TcpForwarder() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& t : relays_) t.join();
}

void TcpForwarder::accept_loop() {
  while (!stopping_) {
    pollfd fd{listen_fd_, POLLIN, 0};
    if (poll(&fd, 1, 50) <= 0) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    int upstream = connect_loopback(upstream_port_);
    if (upstream < 0) {
      close(client);
      continue;
    }
    no_delay(client);
    no_delay(upstream);
    std::lock_guard<std::mutex> lock(mutex_);
    relays_.emplace_back([this, client, upstream] { relay(client, upstream); });
  }
}

void TcpForwarder::relay(int client, int upstream) {
  while (!stopping_) {
    if (frozen_) {
      usleep(5000);
      continue;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
    if (poll(fds, 2, 20) <= 0) continue;
    if ((fds[0].revents && !pump(client, upstream)) || (fds[1].revents && !pump(upstream, client))) break;
  }
  close(client);
  close(upstream);
}

}  // namespace it
