#include "harness/tcp_forwarder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace it {
namespace {

int connect_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

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

}  // namespace

TcpForwarder::TcpForwarder(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 64) != 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0)
    throw std::runtime_error("tcp forwarder: cannot listen on 127.0.0.1");
  port_ = ntohs(addr.sin_port);
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
