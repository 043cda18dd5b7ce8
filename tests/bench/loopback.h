// Loopback sockets for the benchmark programs (bench_fast_backend, bench_null_relay): every
// benchmark listens and connects on 127.0.0.1 only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace sw::bench {

inline sockaddr_in loopback_address(uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// A non-blocking listening socket on 127.0.0.1:port (for an epoll loop); exits the program,
// naming `program`, when the port cannot be had.
inline int listen_on_loopback(uint16_t port, const char* program) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in address = loopback_address(port);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 512) != 0) {
    std::fprintf(stderr, "%s: cannot listen on 127.0.0.1:%u\n", program, static_cast<unsigned>(port));
    std::perror(program);
    std::exit(1);
  }
  return fd;
}

}  // namespace sw::bench
