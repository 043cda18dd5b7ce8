// Integration test runner: doctest with SIGPIPE ignored (raw sockets write to peers that hang up).
// With a sanitized shardwire (SHARDWIRE_IT_SANITIZED=1), a sanitizer report in any proxy's log
// fails the run even when every assertion held.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>

#include "harness/proxy_process.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  doctest::Context context(argc, argv);
  int result = context.run();
  for (const std::string& report : it::sanitizer_reports())
    std::fprintf(stderr, "\n==== sanitizer report in %s\n", report.c_str());
  if (!it::sanitizer_reports().empty() && result == 0) result = 1;
  return result;
}
