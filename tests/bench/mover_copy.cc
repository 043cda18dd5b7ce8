// The mover's bulk copy on its own (mover::copy_buckets, docs/architecture.md §8.3), for
// tests/bench/copy_rate.sh: copies the rows of a bucket set of table `orders` (shard key
// tenant_id bigint) from one database to another and prints what it moved and how fast.
//
//   bench_mover_copy SOURCE_DSN TARGET_DSN BUCKET_COUNT BUCKETS [STREAMS [ROWS_PER_SEC]]
//
// BUCKETS is a comma-separated list. Prints one line:
//   rows=<n> bytes=<n> seconds=<s> rows_per_s=<r> mb_per_s=<m> relay_cpu_ms=<this process's CPU>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "mover/copier.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s SOURCE_DSN TARGET_DSN BUCKET_COUNT BUCKETS [STREAMS [ROWS_PER_SEC]]\n",
                 argv[0]);
    return 2;
  }
  std::vector<uint32_t> list;
  std::stringstream buckets(argv[4]);
  for (std::string item; std::getline(buckets, item, ',');)
    list.push_back(static_cast<uint32_t>(std::stoul(item)));
  sw::mover::CopyOptions options;
  options.source_dsn = argv[1];
  options.target_dsn = argv[2];
  options.buckets = sw::mover::BucketSet(static_cast<uint32_t>(std::stoul(argv[3])), list);
  options.streams = argc > 5 ? std::atoi(argv[5]) : 1;
  options.rows_per_sec = argc > 6 ? std::atoll(argv[6]) : 0;
  sw::config::ShardedTable orders;
  orders.name = "orders";
  orders.key = "tenant_id";
  orders.type = "bigint";
  options.tables.push_back(orders);
  const auto start = std::chrono::steady_clock::now();
  auto copied = sw::mover::copy_buckets(options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!copied) {
    std::fprintf(stderr, "bench_mover_copy: %s\n", copied.status().message.c_str());
    return 1;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                        (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
  std::printf("rows=%llu bytes=%llu seconds=%.3f rows_per_s=%.0f mb_per_s=%.2f relay_cpu_ms=%.0f\n",
              static_cast<unsigned long long>(copied->rows), static_cast<unsigned long long>(copied->bytes),
              seconds, static_cast<double>(copied->rows) / seconds,
              static_cast<double>(copied->bytes) / seconds / 1e6, cpu_ms);
  return 0;
}
