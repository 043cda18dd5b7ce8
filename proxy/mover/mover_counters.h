// What the mover reports to the metrics: totals over every migration this process ran, and the
// current lag. Written by runner threads, read by the metrics exposer; all atomics or locked.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "stats/latency_histogram.h"

namespace sw::mover {

struct MoverCounters {
  std::atomic<uint64_t> copied_rows{0};
  std::atomic<uint64_t> copied_bytes{0};
  std::atomic<uint64_t> applied_changes{0};
  std::atomic<uint64_t> verify_mismatches{0};
  std::atomic<uint64_t> drain_aborts{0};
  std::atomic<uint64_t> drain_terminations{0};  // backends ended by cutover.drain_action = terminate
  std::atomic<uint64_t> stream_errors{0};       // catch-up stream sessions that ended in an error

  void observe_pause_us(uint64_t micros) {
    std::lock_guard<std::mutex> lock(mutex_);
    cutover_pause_.observe_us(micros);
  }
  stats::LatencyHistogram cutover_pause() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return cutover_pause_;
  }

 private:
  mutable std::mutex mutex_;
  stats::LatencyHistogram cutover_pause_;
};

}  // namespace sw::mover
