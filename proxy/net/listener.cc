#include "net/listener.h"

#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <cstring>

#include "net/connection.h"
#include "net/loop.h"

namespace sw::net {

namespace {

// A bound (not yet listening) socket for host:port, or a config fault naming the address.
Result<int> bind_socket(const std::string& host, int port, bool reuse_port) {
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* resolved = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &resolved) != 0 || !resolved)
    return Status::config("listen: cannot resolve " + where);
  int fd = socket(resolved->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::string reason = std::strerror(errno);
    freeaddrinfo(resolved);
    return Status::config("listen: cannot create a socket for " + where + ": " + reason);
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  int rc = bind(fd, resolved->ai_addr, resolved->ai_addrlen);
  freeaddrinfo(resolved);
  if (rc != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EADDRINUSE && !reuse_port) {
      return Status::config(
          "listen: cannot bind " + where +
          ": the port is already in use by another process; stop it, choose another "
          "listen.port, or set listen.reuse_port: true to share the port with it on purpose");
    }
    return Status::config("listen: cannot bind " + where + ": " + std::strerror(error));
  }
  return fd;
}

}  // namespace

Status check_port_unused(const std::string& host, int port) {
  // Without SO_REUSEPORT the bind fails while any socket, shared or not, holds the address.
  Result<int> fd = bind_socket(host, port, /*reuse_port=*/false);
  if (!fd) return fd.status();
  ::close(*fd);
  return Status::ok();
}

Listener::Listener(Loop& loop, AcceptCallback on_accept) : loop_(loop), on_accept_(std::move(on_accept)) {}

Listener::~Listener() { close(); }

Status Listener::listen(const std::string& host, int port, bool reuse_port) {
  const std::string where = host + ":" + std::to_string(port);
  Result<int> bound = bind_socket(host, port, reuse_port);
  if (!bound) return bound.status();
  const int fd = *bound;
  handle_ = new uv_tcp_t;
  uv_tcp_init(loop_.raw(), handle_);
  handle_->data = this;
  uv_tcp_open(handle_, fd);
  int rc = uv_listen(reinterpret_cast<uv_stream_t*>(handle_), 1024, [](uv_stream_t* server, int status) {
    auto* self = static_cast<Listener*>(server->data);
    if (self == nullptr || status != 0) return;
    auto connection = Connection::accept(self->loop_, server, next_connection_id());
    if (connection) self->on_accept_(std::move(connection));
  });
  if (rc != 0) {
    close();
    return Status::config("listen: cannot listen on " + where + ": " + uv_strerror(rc));
  }
  return Status::ok();
}

void Listener::close() {
  if (handle_ == nullptr) return;
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
  handle_ = nullptr;
}

uint64_t next_connection_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {

uint64_t as_count(rlim_t value) { return value == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(value); }

}  // namespace

FdLimit raise_open_file_limit(uint64_t wanted) {
  FdLimit result;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return result;
  result.before = as_count(limit.rlim_cur);
  if (as_count(limit.rlim_cur) < wanted) {
    rlimit raised = limit;
    raised.rlim_cur = static_cast<rlim_t>(wanted);
    if (as_count(raised.rlim_max) < wanted) raised.rlim_max = static_cast<rlim_t>(wanted);
    // Raising the hard limit needs privilege; without it, settle for the hard limit we have.
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      raised = limit;
      raised.rlim_cur = limit.rlim_max;
      setrlimit(RLIMIT_NOFILE, &raised);
    }
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  result.soft = as_count(limit.rlim_cur);
  result.hard = as_count(limit.rlim_max);
  result.enough = result.soft >= wanted;
  return result;
}

}  // namespace sw::net
