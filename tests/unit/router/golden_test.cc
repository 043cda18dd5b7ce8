// Runs the routing golden files tests/routing/*.route (format: golden_file.h): each case's SQL
// is analyzed and routed with route_query() against the file's config and directory, and the
// route summary must equal the expected line, through analyze()'s caches and through a fresh
// parse alike (so the normalized cache is checked on every case). A failure prints the file and line, the
// SQL, the expected and the actual route. SHARDWIRE_GOLDEN_PRINT=1 prints every case's actual route.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "golden_file.h"
#include "parser/analyze.h"

namespace {

using namespace sw::router;
using sw::router::testing::GoldenFile;

std::shared_ptr<const Directory> directory_of(const GoldenFile& file) {
  std::vector<BucketEntry> buckets(file.buckets);
  for (uint32_t b = 0; b < file.buckets; ++b) {
    buckets[b].shard = static_cast<uint16_t>(b % file.shards.size());
  }
  for (const auto& [bucket, shard] : file.moves) {
    auto it = std::find(file.shards.begin(), file.shards.end(), shard);
    if (bucket < file.buckets && it != file.shards.end()) {
      buckets[bucket].shard = static_cast<uint16_t>(it - file.shards.begin());
    }
  }
  for (uint32_t bucket : file.migrating) {
    if (bucket < file.buckets) buckets[bucket].state = BucketState::Migrating;
  }
  return std::make_shared<const Directory>(7, file.shards, std::move(buckets));
}

// `cached`: through analyze() (exact and normalized caches), else a fresh parse.
std::string actual_route(const std::string& sql, const BindValues* bind, const Directory& dir,
                         const RoutingRules& rules, bool cached) {
  auto facts = cached ? sw::parser::analyze(sql) : sw::parser::analyze_uncached(sql);
  if (!facts.is_ok()) {
    return "parse-error " + facts.status().sqlstate + " " + facts.status().message;
  }
  return route_summary(route_query(*facts.value(), bind, dir, rules), dir);
}

}  // namespace

TEST_CASE("routing golden files") {
  const std::filesystem::path dir = std::filesystem::path(SHARDWIRE_TEST_DATA) / "routing";
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".route") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  REQUIRE_MESSAGE(!paths.empty(), "no golden files in " << dir.string());
  const bool print = std::getenv("SHARDWIRE_GOLDEN_PRINT") != nullptr;

  size_t total = 0;
  for (const auto& path : paths) {
    const GoldenFile file = sw::router::testing::load_golden_file(path.string());
    REQUIRE_MESSAGE(file.error.empty(), file.error);
    const auto directory = directory_of(file);
    const RoutingRules rules(file.tables, file.default_shard, {}, true, file.references);
    for (const auto& c : file.cases) {
      ++total;
      const BindValues* bind = c.has_bind ? &c.bind : nullptr;
      const std::string actual = actual_route(c.sql, bind, *directory, rules, true);
      const std::string fresh = actual_route(c.sql, bind, *directory, rules, false);
      if (print) {
        std::cout << path.filename().string() << ":" << c.line << "\n"
                  << c.sql << "\n=> " << actual << "\n\n";
      }
      if (!print && actual != c.expected) {
        const std::string where = path.filename().string() + ":" + std::to_string(c.line);
        FAIL_CHECK(where << "\n  sql:      " << c.sql << "\n  expected: " << c.expected
                         << "\n  actual:   " << actual);
      }
      if (actual != fresh) {  // the statement caches must not change any route
        FAIL_CHECK(path.filename().string() << ":" << c.line << "\n  sql:      " << c.sql
                                            << "\n  cached:   " << actual << "\n  parsed:   " << fresh);
      }
    }
  }
  const auto stats = sw::parser::cache_stats();
  MESSAGE("golden routing cases: " << total << " in " << paths.size() << " files; analyze() "
                                   << stats.exact_hits << " exact hits, " << stats.normalized_hits
                                   << " normalized hits, " << stats.misses << " parses");
  CHECK(total > 0);
}
