// Converts one scrape's Readings into Prometheus metric families. Pure: no I/O, no clock, no
// state; the same inputs give the same families, in metric_list order.
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "metrics/process_metrics.h"
#include "metrics/readings.h"

namespace sw::metrics {

// Every metric of all_metrics() gets a family (with HELP and TYPE) even when it has no series.
// Fixed label sets are complete: every client/server state, login result, route kind, bucket
// state and migration state is present (0 when nothing is in it), and every shard of
// readings.shards (plus shards seen only in pools or buckets) has its per-shard series.
// Only backend_errors_total{class} lists just the classes seen. Absent process values are
// left out.
std::vector<prometheus::MetricFamily> to_families(const Readings& readings, const ProcessReadings& process);

}  // namespace sw::metrics
