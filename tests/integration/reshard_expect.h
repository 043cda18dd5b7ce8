// How both reshard suites end (reshard_test.cc, reshard_faults_test.cc): wait for every
// migration to be done, stop the clients, run the history checker, print the figures, and hold
// the result to the scenario's claims. doctest assertions; include from a test file only.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "harness/reshard_checker.h"
#include "it_test.h"

namespace it::reshard {

// `from`: when REBALANCE was issued, in workload time. `moved_buckets`: how many buckets the plan
// moves (4096 / 5 = 819.2: s4 gets 819 when every bucket holds the same data).
inline Report expect_nothing_lost(Deployment& d, Workload& w, const MigrationWatch& watch, double from,
                                  std::chrono::seconds timeout, size_t moved_buckets = 819) {
  const bool done = watch.wait_all_done(timeout);
  const double to = w.elapsed_s();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // writes go on landing on the new owners
  w.stop();
  REQUIRE_MESSAGE(done, "migrations not done:\n" << watch.summary() << d.log_tails(80));

  Report report = check_history(d, w);
  double worst_lag_p99_ms = 0;
  MESSAGE(format_figures(report, w, watch, from, to)
          << format_apply_lag(d, &worst_lag_p99_ms) << format_cutover_steps(d));
  CHECK(report.problem_count() == 0);
  // The message is built on success too (doctest -s): never index an empty list.
  CHECK_MESSAGE(w.anomalies().empty(), (w.anomalies().empty() ? std::string() : w.anomalies().front()));
  CHECK(report.moved_buckets == moved_buckets);
  CHECK(report.moved_row_share() >= 0.19);
  CHECK(report.moved_row_share() <= 0.21);
  CHECK(report.acknowledged > 100);
  return report;
}

}  // namespace it::reshard
