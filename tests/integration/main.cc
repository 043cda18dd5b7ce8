// Integration test runner: doctest with SIGPIPE ignored (raw sockets write to peers that hang up).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  doctest::Context context(argc, argv);
  return context.run();
}
