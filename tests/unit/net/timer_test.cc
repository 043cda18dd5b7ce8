// Loop::active_ms and Timer: time in which the loop could not run (a callback stalled past 1 s,
// as a stopped process would) does not count against a one-shot timer; ordinary waits do.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "net/loop.h"
#include "net/timer.h"

using namespace std::chrono;

namespace {

double ms_since(steady_clock::time_point start) {
  return duration<double, std::milli>(steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("a one-shot timer fires on time when the loop runs freely") {
  sw::net::Loop loop;
  sw::net::Timer timer(loop);
  auto start = steady_clock::now();
  double fired_ms = -1;
  timer.start(200, 0, [&] {
    fired_ms = ms_since(start);
    loop.stop();
  });
  loop.run();
  CHECK(fired_ms >= 190);
  CHECK(fired_ms < 600);
}

TEST_CASE("a stall of the loop does not count against a one-shot timer; active_ms leaves it out") {
  sw::net::Loop loop;
  sw::net::Timer deadline(loop), stall(loop);
  auto start = steady_clock::now();
  const uint64_t active_before = loop.active_ms();
  double fired_ms = -1;
  uint64_t active_at_fire = 0;
  deadline.start(500, 0, [&] {
    fired_ms = ms_since(start);
    active_at_fire = loop.active_ms();
    loop.stop();
  });
  // 1.5 s in which the loop cannot poll, as when the process is stopped (SIGSTOP).
  stall.start(10, 0, [] { std::this_thread::sleep_for(milliseconds(1500)); });
  loop.run();
  MESSAGE("deadline of 500 ms fired after " << fired_ms << " ms of wall time, "
                                            << active_at_fire - active_before << " ms of active time");
  CHECK(fired_ms >= 1900);  // 1.5 s stalled + the 0.5 s the timer still had
  CHECK(active_at_fire - active_before >= 450);
  CHECK(active_at_fire - active_before < 1000);
}
