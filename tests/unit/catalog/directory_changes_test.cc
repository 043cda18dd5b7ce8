// The incremental directory load: a directory loaded earlier plus the rows changed since gives
// exactly what a whole load of the catalog's rows gives (same version, shards in the same order,
// same buckets), and the cases only a whole load can tell come back null.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "catalog/directory_loader.h"
#include "catalog/pq.h"

using namespace sw::catalog;
using sw::router::Directory;

namespace {

using DirectoryPtr = std::shared_ptr<const Directory>;

// The catalog's rows: bucket i on shards[i mod N], version 1.
std::vector<BucketRow> layout(uint32_t buckets, const std::vector<std::string>& shards) {
  std::vector<BucketRow> rows;
  rows.reserve(buckets);
  for (uint32_t b = 0; b < buckets; ++b) rows.push_back({b, shards[b % shards.size()], "ACTIVE", 1});
  return rows;
}

DirectoryPtr whole(uint64_t version, const std::vector<BucketRow>& rows,
                   const std::vector<std::string>& shards) {
  auto built = build_directory(version, rows, shards, static_cast<uint32_t>(rows.size()));
  REQUIRE(built.is_ok());
  return *built;
}

// Changes `rows` in place as one catalog transaction at `version` would, and returns the rows it
// changed (what kLoadDirectoryChangesSql reads), in no particular order.
std::vector<BucketRow> change(std::vector<BucketRow>& rows, uint64_t version,
                              const std::vector<uint32_t>& buckets, const std::string& shard,
                              const std::string& state) {
  std::vector<BucketRow> changed;
  for (uint32_t b : buckets) {
    rows[b] = {b, shard, state, static_cast<int64_t>(version)};
    changed.push_back(rows[b]);
  }
  std::shuffle(changed.begin(), changed.end(), std::mt19937(static_cast<unsigned>(version)));
  return changed;
}

// A text-format PGresult with kLoadDirectoryChangesSql's 6 columns; "" cells are NULL.
PgResultPtr changes_result(const std::vector<std::vector<std::string>>& rows) {
  PgResultPtr res(PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK));
  PGresAttDesc attrs[6] = {};
  const char* names[6] = {"version", "full_since", "bucket", "shard", "state", "version"};
  for (int i = 0; i < 6; ++i) {
    attrs[i].name = const_cast<char*>(names[i]);
    attrs[i].typlen = -1;
    attrs[i].atttypmod = -1;
  }
  REQUIRE(PQsetResultAttrs(res.get(), 6, attrs));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int c = 0; c < 6; ++c) {
      const std::string& v = rows[r][static_cast<size_t>(c)];
      REQUIRE(PQsetvalue(res.get(), static_cast<int>(r), c,
                         v.empty() ? nullptr : const_cast<char*>(v.c_str()),
                         v.empty() ? -1 : static_cast<int>(v.size())));
    }
  }
  return res;
}

}  // namespace

TEST_CASE("changes applied to a loaded directory equal a whole load, step after step") {
  const std::vector<std::string> shards = {"s0", "s1", "s2", "s3"};
  std::vector<BucketRow> rows = layout(4096, shards);
  DirectoryPtr held = whole(1, rows, shards);

  // A cutover: MIGRATING on the source, then the flip to the target; then a move back.
  struct Step {
    std::vector<uint32_t> buckets;
    std::string shard, state;
  };
  const std::vector<uint32_t> moving = {0, 4, 8, 4092};
  const std::vector<Step> steps = {{moving, "s0", "MIGRATING"},
                                   {moving, "s1", "ACTIVE"},
                                   {{1, 5}, "s1", "MIGRATING"},
                                   {{1, 5}, "s0", "ACTIVE"}};
  uint64_t version = 1;
  for (const Step& step : steps) {
    ++version;
    auto changed = change(rows, version, step.buckets, step.shard, step.state);
    auto applied = apply_directory_changes(*held, version, changed, shards);
    REQUIRE(applied.is_ok());
    REQUIRE(*applied);
    CHECK(**applied == *whole(version, rows, shards));
    held = *applied;
  }
  CHECK(held->bucket(4).shard == 1);
  CHECK(held->bucket(4).version == 3);
  CHECK(held->bucket(5).shard == 0);
  CHECK(held->bucket(5).state == sw::router::BucketState::Active);
  CHECK(held->bucket(6).version == 1);

  // Several versions missed at once (notifications lost, a stale router): the rows changed since
  // the held version carry the latest of each bucket.
  DirectoryPtr stale = whole(1, layout(4096, shards), shards);
  std::vector<BucketRow> since;
  for (const BucketRow& row : rows)
    if (row.version > 1) since.push_back(row);
  auto caught_up = apply_directory_changes(*stale, 5, since, shards);
  REQUIRE(caught_up.is_ok());
  REQUIRE(*caught_up);
  CHECK(**caught_up == *held);
}

TEST_CASE("shards named only by the catalog come and go as in a whole load") {
  const std::vector<std::string> configured = {"s0", "s1"};
  std::vector<BucketRow> rows = layout(16, configured);
  DirectoryPtr held = whole(1, rows, configured);

  // s9 (not configured) takes buckets 3 and 1: it is listed after the configured shards.
  auto changed = change(rows, 2, {3, 1}, "s9", "ACTIVE");
  auto applied = apply_directory_changes(*held, 2, changed, configured);
  REQUIRE(applied.is_ok());
  CHECK(**applied == *whole(2, rows, configured));
  CHECK((*applied)->shards() == std::vector<std::string>{"s0", "s1", "s9"});
  CHECK((*applied)->configured_count() == 2);

  // s8 takes bucket 0, before s9's buckets: a whole load lists s8 first, and so does this.
  changed = change(rows, 3, {0}, "s8", "ACTIVE");
  applied = apply_directory_changes(**applied, 3, changed, configured);
  REQUIRE(applied.is_ok());
  CHECK(**applied == *whole(3, rows, configured));
  CHECK((*applied)->shards() == std::vector<std::string>{"s0", "s1", "s8", "s9"});

  // Once s9 owns nothing it is gone from the list.
  changed = change(rows, 4, {1, 3}, "s0", "ACTIVE");
  applied = apply_directory_changes(**applied, 4, changed, configured);
  REQUIRE(applied.is_ok());
  CHECK(**applied == *whole(4, rows, configured));
  CHECK((*applied)->shards() == std::vector<std::string>{"s0", "s1", "s8"});
}

TEST_CASE("rows that do not fit the held directory need a whole load; bad values are errors") {
  const std::vector<std::string> shards = {"s0", "s1"};
  DirectoryPtr held = whole(1, layout(8, shards), shards);
  // Outside the held buckets, or one bucket twice: null, the whole load reports it.
  auto outside = apply_directory_changes(*held, 2, {{8, "s0", "ACTIVE", 2}}, shards);
  REQUIRE(outside.is_ok());
  CHECK_FALSE(*outside);
  auto twice = apply_directory_changes(*held, 2, {{3, "s0", "ACTIVE", 2}, {3, "s1", "ACTIVE", 2}}, shards);
  REQUIRE(twice.is_ok());
  CHECK_FALSE(*twice);
  // A value a whole load refuses is refused the same way.
  auto state = apply_directory_changes(*held, 2, {{3, "s0", "GONE", 2}}, shards);
  REQUIRE_FALSE(state.is_ok());
  CHECK(state.status().message.find("unknown state \"GONE\" for bucket 3") != std::string::npos);
}

TEST_CASE("parse_directory_changes: changed rows, nothing changed, malformed values") {
  auto rows = parse_directory_changes(
      changes_result({{"7", "2", "5", "s1", "MIGRATING", "7"}, {"7", "2", "9", "s0", "ACTIVE", "6"}}).get());
  REQUIRE(rows.is_ok());
  CHECK(rows->version == 7);
  CHECK(rows->full_since == 2);
  REQUIRE(rows->rows.size() == 2);
  CHECK(rows->rows[0].bucket == 5);
  CHECK(rows->rows[0].shard == "s1");
  CHECK(rows->rows[0].state == "MIGRATING");
  CHECK(rows->rows[1].version == 6);

  auto none = parse_directory_changes(changes_result({{"7", "7", "", "", "", ""}}).get());
  REQUIRE(none.is_ok());
  CHECK(none->version == 7);
  CHECK(none->full_since == 7);
  CHECK(none->rows.empty());

  CHECK_FALSE(parse_directory_changes(changes_result({}).get()).is_ok());
  CHECK_FALSE(parse_directory_changes(changes_result({{"7", "", "5", "s1", "ACTIVE", "7"}}).get()).is_ok());
  CHECK_FALSE(
      parse_directory_changes(changes_result({{"7", "2", "five", "s1", "ACTIVE", "7"}}).get()).is_ok());
  CHECK_FALSE(parse_directory_changes(
                  changes_result({{"7", "2", "", "", "", ""}, {"7", "2", "5", "s1", "ACTIVE", "7"}}).get())
                  .is_ok());
}
