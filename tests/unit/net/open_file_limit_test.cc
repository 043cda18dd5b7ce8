// raise_open_file_limit: raises the soft limit up to what is wanted, never lowers it.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include "net/listener.h"

namespace {

rlimit current() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit;
}

// Restores the test process's limits whatever the case did.
struct KeepLimits {
  rlimit saved = current();
  ~KeepLimits() { setrlimit(RLIMIT_NOFILE, &saved); }
};

}  // namespace

TEST_CASE("a low soft limit is raised to what is wanted") {
  KeepLimits keep;
  if (keep.saved.rlim_max != RLIM_INFINITY && keep.saved.rlim_max < 512) {
    MESSAGE("hard open file limit below 512: nothing to raise into");
    return;
  }
  rlimit low = keep.saved;
  low.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  sw::net::FdLimit result = sw::net::raise_open_file_limit(512);
  CHECK(result.before == 256);
  CHECK(result.soft == 512);
  CHECK(result.enough);
  CHECK(current().rlim_cur == 512);
}

TEST_CASE("a soft limit above what is wanted stays") {
  KeepLimits keep;
  sw::net::FdLimit result = sw::net::raise_open_file_limit(16);
  CHECK(result.before == result.soft);
  CHECK(result.enough);
  CHECK(current().rlim_cur == keep.saved.rlim_cur);
}

TEST_CASE("more than the hard limit: the hard limit is reached (or raised with privilege)") {
  KeepLimits keep;
  if (keep.saved.rlim_max == RLIM_INFINITY) return;
  rlimit low = keep.saved;
  low.rlim_cur = low.rlim_max / 2;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  uint64_t wanted = static_cast<uint64_t>(keep.saved.rlim_max) + 1000;
  sw::net::FdLimit result = sw::net::raise_open_file_limit(wanted);
  CHECK(result.soft >= static_cast<uint64_t>(keep.saved.rlim_max));
  CHECK(result.enough == (result.soft >= wanted));
  CHECK(current().rlim_cur == result.soft);
}
