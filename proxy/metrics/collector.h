// The prometheus::Collectable the exposer serves: on each scrape it asks the app for fresh
// Readings, reads /proc/self, and converts both (families.h). It keeps no metric state.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "metrics/readings.h"

namespace sw::metrics {

class ReadingsCollector : public prometheus::Collectable {
 public:
  // `read` runs on an HTTP thread of the exposer, never on a worker and never concurrently
  // with itself (scrapes are serialised here). It must not block on the data path for long:
  // ask the workers for snapshots and wait with a bound.
  explicit ReadingsCollector(std::function<Readings()> read);

  // Never throws: if `read` throws, the scrape still answers, with process metrics and
  // build_info but no shardwire readings (all other families are then absent).
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<Readings()> read_;
  mutable std::mutex scrape_mutex_;
};

}  // namespace sw::metrics
