// A loopback TCP relay for fault injection: connections to port() are relayed to an upstream
// port; freeze(true) stops relaying in both directions (bytes wait in the kernel), as a network
// partition would, without closing anything. Used to cut one proxy off from the catalog.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace it {

class TcpForwarder {
 public:
  explicit TcpForwarder(int upstream_port);
  ~TcpForwarder();
  TcpForwarder(const TcpForwarder&) = delete;
  TcpForwarder& operator=(const TcpForwarder&) = delete;

  int port() const { return port_; }
  void freeze(bool frozen) { frozen_ = frozen; }

 private:
  void accept_loop();
  void relay(int client, int upstream);

  int upstream_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> frozen_{false};
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> relays_;
};

}  // namespace it
