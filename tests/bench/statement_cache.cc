// Statement-cache benchmark (run by hand; prints, never asserts a time): what parser::analyze()
// costs per statement on a full parse, on an exact-text hit and on a normalized-text hit (same
// statement, other literal values), with SHAPES distinct ~100-byte statements cached at once, and
// what the cached entries cost in memory, and heap allocations per statement on each path
// (counted by the replaceable operator new below: deterministic, unlike the times).
//
//   build/tests/bench/bench_statement_cache [shapes] [rounds]
//
// Exits 1 when a pass meant to hit the cache did not (the cache is then too small for the
// shapes asked for, and the figures would measure parses).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "parser/analyze.h"

namespace {
uint64_t allocations = 0;  // operator new calls so far (this benchmark is single-threaded)
}  // namespace

void* operator new(size_t size) {
  ++allocations;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, size_t) noexcept { std::free(memory); }

namespace {

using Clock = std::chrono::steady_clock;
using sw::parser::analyze;
using sw::parser::cache_stats;

// Statement `shape` with literal values from `seed`: shapes differ in a column name, so each is
// its own entry in both caches; seeds differ only in the literals.
std::string statement(int shape, int seed) {
  return "SELECT id, total, note_" + std::to_string(shape) +
         " FROM bench_orders WHERE tenant_id = " + std::to_string(100000 + seed) + " AND status = 'open-" +
         std::to_string(seed % 97) + "'";
}

long rss_kib() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Mean nanoseconds per analyze() over `texts`; counts failures into `failures` and adds the
// heap allocations made to `allocated`.
template <typename Analyze>
double ns_per_statement(const std::vector<std::string>& texts, Analyze&& run, int& failures,
                        uint64_t& allocated) {
  const uint64_t allocations_before = allocations;
  const auto start = Clock::now();
  for (const auto& text : texts) failures += run(text) ? 0 : 1;
  const auto elapsed = Clock::now() - start;
  allocated += allocations - allocations_before;
  return std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(texts.size());
}

}  // namespace

int main(int argc, char** argv) {
  const int shapes = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (shapes <= 0 || rounds <= 0) {
    std::fprintf(stderr, "usage: %s [shapes > 0] [rounds > 0]\n", argv[0]);
    return 2;
  }
  std::mt19937 rng(20261202);
  std::vector<std::string> first, exact, other_values;
  for (int s = 0; s < shapes; ++s) first.push_back(statement(s, s));
  size_t bytes = 0;
  for (const auto& text : first) bytes += text.size();

  int failures = 0;
  auto cached = [](const std::string& sql) { return analyze(sql).is_ok(); };
  auto uncached = [](const std::string& sql) { return sw::parser::analyze_uncached(sql).is_ok(); };

  const long rss_before = rss_kib();
  uint64_t parse_allocs = 0, exact_allocs = 0, normalized_allocs = 0, uncached_allocs = 0;
  const double parse_ns =
      ns_per_statement(first, cached, failures, parse_allocs);  // misses: fills both caches
  const long rss_after = rss_kib();

  double exact_ns = 0, normalized_ns = 0, uncached_ns = 0;
  uint64_t exact_hits = 0, normalized_hits = 0;
  for (int round = 0; round < rounds; ++round) {
    exact = first;
    std::shuffle(exact.begin(), exact.end(), rng);
    other_values.clear();
    for (int s = 0; s < shapes; ++s) other_values.push_back(statement(s, s + (round + 1) * shapes));
    std::shuffle(other_values.begin(), other_values.end(), rng);

    auto before = cache_stats();
    exact_ns += ns_per_statement(exact, cached, failures, exact_allocs);
    exact_hits += cache_stats().exact_hits - before.exact_hits;
    before = cache_stats();
    // The allocations of the last round only: the steady state (the first hits of a shape make
    // its reusable instance).
    normalized_allocs = 0;
    normalized_ns += ns_per_statement(other_values, cached, failures, normalized_allocs);
    normalized_hits += cache_stats().normalized_hits - before.normalized_hits;
  }
  // Full parses of a sample (they are slow): the same texts, without the caches.
  std::vector<std::string> sample(first.begin(), first.begin() + std::min(shapes, 2000));
  uncached_ns = ns_per_statement(sample, uncached, failures, uncached_allocs);

  const uint64_t expected = static_cast<uint64_t>(shapes) * static_cast<uint64_t>(rounds);
  std::printf("%d distinct statements of %.0f bytes on average, %d rounds\n", shapes,
              static_cast<double>(bytes) / shapes, rounds);
  const auto per = [](uint64_t count, double statements) { return static_cast<double>(count) / statements; };
  const double passes = static_cast<double>(shapes) * rounds;
  std::printf("| path | ns per statement | allocations per statement |\n|---|---:|---:|\n");
  std::printf("| full parse (analyze_uncached) | %.0f | %.2f |\n", uncached_ns,
              per(uncached_allocs, static_cast<double>(sample.size())));
  std::printf("| first sight (parse + fill both caches) | %.0f | %.2f |\n", parse_ns,
              per(parse_allocs, shapes));
  std::printf("| exact-text hit | %.0f | %.2f |\n", exact_ns / rounds, per(exact_allocs, passes));
  std::printf("| normalized-text hit (other literal values; allocations: last round) | %.0f | %.2f |\n",
              normalized_ns / rounds, per(normalized_allocs, shapes));
  std::printf("cache memory: %ld KiB resident for %d statements (%.1f KiB each)\n", rss_after - rss_before,
              shapes, static_cast<double>(rss_after - rss_before) / shapes);
  std::printf("hits: exact %llu of %llu, normalized %llu of %llu; analyze failures %d\n",
              static_cast<unsigned long long>(exact_hits), static_cast<unsigned long long>(expected),
              static_cast<unsigned long long>(normalized_hits), static_cast<unsigned long long>(expected),
              failures);
  if (failures != 0 || exact_hits != expected || normalized_hits != expected) {
    std::fprintf(stderr, "not every cached pass hit the cache: the figures above include parses\n");
    return 1;
  }
  return 0;
}
