#include "metrics/collector.h"

#include <exception>
#include <utility>

#include "common/log.h"
#include "metrics/families.h"
#include "metrics/metric_list.h"
#include "metrics/process_metrics.h"

namespace sw::metrics {

ReadingsCollector::ReadingsCollector(std::function<Readings()> read) : read_(std::move(read)) {}

std::vector<prometheus::MetricFamily> ReadingsCollector::Collect() const {
  std::lock_guard<std::mutex> lock(scrape_mutex_);
  ProcessReadings process = read_process_metrics();
  try {
    return to_families(read_ ? read_() : Readings{}, process);
  } catch (const std::exception& e) {
    LOG_WARN("metrics: reading the proxy's state failed: %s", e.what());
  } catch (...) {
    LOG_WARN("metrics: reading the proxy's state failed");
  }
  // Zeros would lie; export only what does not come from the app.
  std::vector<prometheus::MetricFamily> all = to_families(Readings{}, process);
  std::vector<prometheus::MetricFamily> kept;
  for (auto& family : all) {
    bool process_family = family.name.rfind("process_", 0) == 0;
    if (process_family || family.name == metric_def(Id::BuildInfo).name) {
      kept.push_back(std::move(family));
    }
  }
  return kept;
}

}  // namespace sw::metrics
