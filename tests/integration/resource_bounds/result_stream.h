// Helpers of the resource_bounds suite for reading one huge query result straight off a socket:
// an incremental checker of the backend message stream, and a sampler of a process's resident
// memory on its own thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace it::rb {

// Follows the answer to one simple Query whose rows each hold one text column of exactly
// `value_width` 'x' characters (SELECT repeat('x', width) FROM ...): counts rows, checks every
// byte of every value, and stops at ReadyForQuery. Any other message, a NULL, a wrong width or a
// wrong byte is an error.
class ResultStream {
 public:
  explicit ResultStream(uint32_t value_width) : value_width_(value_width) {}

  // Feeds bytes as they arrive; false once the stream broke the contract (see error()).
  bool feed(std::string_view bytes);
  bool complete() const { return complete_; }
  uint64_t rows() const { return rows_; }
  uint64_t bytes() const { return bytes_; }
  const std::string& command_tag() const { return command_tag_; }
  const std::string& error() const { return error_; }

 private:
  bool on_message(char type, std::string_view body);

  uint32_t value_width_;
  std::string pending_;  // a message split across reads
  uint64_t rows_ = 0;
  uint64_t bytes_ = 0;
  bool complete_ = false;
  std::string command_tag_;
  std::string error_;
};

// A TCP connection to 127.0.0.1:`port` whose receive buffer is set to `rcvbuf` before connect()
// (so the window the kernel advertises never outgrows it), logged in as `user` to `database` on a
// proxy with trust authentication, left at ReadyForQuery. Throws when the login fails.
class SmallWindowClient {
 public:
  SmallWindowClient(int port, int rcvbuf, const std::string& user, const std::string& database);
  ~SmallWindowClient();
  SmallWindowClient(const SmallWindowClient&) = delete;
  SmallWindowClient& operator=(const SmallWindowClient&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Samples the VmRSS of `pid` every `every_ms` on a thread of its own until stopped, keeping the
// peak. The first sample is taken before the constructor returns.
class RssSampler {
 public:
  RssSampler(pid_t pid, int every_ms);
  ~RssSampler() { stop(); }
  RssSampler(const RssSampler&) = delete;
  RssSampler& operator=(const RssSampler&) = delete;

  void stop();
  long peak_kib() const { return peak_kib_.load(); }
  long last_kib() const { return last_kib_.load(); }
  int samples() const { return samples_.load(); }

 private:
  void sample();

  pid_t pid_;
  std::atomic<long> peak_kib_{-1};
  std::atomic<long> last_kib_{-1};
  std::atomic<int> samples_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace it::rb
