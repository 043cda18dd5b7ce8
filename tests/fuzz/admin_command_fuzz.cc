// Fuzz target: the admin console's command parser and the pure planning its mover commands run.
//
// Input: one simple-query string as an admin client sends it. parse_command() parses it; MOVE
// BUCKETS then parses its bucket list (mover::parse_bucket_list, against 4096 buckets) and
// REBALANCE plans its moves (mover::plan_rebalance for BY BUCKETS, mover::plan_rebalance_by_data
// otherwise, with uneven bucket sizes) over a small directory (64 buckets on three shards, one
// bucket MIGRATING), as the console does before it starts migrations.
//
// Invariants: a command is an error or a verb with the fields that verb uses; errors are 08P01
// (parser) or 22023 (bucket list); a parsed bucket list is ascending, unique and < bucket count;
// a rebalance plan never moves a bucket twice, never moves a MIGRATING bucket, moves a bucket
// only from the shard that owns it and only to another shard; the expected loads after a plan by
// data hold every bucket and every row once.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "admin/command.h"
#include "fuzz_check.h"
#include "mover/planner.h"
#include "router/directory.h"

namespace {

using namespace sw;

constexpr uint32_t kBucketCount = 4096;

const router::Directory& small_directory() {
  static const router::Directory directory = [] {
    std::vector<router::BucketEntry> buckets(64);
    for (uint32_t b = 0; b < buckets.size(); ++b) buckets[b].shard = static_cast<uint16_t>(b % 3);
    buckets[7].state = router::BucketState::Migrating;
    return router::Directory(1, {"s0", "s1", "s2"}, std::move(buckets));
  }();
  return directory;
}

void check_bucket_list(const std::string& text) {
  auto buckets = mover::parse_bucket_list(text, kBucketCount);
  if (!buckets) {
    FUZZ_CHECK(buckets.status().sqlstate == "22023");
    return;
  }
  FUZZ_CHECK(!buckets->empty());
  for (size_t i = 0; i < buckets->size(); ++i) {
    FUZZ_CHECK((*buckets)[i] < kBucketCount);
    if (i > 0) FUZZ_CHECK((*buckets)[i - 1] < (*buckets)[i]);
  }
}

void check_rebalance(const std::vector<std::string>& targets, bool by_buckets) {
  const router::Directory& directory = small_directory();
  mover::BucketSizes sizes;
  uint64_t rows = 0;
  for (uint32_t b = 0; b < directory.bucket_count(); ++b) {
    sizes[b] = {b % 5 == 0 ? 0u : 1u + b % 11, (1u + b % 11) * 40};
    rows += sizes[b].rows;
  }
  const auto plan = by_buckets ? mover::plan_rebalance(directory, targets, {{1, 100}, {2, 5}})
                               : mover::plan_rebalance_by_data(directory, targets, sizes);
  if (!by_buckets) {
    uint64_t buckets_after = 0, rows_after = 0;
    for (const mover::ShardLoad& load : mover::loads_after(directory, plan, sizes)) {
      buckets_after += load.buckets;
      rows_after += load.rows;
    }
    FUZZ_CHECK(buckets_after == directory.bucket_count() && rows_after == rows);
  }
  std::set<uint32_t> moved;
  for (const mover::PlannedMove& move : plan) {
    FUZZ_CHECK(move.source != move.target && !move.buckets.empty());
    const int source = directory.shard_index(move.source);
    FUZZ_CHECK(source >= 0);
    for (uint32_t bucket : move.buckets) {
      FUZZ_CHECK(bucket < directory.bucket_count());
      FUZZ_CHECK(moved.insert(bucket).second);
      FUZZ_CHECK(directory.bucket(bucket).shard == source);
      FUZZ_CHECK(directory.bucket(bucket).state == router::BucketState::Active);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sw::fuzz::ExactCopy text(std::string_view(reinterpret_cast<const char*>(data), size));
  Result<admin::Command> command = admin::parse_command(text.view());
  if (!command) {
    FUZZ_CHECK(command.status().sqlstate == "08P01");
    FUZZ_CHECK(!command.status().message.empty());
    return 0;
  }
  switch (command->verb) {
    case admin::Verb::ShowRoute: FUZZ_CHECK(!command->argument.empty()); break;
    case admin::Verb::MoveBuckets:
      FUZZ_CHECK(!command->argument.empty() && !command->shard.empty());
      check_bucket_list(command->argument);
      break;
    case admin::Verb::Rebalance:
      for (const std::string& shard : command->shards) FUZZ_CHECK(!shard.empty());
      check_rebalance(command->shards, command->by_buckets);
      break;
    default: break;
  }
  return 0;
}
