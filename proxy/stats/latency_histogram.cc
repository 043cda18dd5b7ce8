#include "stats/latency_histogram.h"

namespace sw::stats {

void LatencyHistogram::observe_us(uint64_t micros) {
  double seconds = static_cast<double>(micros) / 1e6;
  size_t bucket = 0;
  while (bucket < kBounds.size() && seconds > kBounds[bucket]) ++bucket;
  ++counts_[bucket];
  ++count_;
  sum_us_ += micros;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_us_ += other.sum_us_;
}

}  // namespace sw::stats
