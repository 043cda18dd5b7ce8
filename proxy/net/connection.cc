#include "net/connection.h"

#include <netdb.h>
#include <uv.h>

#include <cstring>
#include <memory>

#include "common/bytes.h"
#include "net/loop.h"
#include "net/tls.h"

namespace sw::net {
namespace {

struct WriteRequest {
  uv_write_t req;
  std::string data;
};

// "host:port" of either end of a TCP handle.
std::string describe_address(uv_tcp_t* handle, bool peer) {
  sockaddr_storage address{};
  int length = sizeof address;
  auto* raw = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? uv_tcp_getpeername(handle, raw, &length) : uv_tcp_getsockname(handle, raw, &length)) != 0)
    return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    uv_ip4_name(v4, host, sizeof host);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    uv_ip6_name(v6, host, sizeof host);
    port = ntohs(v6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

Status uv_status(const char* what, int code) {
  return Status::server("08006", std::string(what) + ": " + uv_strerror(code));
}

}  // namespace

Connection::Connection(Loop& loop, uint64_t id) : loop_(loop), id_(id) {}

Connection::~Connection() {
  loop_.forget(this);
  detach_handle();
}

std::unique_ptr<Connection> Connection::accept(Loop& loop, uv_stream_t* server, uint64_t id) {
  std::unique_ptr<Connection> connection(new Connection(loop, id));
  connection->handle_ = new uv_tcp_t;
  uv_tcp_init(loop.raw(), connection->handle_);
  connection->handle_->data = connection.get();
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(connection->handle_)) != 0) return nullptr;
  uv_tcp_nodelay(connection->handle_, 1);
  connection->peer_ = describe_address(connection->handle_, true);
  connection->local_ = describe_address(connection->handle_, false);
  connection->start_reading();
  return connection;
}

std::unique_ptr<Connection> Connection::connect(Loop& loop, const std::string& host, int port,
                                                Handler* handler, uint64_t id) {
  std::unique_ptr<Connection> connection(new Connection(loop, id));
  connection->handler_ = handler;
  connection->peer_ = host + ":" + std::to_string(port);
  connection->handle_ = new uv_tcp_t;
  uv_tcp_init(loop.raw(), connection->handle_);
  connection->handle_->data = connection.get();

  sockaddr_storage address{};
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* resolved = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &resolved);
  auto* request = new uv_connect_t;
  if (rc == 0 && resolved != nullptr) {
    std::memcpy(&address, resolved->ai_addr, resolved->ai_addrlen);
    freeaddrinfo(resolved);
    rc = uv_tcp_connect(request, connection->handle_, reinterpret_cast<sockaddr*>(&address),
                        &Connection::on_connect);
  } else {
    rc = UV_EAI_NONAME;
  }
  if (rc != 0) {
    delete request;
    // Report asynchronously so callers see one code path for every failure.
    Connection* raw = connection.get();
    loop.post([raw, rc, alive = std::weak_ptr<int>(raw->alive_)] {
      if (alive.lock() && raw->handle_ != nullptr) {
        raw->detach_handle();
        raw->handler_->on_connected(*raw, uv_status("connect failed", rc));
      }
    });
  }
  return connection;
}

void Connection::on_connect(uv_connect_t* request, int status) {
  auto* self = static_cast<Connection*>(request->handle->data);
  delete request;
  if (self == nullptr) return;
  if (status != 0) {
    self->detach_handle();
    self->handler_->on_connected(*self, uv_status("connect failed", status));
    return;
  }
  uv_tcp_nodelay(self->handle_, 1);
  self->local_ = describe_address(self->handle_, false);
  self->start_reading();
  self->handler_->on_connected(*self, Status::ok());
}

void Connection::start_reading() {
  if (handle_ == nullptr || reading_ || paused_) return;
  reading_ = uv_read_start(reinterpret_cast<uv_stream_t*>(handle_), &Connection::on_alloc,
                           &Connection::on_read) == 0;
}

void Connection::pause_reading() {
  paused_ = true;
  if (handle_ != nullptr && reading_) uv_read_stop(reinterpret_cast<uv_stream_t*>(handle_));
  reading_ = false;
}

void Connection::resume_reading() {
  paused_ = false;
  start_reading();
}

void Connection::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  // Reads are copied into the connection's own buffer at once, so one buffer per thread serves.
  // On the heap, allocated by the thread's first read: a thread_local array would be static TLS,
  // which glibc carves out of every thread's stack, loop threads or not (the /metrics server's
  // threads have small stacks, and 64 KiB of TLS left them too little).
  constexpr size_t kScratchBytes = size_t{64} * 1024;
  static thread_local std::unique_ptr<char[]> scratch;
  if (scratch == nullptr) scratch = std::make_unique<char[]>(kScratchBytes);
  *buf = uv_buf_init(scratch.get(), kScratchBytes);
}

void Connection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<Connection*>(stream->data);
  if (self == nullptr || nread == 0) return;
  if (nread < 0) {
    self->fail(nread == UV_EOF ? Status::client("08006", "connection closed by peer")
                               : uv_status("read failed", static_cast<int>(nread)));
    return;
  }
  self->handle_bytes(std::string_view(buf->base, static_cast<size_t>(nread)));
}

void Connection::handle_bytes(std::string_view bytes) {
  bytes_read_ += bytes.size();
  active_iteration_ = loop_.iteration();
  if (tls_) {
    Status status = tls_->on_ciphertext(bytes, in_);
    std::string records = tls_->take_ciphertext();
    if (!records.empty()) raw_write(records);
    if (!status) {
      fail(status);
      return;
    }
  } else {
    in_.append(bytes);
  }
  if (in_.size() > in_offset_ && handler_ != nullptr) handler_->on_readable(*this);
}

void Connection::consume(size_t n) {
  in_offset_ += n;
  if (in_offset_ >= in_.size()) {
    in_offset_ = 0;
    in_.clear();
    if (in_.capacity() > kIdleBufferKeep) schedule_trim();
  } else if (in_offset_ > size_t{64} * 1024 && in_offset_ * 2 > in_.size()) {
    in_.erase(0, in_offset_);
    in_offset_ = 0;
  }
}

void Connection::write(std::string_view data) {
  if (handle_ == nullptr || data.empty()) return;
  if (!tls_) {
    raw_write(data);
    return;
  }
  Status status = tls_->write_plaintext(data);
  if (!status) {
    fail(status);
    return;
  }
  raw_write(tls_->take_ciphertext());
}

void Connection::raw_write(std::string_view data) {
  if (data.empty()) return;
  active_iteration_ = loop_.iteration();
  out_.append(data);
  if (buffered_output() > kHighWater) above_high_water_ = true;
  if (!dirty_) {
    dirty_ = true;
    loop_.mark_dirty(this);
  }
}

void Connection::flush() {
  dirty_ = false;
  if (handle_ == nullptr || out_.empty()) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(handle_);
  if (in_flight_ == 0) {
    uv_buf_t buf = uv_buf_init(out_.data(), static_cast<unsigned>(out_.size()));
    int written = uv_try_write(stream, &buf, 1);
    if (written > 0) {
      out_.erase(0, static_cast<size_t>(written));
      bytes_written_ += static_cast<uint64_t>(written);
      if (out_.empty() && out_.capacity() > kIdleBufferKeep) schedule_trim();
    } else if (written != UV_EAGAIN) {
      fail(uv_status("write failed", written));
      return;
    }
  }
  if (!out_.empty()) {
    auto* request = new WriteRequest;
    request->data.swap(out_);
    in_flight_ += request->data.size();
    bytes_written_ += request->data.size();
    uv_buf_t buf = uv_buf_init(request->data.data(), static_cast<unsigned>(request->data.size()));
    int rc = uv_write(&request->req, stream, &buf, 1, &Connection::on_write);
    if (rc != 0) {
      in_flight_ -= request->data.size();
      delete request;
      fail(uv_status("write failed", rc));
      return;
    }
  }
  if (closing_ && in_flight_ == 0 && out_.empty()) {
    detach_handle();
    return;
  }
  notify_if_drained();
}

void Connection::schedule_trim() {
  if (trim_scheduled_) return;
  trim_scheduled_ = true;
  loop_.mark_trim(this);
}

void Connection::release_idle_buffers() {
  trim_scheduled_ = false;
  if (handle_ == nullptr) return;
  if (active_iteration_ == loop_.iteration()) {
    schedule_trim();
    return;
  }
  if (in_offset_ == 0) release_if_large(in_, kIdleBufferKeep);
  release_if_large(out_, kIdleBufferKeep);
}

// The handler paused its peer when this connection's output passed the high-water mark; tell it
// once the output is low again, whether the kernel took it at once or in a write callback.
void Connection::notify_if_drained() {
  if (above_high_water_ && buffered_output() < kLowWater) {
    above_high_water_ = false;
    if (handler_ != nullptr) handler_->on_drained(*this);
  }
}

void Connection::on_write(uv_write_t* req, int status) {
  auto* request = reinterpret_cast<WriteRequest*>(req);
  auto* self = static_cast<Connection*>(req->handle->data);
  size_t size = request->data.size();
  delete request;
  if (self == nullptr) return;
  self->in_flight_ -= size;
  if (status != 0) {
    self->fail(uv_status("write failed", status));
    return;
  }
  if (self->closing_ && self->in_flight_ == 0 && self->out_.empty()) {
    self->detach_handle();
    return;
  }
  self->notify_if_drained();
}

Status Connection::start_tls(std::shared_ptr<TlsContext> context, const std::string& hostname) {
  bool client = !context->is_server();
  tls_ = std::make_unique<TlsSession>(std::move(context), hostname);
  if (!client) return Status::ok();
  Status status = tls_->start_handshake();
  if (status) raw_write(tls_->take_ciphertext());
  return status;
}

void Connection::close_after_flush() {
  if (handle_ == nullptr) return;
  closing_ = true;
  pause_reading();
  flush();
}

void Connection::close() { detach_handle(); }

void Connection::fail(const Status& why) {
  if (handle_ == nullptr) return;
  bool was_closing = closing_;
  detach_handle();
  if (!was_closing && handler_ != nullptr) handler_->on_closed(*this, why);
}

void Connection::detach_handle() {
  if (handle_ == nullptr) return;
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
  handle_ = nullptr;
  out_.clear();
  reading_ = false;
}

}  // namespace sw::net
