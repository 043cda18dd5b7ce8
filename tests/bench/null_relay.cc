// The least a user-space PostgreSQL proxy can do: relay bytes between each client and its own
// server connection, nothing parsed, nothing pooled. tests/bench/syscalls.sh runs it beside
// pgbouncer and shardwire as the floor of a proxy's CPU per transaction: what remains is the
// kernel's cost of the reads, writes and wake-ups that any relay on sockets makes.
//
// One thread, level-triggered epoll, one read per readiness event (as libuv and libevent do) and
// the bytes written to the peer at once. A partial write keeps the rest, waits for EPOLLOUT on
// that socket and stops reading the other side until it is flushed.
//
//   bench_null_relay LISTEN_PORT SERVER_PORT      (both on 127.0.0.1)
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>

#include "loopback.h"

namespace {

// One socket of a client/server pair.
struct Side {
  int fd = -1;
  Side* peer = nullptr;
  std::string unsent;  // bytes for this socket that a write did not take
};

class Relay {
 public:
  Relay(int listener, uint16_t server_port) : listener_(listener), server_port_(server_port) {
    epoll_ = epoll_create1(0);
    watch(listener_, EPOLLIN, EPOLL_CTL_ADD);
  }

  [[noreturn]] void run() {
    epoll_event events[64];
    for (;;) {
      const int n = epoll_wait(epoll_, events, 64, -1);
      for (int k = 0; k < n; ++k) {
        const int fd = events[k].data.fd;
        if (fd == listener_) {
          accept_client();
          continue;
        }
        auto it = sides_.find(fd);
        if (it == sides_.end()) continue;  // closed earlier in this batch
        Side* side = it->second.get();
        if ((events[k].events & EPOLLOUT) != 0 && !flush(side)) continue;
        if ((events[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) relay_from(side);
      }
    }
  }

 private:
  void watch(int fd, uint32_t events, int op) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    epoll_ctl(epoll_, op, fd, &event);
  }

  void accept_client() {
    const int client = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK);
    if (client < 0) return;
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in address = sw::bench::loopback_address(server_port_);
    // A blocking connect: it happens once per client login, outside the measured traffic.
    if (server < 0 || connect(server, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      std::perror("null_relay: connect to the server");
      close(client);
      if (server >= 0) close(server);
      return;
    }
    const int one = 1;
    for (int fd : {client, server}) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(server, F_SETFL, O_NONBLOCK);
    auto a = std::make_unique<Side>();
    auto b = std::make_unique<Side>();
    a->fd = client;
    b->fd = server;
    a->peer = b.get();
    b->peer = a.get();
    sides_[client] = std::move(a);
    sides_[server] = std::move(b);
    watch(client, EPOLLIN, EPOLL_CTL_ADD);
    watch(server, EPOLLIN, EPOLL_CTL_ADD);
  }

  // One read from `from`, written to its peer at once.
  void relay_from(Side* from) {
    const ssize_t n = read(from->fd, buffer_, sizeof buffer_);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      close_pair(from);
      return;
    }
    if (n < 0) return;
    Side* to = from->peer;
    if (!to->unsent.empty()) {
      to->unsent.append(buffer_, static_cast<size_t>(n));
      return;
    }
    const ssize_t written = write(to->fd, buffer_, static_cast<size_t>(n));
    if (written < 0 && errno != EAGAIN) {
      close_pair(from);
      return;
    }
    const size_t taken = written < 0 ? 0 : static_cast<size_t>(written);
    if (taken == static_cast<size_t>(n)) return;
    to->unsent.assign(buffer_ + taken, static_cast<size_t>(n) - taken);
    watch(to->fd, EPOLLOUT, EPOLL_CTL_MOD);  // and no EPOLLIN: its own reads wait too
    watch(from->fd, 0, EPOLL_CTL_MOD);
  }

  // Writes what `side` holds; false when the pair was closed.
  bool flush(Side* side) {
    const ssize_t written = write(side->fd, side->unsent.data(), side->unsent.size());
    if (written < 0 && errno != EAGAIN) {
      close_pair(side);
      return false;
    }
    if (written > 0) side->unsent.erase(0, static_cast<size_t>(written));
    if (side->unsent.empty()) {
      watch(side->fd, EPOLLIN, EPOLL_CTL_MOD);
      watch(side->peer->fd, EPOLLIN, EPOLL_CTL_MOD);
    }
    return true;
  }

  void close_pair(Side* side) {
    const int a = side->fd;
    const int b = side->peer->fd;
    close(a);
    close(b);
    sides_.erase(a);
    sides_.erase(b);
  }

  int listener_;
  uint16_t server_port_;
  int epoll_ = -1;
  std::unordered_map<int, std::unique_ptr<Side>> sides_;
  char buffer_[65536];
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_null_relay LISTEN_PORT SERVER_PORT\n");
    return 2;
  }
  const int listener =
      sw::bench::listen_on_loopback(static_cast<uint16_t>(std::atoi(argv[1])), "bench_null_relay");
  Relay(listener, static_cast<uint16_t>(std::atoi(argv[2]))).run();
}
