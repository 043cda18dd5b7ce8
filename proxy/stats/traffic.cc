#include "stats/traffic.h"

namespace sw::stats {

std::string_view route_label_name(RouteLabel label) {
  switch (label) {
    case RouteLabel::Shard: return "shard";
    case RouteLabel::Default: return "default";
    case RouteLabel::Scatter: return "scatter";
    case RouteLabel::AllShards: return "all_shards";
  }
  return "?";
}

std::string_view login_result_name(LoginResult result) {
  switch (result) {
    case LoginResult::Ok: return "ok";
    case LoginResult::BadCredentials: return "bad_credentials";
    case LoginResult::NotAllowed: return "not_allowed";
    case LoginResult::Error: return "error";
  }
  return "?";
}

std::string_view cross_shard_outcome_name(CrossShardOutcome outcome) {
  switch (outcome) {
    case CrossShardOutcome::OnePhase: return "one_phase";
    case CrossShardOutcome::TwoPhaseCommitted: return "two_phase_committed";
    case CrossShardOutcome::RolledBack: return "rolled_back";
    case CrossShardOutcome::Unknown: return "unknown";
  }
  return "?";
}

uint64_t PoolTraffic::query_count() const {
  uint64_t total = 0;
  for (uint64_t n : queries) total += n;
  return total;
}

uint64_t PoolTraffic::xact_count() const {
  uint64_t total = 0;
  for (uint64_t n : transactions) total += n;
  return total;
}

void PoolTraffic::merge(const PoolTraffic& other) {
  for (size_t i = 0; i < kRouteLabels; ++i) {
    queries[i] += other.queries[i];
    transactions[i] += other.transactions[i];
  }
  query_time_us += other.query_time_us;
  xact_time_us += other.xact_time_us;
  wait_time_us += other.wait_time_us;
  bytes_received += other.bytes_received;
  bytes_sent += other.bytes_sent;
}

void WorkerTraffic::count_backend_error(std::string_view sqlstate) {
  // Only well-formed classes become label values, so the label set stays bounded.
  std::string cls = "??";
  if (sqlstate.size() == 5) {
    bool valid = true;
    for (char c : sqlstate.substr(0, 2)) valid = valid && ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'));
    if (valid) cls = std::string(sqlstate.substr(0, 2));
  }
  ++backend_errors[cls];
}

void WorkerTraffic::merge(const WorkerTraffic& other) {
  for (size_t i = 0; i < kLoginResults; ++i) logins[i] += other.logins[i];
  for (size_t i = 0; i < kRouteLabels; ++i) latency[i].merge(other.latency[i]);
  for (const auto& [cls, n] : other.backend_errors) backend_errors[cls] += n;
  client_bytes_received += other.client_bytes_received;
  client_bytes_sent += other.client_bytes_sent;
  parse_cache_hits += other.parse_cache_hits;
  parse_cache_misses += other.parse_cache_misses;
  for (size_t i = 0; i < kMergeKinds; ++i) merged_reads[i] += other.merged_reads[i];
  merged_rows_in += other.merged_rows_in;
  merged_rows_out += other.merged_rows_out;
  for (size_t i = 0; i < kCrossShardOutcomes; ++i) cross_shard_commits[i] += other.cross_shard_commits[i];
  two_phase_commit_latency.merge(other.two_phase_commit_latency);
}

}  // namespace sw::stats
