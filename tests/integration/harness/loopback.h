// Loopback sockets for the harness's own servers (TcpForwarder, FakeBackend).
#pragma once

namespace it {

// A socket listening on 127.0.0.1 at a free port (stored in *port); throws naming `who`.
int listen_loopback(int* port, const char* who);
// A socket connected to 127.0.0.1:port, or -1.
int connect_loopback(int port);

}  // namespace it
