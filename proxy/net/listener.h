// A listening TCP socket on a Loop. With reuse_port, every worker binds its own socket to the
// same address (SO_REUSEPORT) and the kernel spreads connections across them; check_port_unused()
// first makes sure no other process holds the address, unless sharing it is configured. Every accepted
// connection is a descriptor: raise_open_file_limit() makes room for as many as configured.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

typedef struct uv_tcp_s uv_tcp_t;

namespace sw::net {

class Loop;
class Connection;

class Listener {
 public:
  using AcceptCallback = std::function<void(std::unique_ptr<Connection>)>;

  Listener(Loop& loop, AcceptCallback on_accept);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and listens. Errors are config faults naming the address.
  Status listen(const std::string& host, int port, bool reuse_port);
  // Stops accepting; already accepted connections are unaffected.
  void close();

 private:
  Loop& loop_;
  AcceptCallback on_accept_;
  uv_tcp_t* handle_ = nullptr;
};

// Ok when no socket holds host:port, else a config fault naming the address and
// listen.reuse_port. Called before the workers bind their SO_REUSEPORT sockets, which would
// otherwise silently share the port with another process listening on it.
Status check_port_unused(const std::string& host, int port);

// Process-wide unique ids for log lines ("c12" clients, "s7" servers share one sequence).
uint64_t next_connection_id();

// The process's open file limit. Distributions start daemons with a soft RLIMIT_NOFILE of 1024
// and a much higher hard limit; a proxy for listen.max_client_connections clients needs more.
struct FdLimit {
  uint64_t before = 0;  // soft limit found at start
  uint64_t soft = 0;    // soft limit in force now
  uint64_t hard = 0;    // hard limit in force now
  bool enough = false;  // soft >= wanted
};

// Raises the soft RLIMIT_NOFILE to `wanted` when it is lower: up to the hard limit for anyone,
// beyond it (raising the hard limit too) only with CAP_SYS_RESOURCE. Never lowers either limit.
FdLimit raise_open_file_limit(uint64_t wanted);

}  // namespace sw::net
