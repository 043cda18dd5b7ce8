// Building directory snapshots from catalog rows: the layout, every validation error, and the
// parsing of the catalog's result set (synthesized with libpq's PGresult builder).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "catalog/directory_loader.h"
#include "catalog/pq.h"

using namespace sw::catalog;
using sw::router::BucketState;

namespace {

std::vector<BucketRow> mod_rows(uint32_t buckets, const std::vector<std::string>& shards,
                                int64_t version = 1) {
  std::vector<BucketRow> rows;
  for (uint32_t b = 0; b < buckets; ++b) rows.push_back({b, shards[b % shards.size()], "ACTIVE", version});
  return rows;
}

std::string error_of(const sw::Result<std::shared_ptr<const sw::router::Directory>>& r) {
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().fault == sw::Fault::Config);
  return r.status().message;
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// A text-format PGresult with the 5 columns of kLoadDirectorySql; "" cells are NULL.
sw::catalog::PgResultPtr make_result(const std::vector<std::vector<std::string>>& rows) {
  PgResultPtr res(PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK));
  PGresAttDesc attrs[5] = {};
  const char* names[5] = {"version", "bucket", "shard", "state", "version"};
  for (int i = 0; i < 5; ++i) {
    attrs[i].name = const_cast<char*>(names[i]);
    attrs[i].format = 0;
    attrs[i].typlen = -1;
    attrs[i].atttypmod = -1;
  }
  REQUIRE(PQsetResultAttrs(res.get(), 5, attrs));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int c = 0; c < 5; ++c) {
      const std::string& v = rows[r][static_cast<size_t>(c)];
      REQUIRE(PQsetvalue(res.get(), static_cast<int>(r), c,
                         v.empty() ? nullptr : const_cast<char*>(v.c_str()),
                         v.empty() ? -1 : static_cast<int>(v.size())));
    }
  }
  return res;
}

}  // namespace

TEST_CASE("the initial layout: bucket i on shard i mod N, rows in any order") {
  std::vector<std::string> shards = {"s0", "s1", "s2"};
  auto rows = mod_rows(4096, shards);
  std::shuffle(rows.begin(), rows.end(), std::mt19937(7));
  rows[10].state = "MIGRATING";
  rows[10].version = 5;
  auto dir = build_directory(5, rows, shards, 4096);
  REQUIRE(dir.is_ok());
  const auto& d = **dir;
  CHECK(d.version() == 5);
  CHECK(d.bucket_count() == 4096);
  CHECK(d.shards() == shards);
  uint32_t migrating = rows[10].bucket;
  for (uint32_t b = 0; b < 4096; ++b) {
    CHECK(d.bucket(b).shard == b % 3);
    CHECK(d.bucket(b).state == (b == migrating ? BucketState::Migrating : BucketState::Active));
    CHECK(d.bucket(b).version == (b == migrating ? 5u : 1u));
  }
  CHECK(d.owned_by(0) == 1366);
  // Equal to router::Directory::initial for the unchanged layout.
  auto initial = sw::router::Directory::initial(4096, shards);
  auto same = build_directory(1, mod_rows(4096, shards), shards, 4096);
  REQUIRE(same.is_ok());
  for (uint32_t b = 0; b < 4096; ++b) CHECK((*same)->bucket(b).shard == initial->bucket(b).shard);
}

TEST_CASE("a shard the config lacks is kept after the configured ones; the others stay routable") {
  std::vector<std::string> shards = {"s0", "s1"};
  auto rows = mod_rows(8, {"s0", "s1", "s9"});  // buckets 2 and 5 on s9
  auto built = build_directory(3, rows, shards, 8);
  REQUIRE(built.is_ok());
  const auto& dir = **built;
  CHECK(dir.shards() == std::vector<std::string>{"s0", "s1", "s9"});
  CHECK(dir.configured_count() == 2);
  CHECK_FALSE(dir.all_configured());
  CHECK_FALSE(dir.configured(dir.bucket(2).shard));
  CHECK(dir.configured(dir.bucket(3).shard));
  CHECK(unconfigured_shards(dir) == std::vector<std::string>{"s9"});

  // A reload that adds s9 makes it configured, same version and owners.
  auto added = rebase_directory(dir, {"s0", "s1", "s9"});
  REQUIRE(added.is_ok());
  CHECK((*added)->all_configured());
  CHECK((*added)->version() == 3);
  for (uint32_t b = 0; b < 8; ++b)
    CHECK((*added)->shard_name((*added)->bucket(b).shard) == dir.shard_name(dir.bucket(b).shard));
  // A reload that adds a shard owning nothing yet lists it (REBALANCE targets it).
  auto grown = rebase_directory(**added, {"s0", "s1", "s9", "s4"});
  REQUIRE(grown.is_ok());
  CHECK((*grown)->shards() == std::vector<std::string>{"s0", "s1", "s9", "s4"});
  CHECK((*grown)->owned_by(3) == 0);
  CHECK((*grown)->all_configured());
}

TEST_CASE("directory validation errors name the problem") {
  std::vector<std::string> shards = {"s0", "s1"};
  CHECK(has(error_of(build_directory(1, mod_rows(1024, shards), shards, 4096)),
            "the catalog directory has 1024 buckets but sharding.buckets is 4096"));

  auto rows = mod_rows(8, shards);
  rows[5].bucket = 4;
  CHECK(has(error_of(build_directory(1, rows, shards, 8)), "lists bucket 4 twice"));

  rows = mod_rows(8, shards);
  rows[7].bucket = 8;
  CHECK(has(error_of(build_directory(1, rows, shards, 8)), "bucket 8, outside 0..7"));
  rows[7].bucket = -1;
  CHECK(has(error_of(build_directory(1, rows, shards, 8)), "bucket -1, outside 0..7"));

  rows = mod_rows(8, shards);
  rows[2].state = "GONE";
  CHECK(has(error_of(build_directory(1, rows, shards, 8)), "unknown state \"GONE\" for bucket 2"));

  rows = mod_rows(8, shards);
  rows[1].version = -3;
  CHECK(has(error_of(build_directory(1, rows, shards, 8)), "negative version for bucket 1"));

  CHECK(has(error_of(build_directory(1, {}, {}, 8)), "no shards"));
}

TEST_CASE("shard_names keeps config order") {
  sw::config::Config cfg;
  cfg.shards.push_back({"b", "dbname=b", {}});
  cfg.shards.push_back({"a", "dbname=a", {}});
  CHECK(cfg.shard_names() == std::vector<std::string>{"b", "a"});
}

TEST_CASE("parse_directory_result: rows, the empty catalog, malformed values") {
  auto ok = parse_directory_result(
      make_result({{"3", "0", "s0", "ACTIVE", "1"}, {"3", "1", "s1", "MIGRATING", "3"}}).get());
  REQUIRE(ok.is_ok());
  CHECK(ok->version == 3);
  CHECK(ok->has_directory);
  REQUIRE(ok->rows.size() == 2);
  CHECK(ok->rows[1].bucket == 1);
  CHECK(ok->rows[1].shard == "s1");
  CHECK(ok->rows[1].state == "MIGRATING");
  CHECK(ok->rows[1].version == 3);

  auto empty = parse_directory_result(make_result({{"0", "", "", "", ""}}).get());
  REQUIRE(empty.is_ok());
  CHECK_FALSE(empty->has_directory);
  CHECK(empty->version == 0);
  CHECK(empty->rows.empty());

  CHECK_FALSE(parse_directory_result(make_result({}).get()).is_ok());
  CHECK_FALSE(parse_directory_result(make_result({{"x", "0", "s0", "ACTIVE", "1"}}).get()).is_ok());
  CHECK_FALSE(parse_directory_result(make_result({{"1", "zero", "s0", "ACTIVE", "1"}}).get()).is_ok());
  CHECK_FALSE(parse_directory_result(make_result({{"1", "0", "s0", "ACTIVE", ""}}).get()).is_ok());
}
