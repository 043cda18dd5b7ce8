// A fixed-bucket latency histogram (Prometheus-style cumulative buckets are derived when read).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace sw::stats {

class LatencyHistogram {
 public:
  // Upper bounds in seconds; one more bucket (+Inf) follows the last.
  static constexpr std::array<double, 14> kBounds{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                  0.1,    0.25,  0.5,    1,     2.5,  5,     10};

  void observe_us(uint64_t micros);
  void merge(const LatencyHistogram& other);

  // counts()[i]: observations in (kBounds[i-1], kBounds[i]]; the last entry is above every bound.
  const std::array<uint64_t, kBounds.size() + 1>& counts() const { return counts_; }
  uint64_t count() const { return count_; }
  double sum_seconds() const { return static_cast<double>(sum_us_) / 1e6; }

 private:
  std::array<uint64_t, kBounds.size() + 1> counts_{};
  uint64_t count_ = 0;
  uint64_t sum_us_ = 0;
};

}  // namespace sw::stats
