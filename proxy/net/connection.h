// A TCP connection on a Loop: buffered reads handed to a Handler, buffered writes flushed once per
// loop iteration, optional TLS, read pause for backpressure. The object may be destroyed at any
// time from its own callbacks' caller (not inside them); the libuv handle outlives it until
// libuv's close callback, so late callbacks are ignored safely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

typedef struct uv_tcp_s uv_tcp_t;
typedef struct uv_stream_s uv_stream_t;
typedef struct uv_handle_s uv_handle_t;
typedef struct uv_write_s uv_write_t;
typedef struct uv_connect_s uv_connect_t;
struct uv_buf_t;

namespace sw::net {

class Loop;
class TlsContext;
class TlsSession;

class Connection {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // New bytes are in input(); consume() what was used. May close or destroy nothing but
    // through the owner after returning.
    virtual void on_readable(Connection& connection) = 0;
    // The peer closed, or a read/write/TLS error happened. The connection is closed already.
    virtual void on_closed(Connection& connection, const Status& why) = 0;
    // Outgoing connections: TCP connect finished (ok or not).
    virtual void on_connected(Connection&, const Status&) {}
    // Buffered output dropped below the low-water mark after having been above the high one.
    virtual void on_drained(Connection&) {}
  };

  static constexpr size_t kHighWater = 256 * 1024;
  static constexpr size_t kLowWater = 64 * 1024;
  // Input and output buffers emptied with more capacity than this are freed once the connection
  // stayed unused for a loop iteration (Loop::mark_trim): an idle connection holds no memory for
  // the largest message it once carried.
  static constexpr size_t kIdleBufferKeep = 8 * 1024;

  // Wraps an accepted socket from a listening stream; nullptr if accept failed.
  static std::unique_ptr<Connection> accept(Loop& loop, uv_stream_t* server, uint64_t id);
  // Starts a TCP connect to host:port (numeric IPv4/IPv6 or a name resolved synchronously);
  // the result arrives in Handler::on_connected.
  static std::unique_ptr<Connection> connect(Loop& loop, const std::string& host, int port, Handler* handler,
                                             uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void set_handler(Handler* handler) { handler_ = handler; }
  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }    // "host:port"
  const std::string& local() const { return local_; }  // "host:port" once connected
  // Socket bytes (ciphertext under TLS): read so far, and handed to the kernel so far.
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  bool is_open() const { return handle_ != nullptr; }

  std::string_view input() const { return std::string_view(in_).substr(in_offset_); }
  void consume(size_t n);
  // Replaces the first `n` bytes of input() with `bytes`: a message the reader rewrote before it
  // handles it. `bytes` must not point into input().
  void replace_input(size_t n, std::string_view bytes) { in_.replace(in_offset_, n, bytes); }

  // Appends to the output buffer (encrypting first under TLS); sent at the end of the iteration.
  void write(std::string_view data);
  size_t buffered_output() const { return out_.size() + in_flight_; }
  bool over_high_water() const { return buffered_output() > kHighWater; }
  // Sends buffered output now (called by the Loop).
  void flush();
  // Frees empty buffers above kIdleBufferKeep unless bytes moved in this loop iteration (then it
  // asks again next iteration). Called by the Loop, see mark_trim.
  void release_idle_buffers();

  void pause_reading();
  void resume_reading();

  // Switches to TLS: every byte read from now on is ciphertext. Client sessions send their hello.
  Status start_tls(std::shared_ptr<TlsContext> context, const std::string& hostname = {});
  bool tls_active() const { return tls_ != nullptr; }

  // Sends what is buffered, then closes. on_closed is not called for a close we asked for.
  void close_after_flush();
  // Closes now, dropping unsent output.
  void close();

 private:
  Connection(Loop& loop, uint64_t id);
  static void on_alloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, long nread, const uv_buf_t* buf);
  static void on_write(uv_write_t* req, int status);
  static void on_connect(uv_connect_t* req, int status);
  void start_reading();
  void handle_bytes(std::string_view bytes);
  void fail(const Status& why);
  void notify_if_drained();
  void schedule_trim();
  void raw_write(std::string_view data);
  void detach_handle();

  Loop& loop_;
  uint64_t id_;
  std::string peer_;
  std::string local_;
  uint64_t bytes_read_ = 0;
  uint64_t bytes_written_ = 0;
  uv_tcp_t* handle_ = nullptr;
  Handler* handler_ = nullptr;
  std::string in_;
  size_t in_offset_ = 0;
  std::string out_;
  size_t in_flight_ = 0;
  bool dirty_ = false;
  bool trim_scheduled_ = false;
  uint64_t active_iteration_ = 0;  // the loop iteration that last appended to in_ or out_
  bool reading_ = false;
  bool paused_ = false;
  bool above_high_water_ = false;
  bool closing_ = false;
  std::unique_ptr<TlsSession> tls_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // lets deferred tasks detect our end
};

}  // namespace sw::net
