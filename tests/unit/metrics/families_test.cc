// Renders hand-filled Readings through the collector and prometheus-cpp's text serializer, and
// checks exact exposition lines.
#include "metrics/families.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <prometheus/text_serializer.h>

#include "metrics/collector.h"
#include "metrics/metric_list.h"
#include "metrics_test_util.h"

using sw::metrics::Id;
using sw::metrics::metric_def;
using sw::metrics::Readings;
using sw::metrics::ReadingsCollector;
using sw::metrics_test::has_line;
using sw::metrics_test::render;
using sw::metrics_test::sample_readings;

TEST_CASE("a gauge with labels, by shard and state, every shard present") {
  std::string text = render(sample_readings());
  CHECK(has_line(text, "shardwire_server_connections{shard=\"s0\",state=\"login\"} 1"));
  CHECK(has_line(text, "shardwire_server_connections{shard=\"s0\",state=\"idle\"} 5"));
  CHECK(has_line(text, "shardwire_server_connections{shard=\"s0\",state=\"active\"} 3"));
  // s1 is configured but has no pool yet: its series exist at 0.
  CHECK(has_line(text, "shardwire_server_connections{shard=\"s1\",state=\"idle\"} 0"));
  CHECK(has_line(text, "shardwire_pool_waiting_clients{shard=\"s0\"} 4"));
  CHECK(has_line(text, "shardwire_pool_max_wait_seconds{shard=\"s0\"} 1.5"));
  CHECK(has_line(text, "shardwire_pool_waiting_clients{shard=\"s1\"} 0"));
  CHECK(has_line(text, "shardwire_pool_pinned_clients{shard=\"s0\"} 2"));
  CHECK(has_line(text, "shardwire_pool_pinned_clients{shard=\"s1\"} 0"));
  CHECK(has_line(text, "# TYPE shardwire_server_connections gauge"));
}

TEST_CASE("counters: pools are summed over users per shard; every route is present") {
  std::string text = render(sample_readings());
  CHECK(has_line(text, "# TYPE shardwire_queries_total counter"));
  CHECK(has_line(text, "shardwire_queries_total{shard=\"s0\",route=\"shard\"} 17"));
  CHECK(has_line(text, "shardwire_queries_total{shard=\"s0\",route=\"scatter\"} 2"));
  CHECK(has_line(text, "shardwire_queries_total{shard=\"s1\",route=\"all_shards\"} 0"));
  CHECK(has_line(text, "shardwire_transactions_total{shard=\"s0\",route=\"default\"} 0"));
  CHECK(has_line(text, "shardwire_server_received_bytes_total{shard=\"s0\"} 9000"));
  CHECK(has_line(text, "shardwire_server_sent_bytes_total{shard=\"s0\"} 1200"));
  CHECK(has_line(text, "shardwire_client_received_bytes_total 4096"));
  CHECK(has_line(text, "shardwire_client_sent_bytes_total 65536"));
  CHECK(has_line(text, "shardwire_client_logins_total{result=\"ok\"} 10"));
  CHECK(has_line(text, "shardwire_client_logins_total{result=\"bad_credentials\"} 2"));
  CHECK(has_line(text, "shardwire_client_logins_total{result=\"not_allowed\"} 0"));
  CHECK(has_line(text, "shardwire_client_logins_total{result=\"error\"} 0"));
  CHECK(has_line(text, "shardwire_backend_errors_total{class=\"23\"} 3"));
  CHECK(has_line(text, "shardwire_backend_errors_total{class=\"40\"} 1"));
  CHECK(text.find("shardwire_backend_errors_total{class=\"42\"}") == std::string::npos);
  CHECK(has_line(text, "shardwire_parse_cache_hits_total 900"));
  CHECK(has_line(text, "shardwire_parse_cache_misses_total 100"));
  CHECK(has_line(text, "shardwire_merged_reads_total{plan=\"concat\"} 3"));
  CHECK(has_line(text, "shardwire_merged_reads_total{plan=\"merge_sort\"} 5"));
  CHECK(has_line(text, "shardwire_merged_reads_total{plan=\"aggregate\"} 7"));
  CHECK(has_line(text, "shardwire_merged_rows_total{direction=\"in\"} 3000"));
  CHECK(has_line(text, "shardwire_merged_rows_total{direction=\"out\"} 20"));
  CHECK(has_line(text, "shardwire_config_reloads_total{result=\"ok\"} 2"));
  CHECK(has_line(text, "shardwire_config_reloads_total{result=\"failed\"} 1"));
}

TEST_CASE("the latency histogram has cumulative buckets, +Inf, _sum and _count") {
  std::string text = render(sample_readings());
  CHECK(has_line(text, "# TYPE shardwire_query_duration_seconds histogram"));
  // Observations 0.2ms, 0.8ms, 3ms, 3ms, 20s on route "shard".
  const std::string p = "shardwire_query_duration_seconds_bucket{route=\"shard\",le=";
  CHECK(has_line(text, p + "\"0.0005\"} 1"));
  CHECK(has_line(text, p + "\"0.001\"} 2"));
  CHECK(has_line(text, p + "\"0.0025\"} 2"));
  CHECK(has_line(text, p + "\"0.005\"} 4"));
  CHECK(has_line(text, p + "\"10\"} 4"));
  CHECK(has_line(text, p + "\"+Inf\"} 5"));
  CHECK(has_line(text, "shardwire_query_duration_seconds_count{route=\"shard\"} 5"));
  CHECK(has_line(text, "shardwire_query_duration_seconds_sum{route=\"shard\"} 20.007"));
  // Routes without traffic are present, all zero.
  CHECK(has_line(text, "shardwire_query_duration_seconds_bucket{route=\"all_shards\",le=\"+Inf\"} 0"));
  CHECK(has_line(text, "shardwire_query_duration_seconds_count{route=\"default\"} 0"));
  CHECK(has_line(text, "shardwire_cutover_pause_seconds_bucket{le=\"0.25\"} 1"));
  CHECK(has_line(text, "shardwire_cutover_pause_seconds_count 1"));
}

TEST_CASE("every state of a fixed label set is present, 0 when nothing is in it") {
  std::string text = render(Readings{});
  for (const char* state : {"login", "idle", "active", "waiting"}) {
    CHECK(has_line(text, std::string("shardwire_client_connections{state=\"") + state + "\"} 0"));
  }
  for (const char* state : {"planned", "copying", "catching_up", "cutting_over", "rollback_window",
                            "cleaning", "done", "failed", "cancelled", "rolled_back"}) {
    CHECK(has_line(text, std::string("shardwire_migrations{state=\"") + state + "\"} 0"));
  }
  CHECK(has_line(text, "shardwire_directory_lease_valid 0"));
  CHECK(has_line(text, "shardwire_mover_lag_seconds 0"));
  CHECK(has_line(text, "shardwire_rollback_window_remaining_seconds 0"));
  CHECK(has_line(text, "# TYPE shardwire_backend_errors_total counter"));
}

TEST_CASE("two-phase recovery: recovered prepared transactions by decision, in doubt after the last round") {
  std::string empty = render(Readings{});
  CHECK(has_line(empty, "shardwire_two_phase_recovered_total{decision=\"commit\"} 0"));
  CHECK(has_line(empty, "shardwire_two_phase_recovered_total{decision=\"abort\"} 0"));
  CHECK(has_line(empty, "shardwire_two_phase_in_doubt 0"));
  Readings readings;
  readings.two_phase = {5, 2, 3};
  std::string text = render(readings);
  CHECK(has_line(text, "# TYPE shardwire_two_phase_recovered_total counter"));
  CHECK(has_line(text, "shardwire_two_phase_recovered_total{decision=\"commit\"} 5"));
  CHECK(has_line(text, "shardwire_two_phase_recovered_total{decision=\"abort\"} 2"));
  CHECK(has_line(text, "# TYPE shardwire_two_phase_in_doubt gauge"));
  CHECK(has_line(text, "shardwire_two_phase_in_doubt 3"));
}

TEST_CASE("cross-shard transactions by outcome, every outcome present; the two-phase commit histogram") {
  std::string empty = render(Readings{});
  for (const char* outcome : {"one_phase", "two_phase_committed", "rolled_back", "unknown"})
    CHECK(has_line(empty,
                   std::string("shardwire_cross_shard_transactions_total{outcome=\"") + outcome + "\"} 0"));
  CHECK(has_line(empty, "shardwire_two_phase_commit_seconds_count 0"));
  Readings readings;
  readings.snapshot.traffic.count_cross_shard_commit(sw::stats::CrossShardOutcome::TwoPhaseCommitted);
  readings.snapshot.traffic.count_cross_shard_commit(sw::stats::CrossShardOutcome::TwoPhaseCommitted);
  readings.snapshot.traffic.count_cross_shard_commit(sw::stats::CrossShardOutcome::Unknown);
  readings.snapshot.traffic.two_phase_commit_latency.observe_us(3000);
  std::string text = render(readings);
  CHECK(has_line(text, "shardwire_cross_shard_transactions_total{outcome=\"two_phase_committed\"} 2"));
  CHECK(has_line(text, "shardwire_cross_shard_transactions_total{outcome=\"unknown\"} 1"));
  CHECK(has_line(text, "shardwire_cross_shard_transactions_total{outcome=\"one_phase\"} 0"));
  CHECK(has_line(text, "# TYPE shardwire_two_phase_commit_seconds histogram"));
  CHECK(has_line(text, "shardwire_two_phase_commit_seconds_bucket{le=\"0.005\"} 1"));
  CHECK(has_line(text, "shardwire_two_phase_commit_seconds_count 1"));
}

TEST_CASE("directory, buckets by shard and state, build info") {
  std::string text = render(sample_readings());
  CHECK(has_line(text, "shardwire_client_connections{state=\"active\"} 7"));
  CHECK(has_line(text, "shardwire_directory_version 42"));
  CHECK(has_line(text, "shardwire_directory_age_seconds 2.5"));
  CHECK(has_line(text, "shardwire_directory_lease_valid 1"));
  CHECK(has_line(text, "shardwire_buckets{shard=\"s0\",state=\"active\"} 60"));
  CHECK(has_line(text, "shardwire_buckets{shard=\"s0\",state=\"migrating\"} 4"));
  CHECK(has_line(text, "shardwire_buckets{shard=\"s1\",state=\"active\"} 64"));
  CHECK(has_line(text, "shardwire_buckets{shard=\"s1\",state=\"migrating\"} 0"));
  CHECK(has_line(text,
                 "shardwire_build_info{version=\"" + std::string(sw::metrics::build_version()) + "\"} 1"));
  CHECK(sw::metrics::build_version() != "unknown");
  CHECK(has_line(text, "shardwire_migrations{state=\"copying\"} 1"));
  CHECK(has_line(text, "shardwire_mover_copied_rows_total 1000"));
  CHECK(has_line(text, "shardwire_mover_lag_bytes 8192"));
}

TEST_CASE("the metric list: unique names, units and _total as docs/architecture.md section 11 says") {
  std::vector<std::string> names;
  for (const auto& def : sw::metrics::all_metrics()) {
    std::string name(def.name);
    CAPTURE(name);
    CHECK((name.rfind("shardwire_", 0) == 0 || name.rfind("process_", 0) == 0));
    bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    CHECK(total == (def.type == prometheus::MetricType::Counter));
    CHECK(def.type != prometheus::MetricType::Summary);
    CHECK(!def.help.empty());
    for (const auto& other : names) CHECK(other != name);
    names.push_back(name);
  }
  // Every declared metric is rendered, in list order.
  auto families = sw::metrics::to_families(sample_readings(), sw::metrics::ProcessReadings{});
  REQUIRE(families.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(families[i].name == names[i]);
}

TEST_CASE("a read() that throws still answers with process metrics and build info") {
  ReadingsCollector collector([]() -> Readings { throw std::runtime_error("workers gone"); });
  auto families = collector.Collect();
  bool build_info = false;
  for (const auto& family : families) {
    CHECK((family.name.rfind("process_", 0) == 0 || family.name == "shardwire_build_info"));
    build_info = build_info || family.name == "shardwire_build_info";
  }
  CHECK(build_info);
}

TEST_CASE("the rebalance under way: rows, bytes, rates and time to finish; all 0 when none is") {
  std::string empty = render(Readings{});
  for (const char* name : {"shardwire_rebalance_migrations", "shardwire_rebalance_rows",
                           "shardwire_rebalance_rows_per_second", "shardwire_rebalance_eta_seconds"})
    CHECK_MESSAGE(has_line(empty, std::string(name) + " 0"), name);
  Readings readings;
  readings.mover.rebalance = {3, 500, 2000, 50000, 200000, 250.5, 25050, 6};
  std::string text = render(readings);
  CHECK(has_line(text, "# TYPE shardwire_rebalance_rows gauge"));
  CHECK(has_line(text, "shardwire_rebalance_migrations 3"));
  CHECK(has_line(text, "shardwire_rebalance_copied_rows 500"));
  CHECK(has_line(text, "shardwire_rebalance_rows 2000"));
  CHECK(has_line(text, "shardwire_rebalance_copied_bytes 50000"));
  CHECK(has_line(text, "shardwire_rebalance_bytes 200000"));
  CHECK(has_line(text, "shardwire_rebalance_rows_per_second 250.5"));
  CHECK(has_line(text, "shardwire_rebalance_bytes_per_second 25050"));
  CHECK(has_line(text, "shardwire_rebalance_eta_seconds 6"));
}
