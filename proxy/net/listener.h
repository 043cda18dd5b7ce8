// A listening TCP socket on a Loop. With reuse_port, every worker binds its own socket to the
// same address (SO_REUSEPORT) and the kernel spreads connections across them.
#pragma once

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

// Process-wide unique ids for log lines ("c12" clients, "s7" servers share one sequence).
uint64_t next_connection_id();

}  // namespace sw::net
