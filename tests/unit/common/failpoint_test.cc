// Fault injection points: only the armed one fires, and firing kills (or stops) the process for
// real: checked in a forked child.
#include "common/failpoint.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// Runs hit(`name`) in a child with `spec` armed; returns its wait status.
int hit_in_child(const char* spec, const char* name) {
  pid_t child = fork();
  if (child == 0) {
    sw::failpoint::arm(spec);
    sw::failpoint::hit(name);
    _exit(0);
  }
  int status = 0;
  if (std::string_view(spec).find(":stop") != std::string_view::npos) {
    REQUIRE(waitpid(child, &status, WUNTRACED) == child);
    if (WIFSTOPPED(status)) {
      kill(child, SIGKILL);
      int ended = 0;
      waitpid(child, &ended, 0);
    }
    return status;
  }
  REQUIRE(waitpid(child, &status, 0) == child);
  return status;
}

}  // namespace

TEST_CASE("only the armed point is armed; an empty spec disarms") {
  sw::failpoint::arm("2pc.after_decision");
  CHECK(sw::failpoint::armed("2pc.after_decision"));
  CHECK_FALSE(sw::failpoint::armed("2pc.before_prepare"));
  sw::failpoint::arm("2pc.after_decision:stop");
  CHECK(sw::failpoint::armed("2pc.after_decision"));
  sw::failpoint::arm("");
  CHECK_FALSE(sw::failpoint::armed("2pc.after_decision"));
  CHECK_FALSE(sw::failpoint::armed(""));
  sw::failpoint::hit("2pc.after_decision");  // disarmed: returns
}

TEST_CASE("the armed point kills the process with SIGKILL; another point does nothing") {
  int killed = hit_in_child("2pc.between_prepares", "2pc.between_prepares");
  REQUIRE(WIFSIGNALED(killed));
  CHECK(WTERMSIG(killed) == SIGKILL);
  int passed = hit_in_child("2pc.between_prepares", "2pc.before_prepare");
  REQUIRE(WIFEXITED(passed));
  CHECK(WEXITSTATUS(passed) == 0);
}

TEST_CASE("a point armed with :stop stops the process") {
  int stopped = hit_in_child("2pc.after_decision:stop", "2pc.after_decision");
  REQUIRE(WIFSTOPPED(stopped));
  CHECK(WSTOPSIG(stopped) == SIGSTOP);
}
