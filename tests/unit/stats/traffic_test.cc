// PoolTraffic / WorkerTraffic: totals, merge of every field, backend error classes.
#include "stats/traffic.h"

#include <doctest/doctest.h>

#include <array>
#include <map>
#include <string>

using namespace sw::stats;

namespace {

PoolTraffic pool_traffic(uint64_t base) {
  PoolTraffic t;
  for (size_t i = 0; i < kRouteLabels; ++i) {
    t.queries[i] = base + i;
    t.transactions[i] = 10 * base + i;
  }
  t.query_time_us = base * 100;
  t.xact_time_us = base * 200;
  t.wait_time_us = base * 300;
  t.bytes_received = base * 400;
  t.bytes_sent = base * 500;
  return t;
}

}  // namespace

TEST_CASE("label names") {
  CHECK(route_label_name(RouteLabel::Shard) == "shard");
  CHECK(route_label_name(RouteLabel::Default) == "default");
  CHECK(route_label_name(RouteLabel::Scatter) == "scatter");
  CHECK(route_label_name(RouteLabel::AllShards) == "all_shards");
  CHECK(login_result_name(LoginResult::Ok) == "ok");
  CHECK(login_result_name(LoginResult::BadCredentials) == "bad_credentials");
  CHECK(login_result_name(LoginResult::NotAllowed) == "not_allowed");
  CHECK(login_result_name(LoginResult::Error) == "error");
  CHECK(cross_shard_outcome_name(CrossShardOutcome::OnePhase) == "one_phase");
  CHECK(cross_shard_outcome_name(CrossShardOutcome::TwoPhaseCommitted) == "two_phase_committed");
  CHECK(cross_shard_outcome_name(CrossShardOutcome::RolledBack) == "rolled_back");
  CHECK(cross_shard_outcome_name(CrossShardOutcome::Unknown) == "unknown");
}

TEST_CASE("query and transaction counts sum every route label") {
  PoolTraffic t = pool_traffic(1);  // queries 1,2,3,4; transactions 10,11,12,13
  CHECK(t.query_count() == 10);
  CHECK(t.xact_count() == 46);
  CHECK(PoolTraffic{}.query_count() == 0);
  CHECK(PoolTraffic{}.xact_count() == 0);
}

TEST_CASE("PoolTraffic::merge sums every field") {
  PoolTraffic a = pool_traffic(1);
  PoolTraffic b = pool_traffic(7);
  a.merge(b);
  for (size_t i = 0; i < kRouteLabels; ++i) {
    CAPTURE(i);
    CHECK(a.queries[i] == 8 + 2 * i);
    CHECK(a.transactions[i] == 80 + 2 * i);
  }
  CHECK(a.query_time_us == 800);
  CHECK(a.xact_time_us == 1600);
  CHECK(a.wait_time_us == 2400);
  CHECK(a.bytes_received == 3200);
  CHECK(a.bytes_sent == 4000);
  // the argument is unchanged
  CHECK(b.query_time_us == 700);
}

TEST_CASE("WorkerTraffic::merge sums every field") {
  WorkerTraffic a, b;
  a.count_login(LoginResult::Ok);
  a.count_login(LoginResult::Ok);
  a.count_login(LoginResult::BadCredentials);
  b.count_login(LoginResult::Ok);
  b.count_login(LoginResult::NotAllowed);
  b.count_login(LoginResult::Error);
  a.latency[0].observe_us(100);
  b.latency[0].observe_us(200);
  b.latency[3].observe_us(20000000);
  a.count_backend_error("22012");
  b.count_backend_error("22003");
  b.count_backend_error("40001");
  a.client_bytes_received = 1;
  a.client_bytes_sent = 2;
  a.parse_cache_hits = 3;
  a.parse_cache_misses = 4;
  b.client_bytes_received = 10;
  b.client_bytes_sent = 20;
  b.parse_cache_hits = 30;
  b.parse_cache_misses = 40;
  a.count_cross_shard_commit(CrossShardOutcome::TwoPhaseCommitted);
  b.count_cross_shard_commit(CrossShardOutcome::TwoPhaseCommitted);
  b.count_cross_shard_commit(CrossShardOutcome::Unknown);
  a.two_phase_commit_latency.observe_us(3000);
  b.two_phase_commit_latency.observe_us(5000);

  a.merge(b);
  CHECK(a.logins[static_cast<size_t>(LoginResult::Ok)] == 3);
  CHECK(a.logins[static_cast<size_t>(LoginResult::BadCredentials)] == 1);
  CHECK(a.logins[static_cast<size_t>(LoginResult::NotAllowed)] == 1);
  CHECK(a.logins[static_cast<size_t>(LoginResult::Error)] == 1);
  CHECK(a.latency[0].count() == 2);
  CHECK(a.latency[0].sum_seconds() == doctest::Approx(0.0003));
  CHECK(a.latency[1].count() == 0);
  CHECK(a.latency[2].count() == 0);
  CHECK(a.latency[3].count() == 1);
  CHECK(a.latency[3].counts().back() == 1);
  CHECK(a.backend_errors == std::map<std::string, uint64_t>{{"22", 2}, {"40", 1}});
  CHECK(a.client_bytes_received == 11);
  CHECK(a.client_bytes_sent == 22);
  CHECK(a.parse_cache_hits == 33);
  CHECK(a.parse_cache_misses == 44);
  CHECK(a.cross_shard_commits == std::array<uint64_t, kCrossShardOutcomes>{0, 2, 0, 1});
  CHECK(a.two_phase_commit_latency.count() == 2);
  CHECK(a.two_phase_commit_latency.sum_seconds() == doctest::Approx(0.008));

  // Merging into an empty one copies.
  WorkerTraffic empty;
  empty.merge(a);
  CHECK(empty.logins == a.logins);
  CHECK(empty.backend_errors == a.backend_errors);
  CHECK(empty.parse_cache_misses == 44);
}

TEST_CASE("count_backend_error keeps the SQLSTATE class") {
  WorkerTraffic t;
  t.count_backend_error("22012");
  t.count_backend_error("22P02");
  t.count_backend_error("XX000");
  t.count_backend_error("08P01");
  CHECK(t.backend_errors == std::map<std::string, uint64_t>{{"22", 2}, {"XX", 1}, {"08", 1}});
}

TEST_CASE("malformed SQLSTATEs count as ??") {
  for (const char* bad :
       {"", "2", "22", "2201", "abcde", "a2012", "2a012", "220120", " 2201", "22 01x", "-2012"}) {
    CAPTURE(bad);
    WorkerTraffic t;
    t.count_backend_error(bad);
    CHECK(t.backend_errors == std::map<std::string, uint64_t>{{"??", 1}});
  }
  WorkerTraffic t;
  t.count_backend_error(std::string(2, '\0') + "123");
  t.count_backend_error("abcde");
  CHECK(t.backend_errors == std::map<std::string, uint64_t>{{"??", 2}});
}
