// Shared by the metrics tests: a hand-filled Readings and rendering through the collector.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include <prometheus/text_serializer.h>

#include "metrics/collector.h"
#include "metrics/readings.h"

namespace sw::metrics_test {

inline metrics::Readings sample_readings() {
  metrics::Readings r;
  r.shards = {"s0", "s1"};
  r.snapshot.client_states = {1, 2, 7, 4};
  stats::PoolInfo a;
  a.shard = "s0";
  a.user = "app";
  a.sv_login = 1;
  a.sv_idle = 2;
  a.sv_active = 3;
  a.cl_waiting = 4;
  a.cl_pinned = 2;
  a.maxwait_us = 1'500'000;
  a.traffic.queries = {15, 0, 2, 0};
  a.traffic.transactions = {9, 0, 1, 0};
  a.traffic.bytes_received = 1000;
  a.traffic.bytes_sent = 8000;
  stats::PoolInfo b;
  b.shard = "s0";
  b.user = "report";
  b.sv_idle = 3;
  b.maxwait_us = 200'000;
  b.traffic.queries = {2, 0, 0, 0};
  b.traffic.bytes_received = 200;
  b.traffic.bytes_sent = 1000;
  r.snapshot.pools = {a, b};
  auto& t = r.snapshot.traffic;
  t.count_login(stats::LoginResult::Ok);
  for (int i = 0; i < 9; ++i) t.count_login(stats::LoginResult::Ok);
  t.count_login(stats::LoginResult::BadCredentials);
  t.count_login(stats::LoginResult::BadCredentials);
  auto& shard_latency = t.latency[static_cast<size_t>(stats::RouteLabel::Shard)];
  for (uint64_t us : {200, 800, 3000, 3000, 20'000'000}) shard_latency.observe_us(us);
  for (const char* state : {"23505", "23503", "23502", "40001"}) t.count_backend_error(state);
  t.client_bytes_received = 4096;
  t.client_bytes_sent = 65536;
  t.merged_reads = {3, 5, 7};
  t.merged_rows_in = 3000;
  t.merged_rows_out = 20;
  r.directory.version = 42;
  r.directory.age_seconds = 2.5;
  r.directory.lease_valid = true;
  r.directory.buckets = {{"s0", metrics::BucketState::Active, 60},
                         {"s0", metrics::BucketState::Migrating, 4},
                         {"s1", metrics::BucketState::Active, 64}};
  r.parse_cache = {900, 100};
  r.reloads = {2, 1};
  r.mover.copied_rows = 1000;
  r.mover.lag_bytes = 8192;
  r.mover.cutover_pause.observe_us(120'000);
  r.mover.migrations[static_cast<size_t>(metrics::MigrationState::Copying)] = 1;
  return r;
}

// The text exposition of `readings` as the exposer would serve it (process metrics included).
inline std::string render(const metrics::Readings& readings) {
  metrics::ReadingsCollector collector([readings] { return readings; });
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, collector.Collect());
  return out.str();
}

inline bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  std::string got;
  while (std::getline(in, got)) {
    if (got == line) return true;
  }
  return false;
}

// A plain HTTP/1.0 GET against 127.0.0.1:port; returns the whole response ("" on failure).
inline std::string http_get(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return response;
}

}  // namespace sw::metrics_test
